"""`GpuMonitoring` args for a program's own cluster: which exporter to scrape, the integration and the
monitoring settings (checked by the stack config's `MonitoringConfig`, so each rule lives in one place)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from ..argcheck import ArgsError, camel, plain, snake
from ..catalog.platforms import GPUPLANE_SYSTEM_POOL, SystemPods
from ..config.load import key_path
from ..config.monitoring import MonitoringConfig
from ..nvidia import dcgm, operator
from .rules import RuleSettings
from .scrape import ScrapeTarget, stack_scrape_yaml
from .stack import GpuMonitoringArgs

EXPORTERS: Mapping[str, Callable[[str], ScrapeTarget]] = MappingProxyType(
    {
        # The standalone chart (`DcgmExporter`) in its namespace.
        "dcgm-exporter": lambda ns: ScrapeTarget(
            namespace=ns,
            service_labels=dcgm.service_labels(),
            port_name=dcgm.METRICS_PORT_NAME,
            pod_labels=dcgm.pod_labels(),
        ),
        # The gpu-operator's own exporter (`GpuOperator`), in the operator's namespace.
        "gpu-operator": lambda ns: ScrapeTarget(
            namespace=ns,
            service_labels=operator.EXPORTER_LABELS,
            port_name=operator.EXPORTER_PORT_NAME,
            pod_labels=operator.EXPORTER_LABELS,
        ),
    }
)
"""Exporter kind -> where its metrics are, given its namespace."""


def monitoring_args(
    cluster: str,
    exporter: str,
    *,
    namespace: str | None = None,
    region: str | None = None,
    system: SystemPods = GPUPLANE_SYSTEM_POOL,
    **settings: Any,
) -> GpuMonitoringArgs:
    """`GpuMonitoringArgs` for `exporter` (`dcgm-exporter` or `gpu-operator`) in `namespace` (default:
    the exporter's own), on cluster `cluster`. `settings` are `MonitoringConfig`'s keys in snake_case
    (`integration`, `selector_labels`, `scrape_interval`, `prometheus_operator_crds`, ...). Series get a
    `cluster` label, and a `region` label only when `region` is given.

    Raises `ArgsError` naming every bad argument."""
    problems = []
    if exporter not in EXPORTERS:
        problems.append(("exporter", f"{exporter!r} is not one of {list(EXPORTERS)}"))
    try:
        m = MonitoringConfig.model_validate({camel(k): plain(v) for k, v in settings.items()})
    except ValidationError as exc:
        for e in exc.errors():
            problems.append((snake(key_path(tuple(e["loc"])).removeprefix("gpuplane:")), snake(e["msg"])))
    if problems:
        raise ArgsError("GpuMonitoring args", problems)
    default_ns = m.namespace if exporter == "dcgm-exporter" else operator.NAMESPACE
    labels = {"cluster": cluster, **({"region": region} if region else {})}
    target = replace(EXPORTERS[exporter](namespace or default_ns), static_labels=labels)
    return GpuMonitoringArgs(
        cluster=cluster,
        integration=m.integration,
        target=target,
        settings=RuleSettings(
            idle_window=m.idleWindow,
            idle_percent=m.idlePercent,
            temperature_celsius=m.temperatureCelsius,
            memory_ratio=m.memoryRatio,
        ),
        selector_labels=m.selectorLabels,
        interval=m.scrapeInterval,
        timeout=m.scrapeTimeout,
        install_namespace=m.installNamespace,
        system=system,
        prometheus_operator_crds=m.prometheusOperatorCrds,
    )


def scrape_config(args: GpuMonitoringArgs) -> str:
    """The `gpu-metrics` Prometheus scrape job for these args, as YAML."""
    return stack_scrape_yaml(args.target, args.interval, args.timeout)
