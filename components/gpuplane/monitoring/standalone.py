"""`GpuMonitoring` on a program's own cluster: its typed args (`GpuMonitoringArgs`) resolved into what the
component builds, checked by the stack config's `MonitoringConfig` so each rule lives in one place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from ..args.checks import ArgsError, plain, shape_problems, snake
from ..args.deferred import Deferred
from ..args.platform import GpuMonitoringArgs, MonitoringArgs, to_config
from ..catalog.platforms import GPUPLANE_SYSTEM_POOL, SystemPods
from ..config.base import DNS_LABEL
from ..config.load import key_path
from ..config.monitoring import MonitoringConfig
from ..nvidia import dcgm, operator
from .cost import CostSettings, cost_summary, pool_cost_of
from .rules import rule_groups, rules_file_yaml
from .scrape import ScrapeTarget, stack_scrape_yaml
from .stack import MonitoringSpec

DEVICE_PLUGIN = ScrapeTarget(
    namespace="kube-system",
    service_labels={},
    port_name="",
    pod_labels={"k8s-app": "nvidia-gpu-device-plugin"},
    role="pod",
    pod_port=2112,
)
"""GKE's nvidia-gpu-device-plugin DaemonSet pods, which serve GPU metrics on :2112/metrics
(GoogleCloudPlatform/container-engine-accelerators pkg/gpu/nvidia/metrics)."""

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
        "gke-device-plugin": lambda ns: replace(DEVICE_PLUGIN, namespace=ns),
    }
)
"""Exporter kind -> where its metrics are, given its namespace."""
DEFAULT_NAMESPACES: Mapping[str, str] = MappingProxyType(
    {"gpu-operator": operator.NAMESPACE, "gke-device-plugin": DEVICE_PLUGIN.namespace}
)
"""Exporter kind -> its namespace (dcgm-exporter: `monitoring.namespace`)."""
PLATFORM_OF: Mapping[str, str] = MappingProxyType({"gke-device-plugin": "gke-autopilot"})
"""Exporter kind -> the platform whose label model applies (`labels.PLATFORM_OVERRIDES`); others: per integration."""


def spec_of(where: str, args: GpuMonitoringArgs) -> tuple[MonitoringSpec, Deferred]:
    """`GpuMonitoring`'s typed args resolved (an Output cluster or region label is deferred). Raises
    `ArgsError` naming every bad argument."""
    from .wiring import settings_for

    problems: list[tuple[str, str]] = []
    deferred = Deferred()
    exporter = str(plain(args.get("exporter") or "dcgm-exporter"))
    if exporter not in EXPORTERS:
        problems.append(("exporter", f"{exporter!r} is not one of {list(EXPORTERS)}"))
    cluster = deferred.value(args.get("cluster"), "gpuplane-arg-{}z")
    if cluster is None:
        problems.append(("cluster", "required argument is missing"))
    elif not isinstance(cluster, str) or not __import__("re").match(DNS_LABEL, cluster) or len(cluster) > 63:
        problems.append(("cluster", f"{cluster!r} is not a DNS label"))
    region = deferred.value(args.get("region"), "gpuplane-arg-{}z")
    # `monitoring` is checked by its config model below, which names its unknown keys
    problems += shape_problems({k: v for k, v in args.items() if k != "monitoring"}, GpuMonitoringArgs)
    # Undeclared keys in `monitoring`, with the closest declared one; the config model checks the rest.
    settings = dict(args.get("monitoring") or {})
    misspelt = shape_problems(settings, MonitoringArgs, "monitoring")
    problems += misspelt
    for path, _ in misspelt:
        settings.pop(path.removeprefix("monitoring."), None)
    try:
        m = MonitoringConfig.model_validate(to_config(settings))
    except ValidationError as exc:
        for e in exc.errors():
            problems.append(
                ("monitoring." + snake(key_path(tuple(e["loc"])).removeprefix("gpuplane:")), snake(e["msg"]))
            )
    pools = []
    for i, entry in enumerate(args.get("gpu_prices") or []):
        pool, bad = pool_cost_of(entry if isinstance(entry, Mapping) else {}, f"gpu_prices[{i}]")
        problems += bad
        pools += [pool] if pool is not None else []
    if problems:
        raise ArgsError(where, problems)
    cost = CostSettings(str(cluster), tuple(pools)) if pools else None
    default_ns = DEFAULT_NAMESPACES.get(exporter, m.namespace)
    labels = {"cluster": cluster, **({"region": region} if region else {})}
    # An Output namespace (`DcgmExporter(...).namespace`) stands in as a token until the children register.
    namespace = deferred.value(args.get("exporter_namespace"), "gpuplane-arg-{}z") or default_ns
    target = replace(EXPORTERS[exporter](namespace), static_labels=labels)
    selector = args.get("system_node_selector")
    system = GPUPLANE_SYSTEM_POOL if selector is None else SystemPods(node_selector=dict(selector))
    spec = MonitoringSpec(
        cluster=cluster,
        integration=m.integration,
        target=target,
        settings=settings_for(PLATFORM_OF.get(exporter, ""), m, target, cost),
        selector_labels=m.selectorLabels,
        interval=m.scrapeInterval,
        timeout=m.scrapeTimeout,
        install_namespace=m.installNamespace,
        system=system,
        prometheus_operator_crds=m.prometheusOperatorCrds,
    )
    return spec, deferred


def outputs_of(spec: MonitoringSpec) -> dict[str, Any]:
    """The component's outputs: the scrape job, the rules file, the integration and what the cost rules need."""
    return {
        "scrape_config": stack_scrape_yaml(spec.target, spec.interval, spec.timeout),
        "prometheus_rules": rules_file_yaml(rule_groups(spec.settings)),
        "integration": spec.integration,
        "gpu_cost": cost_summary(spec.settings.cost, spec.integration),
    }


def monitoring_args(
    cluster: str,
    exporter: str,
    *,
    namespace: str | None = None,
    region: str | None = None,
    system: SystemPods = GPUPLANE_SYSTEM_POOL,
    **settings: Any,
) -> GpuMonitoringArgs:
    """Older form of `GpuMonitoringArgs`: `settings` are `MonitoringArgs` keys (`integration`,
    `selector_labels`, ...). Checked now; raises `ArgsError` naming every bad argument."""
    args: GpuMonitoringArgs = {"cluster": cluster, "exporter": exporter, "monitoring": MonitoringArgs(**settings)}  # type: ignore[typeddict-item]
    if namespace:
        args["exporter_namespace"] = namespace
    if region:
        args["region"] = region
    if system is not GPUPLANE_SYSTEM_POOL:
        args["system_node_selector"] = dict(system.node_selector)
    spec_of("GpuMonitoring args", args)
    return args


def scrape_config(args: GpuMonitoringArgs) -> str:
    """The `gpu-metrics` Prometheus scrape job for these (plain) args, as YAML (also `GpuMonitoring.scrape_config`)."""
    return str(outputs_of(spec_of("GpuMonitoring args", args)[0])["scrape_config"])
