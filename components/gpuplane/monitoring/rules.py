"""GPU alerting and recording rules on DCGM metric names (dcgm-exporter's default counters), or on
GKE's device-plugin metrics where DCGM is not available (Autopilot without managed DCGM).

One set of rule groups serves every integration: a rules file for a plain Prometheus, or the
`spec.groups` of a PrometheusRule. ECC counters are not in dcgm-exporter's default counter lists, so
memory errors are watched through the row-remap counters, which are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..text import yamltext
from .cost import GPU_RESOURCES, CostSettings, cost_group, price_group
from .labels import SCRAPE_CONFIG, WORKLOAD, LabelModel
from .scrape import JOB_NAME

METRICS_USED: tuple[str, ...] = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
)
"""DCGM fields the rules and dashboard read; tests check each is in dcgm-exporter's default counters."""


@dataclass(frozen=True)
class MetricSet:
    """Metric names of one GPU metrics source."""

    util: str
    """Per-GPU utilisation (%) carrying the using pod's `namespace`/`pod` labels."""
    util_node: str
    """Per-GPU utilisation (%) for node averages."""
    memory_ratio: str
    """Expression: used / total GPU memory."""
    gpu_label: str
    """Label naming the GPU on its node."""
    health: bool
    """The source has XID, temperature and row-remap fields."""


METRIC_SETS = {
    "dcgm": MetricSet(
        util="DCGM_FI_DEV_GPU_UTIL",
        util_node="DCGM_FI_DEV_GPU_UTIL",
        memory_ratio="DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)",
        gpu_label="gpu",
        health=True,
    ),
    # GKE's nvidia-gpu-device-plugin on :2112 (container-engine-accelerators, pkg/gpu/nvidia/metrics).
    "gke-device-plugin": MetricSet(
        util="duty_cycle",
        util_node="duty_cycle_gpu_node",
        memory_ratio="memory_used_gpu_node / memory_total_gpu_node",
        gpu_label="accelerator_id",
        health=False,
    ),
}
"""Metrics source -> names. Rules and the dashboard are written once against these."""


@dataclass(frozen=True)
class ExporterPods:
    """The exporter's DaemonSet, for the kube-state-metrics alert on GPU nodes without a running exporter pod."""

    namespace: str
    daemonset: str


@dataclass(frozen=True)
class RuleSettings:
    """Thresholds and the label model for the GPU rules."""

    labels: LabelModel = SCRAPE_CONFIG
    """Which labels the stored series carry (`labels.label_model`): node label, workload labels, metric set."""
    idle_window: str = "30m"
    """How long an allocated GPU must stay under `idle_percent` before the idle alert fires."""
    idle_percent: float = 5.0
    temperature_celsius: float = 85.0
    memory_ratio: float = 0.95
    job: str = JOB_NAME
    node_condition: str = ""
    """The node condition the platform sets for the same GPU faults (`catalog.health`), named on the health
    alerts so a responder finds the repair that follows; empty: none."""
    exporter_pods: ExporterPods | None = None
    """Set where kube-state-metrics runs (`install`): adds `GpuNodeWithoutExporter`."""
    cost: CostSettings | None = None
    """The pools and their prices: adds the price and cost recording groups (`cost.py`)."""

    @property
    def node_label(self) -> str:
        return self.labels.node

    @property
    def metrics(self) -> str:
        return self.labels.metrics


def workload(expr: str, labels: LabelModel) -> str:
    """`expr` with the workload labels under their canonical names (`namespace`, `pod`, `container`), copied by
    `label_replace` from where the integration stores them (GMP: `exported_namespace`)."""
    for canonical in WORKLOAD:
        stored = labels.stored(canonical)
        if stored != canonical:
            expr = f'label_replace({expr}, "{canonical}", "$1", "{stored}", "(.*)")'
    return expr


def allocated(metric: str, labels: LabelModel) -> str:
    """Series of GPUs a pod holds (dcgm-exporter sets `pod` only then), with canonical workload labels."""
    return workload(f'{metric}{{{labels.stored("pod")}!=""}}', labels)


def _alert(
    name: str, expr: str, for_: str, severity: str, summary: str, description: str, condition: str = ""
) -> dict[str, Any]:
    annotations = {"summary": summary, "description": description}
    if condition:
        annotations["node_condition"] = condition
    return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": severity}, "annotations": annotations}


def rule_groups(s: RuleSettings) -> list[dict[str, Any]]:
    """Prometheus rule groups: GPU health alerts, the idle-allocated (cost) alert, utilisation records."""
    m, n = METRIC_SETS[s.metrics], s.node_label
    where = f"{{{{ $labels.{m.gpu_label} }}}} on {{{{ $labels.{n} }}}}"
    alerts = [
        _alert(
            "GpuMetricsExporterDown",
            f'up{{job="{s.job}"}} == 0',
            "5m",
            "warning",
            "GPU metrics exporter is down",
            f"GPU metrics target {{{{ $labels.instance }}}} of job {s.job} has been unreachable for 5 minutes.",
        ),
    ]
    if m.health:
        alerts += [
            _alert(
                "GpuXidError",
                # The gauge keeps the last XID; alert while a new one is recent, with its code as value.
                "(DCGM_FI_DEV_XID_ERRORS != 0) and (changes(DCGM_FI_DEV_XID_ERRORS[10m]) > 0)",
                "0m",
                "critical",
                "GPU reported an XID error",
                f"GPU {where} reported XID {{{{ $value }}}}.",
                s.node_condition,
            ),
            _alert(
                "GpuTemperatureHigh",
                f"DCGM_FI_DEV_GPU_TEMP > {s.temperature_celsius:g}",
                "5m",
                "warning",
                "GPU temperature is high",
                f"GPU {where} is at {{{{ $value }}}} C.",
            ),
        ]
    alerts.append(
        _alert(
            "GpuMemoryNearlyFull",
            f"{m.memory_ratio} > {s.memory_ratio:g}",
            "10m",
            "warning",
            "GPU memory is nearly full",
            f"GPU {where} has used {{{{ $value | humanizePercentage }}}} of its memory for 10 minutes.",
        )
    )
    if m.health:
        alerts += [
            _alert(
                "GpuRowRemapFailure",
                "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0",
                "0m",
                "critical",
                "GPU memory row remapping failed",
                f"GPU {where} could not remap a faulty memory row; drain the node.",
                s.node_condition,
            ),
            _alert(
                "GpuUncorrectableRemappedRows",
                "increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS[1h]) > 0",
                "0m",
                "warning",
                "GPU remapped rows after uncorrectable memory errors",
                f"GPU {where} remapped rows after uncorrectable errors; it needs a reset.",
                s.node_condition,
            ),
        ]
    alerts.append(
        _alert(
            "GpuAllocatedButIdle",
            f"{allocated(m.util, s.labels)} < {s.idle_percent:g}",
            s.idle_window,
            "info",
            "A GPU is allocated to a pod but idle",
            f"Pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} holds GPU {where} below {s.idle_percent:g}% "
            f"utilisation for {s.idle_window}: rightsize it.",
        )
    )
    if s.exporter_pods is not None:
        alerts.append(exporter_absent_alert(s.exporter_pods))
    c, used = s.labels.cluster, allocated(m.util, s.labels)
    records = [
        {"record": "gpuplane:gpu_utilization:avg_by_node", "expr": f"avg by ({c}, {n}) ({m.util_node})"},
        {"record": "gpuplane:gpu_utilization:avg_by_namespace", "expr": f"avg by ({c}, namespace) ({used})"},
        {"record": "gpuplane:gpu_utilization:avg_by_pod", "expr": f"avg by ({c}, namespace, pod) ({used})"},
        {"record": "gpuplane:gpus_allocated:count_by_namespace", "expr": f"count by ({c}, namespace) ({used})"},
    ]
    groups = [
        {"name": "gpuplane-gpu-alerts", "rules": alerts},
        {"name": "gpuplane-gpu-utilization", "interval": "1m", "rules": records},
    ]
    if s.cost is not None:
        groups += [price_group(s.cost), cost_group(s.labels, m.util, s.idle_window, s.idle_percent)]
    return groups


def exporter_absent_alert(pods: ExporterPods) -> dict[str, Any]:
    """GPU nodes (kube-state-metrics: GPU or MIG capacity) without a Running pod of the exporter's DaemonSet
    (`kube_pod_info` joined with `kube_pod_status_phase`). Without an exporter pod there is no target, so
    `up` has no series and `GpuMetricsExporterDown` cannot fire (kube-state-metrics docs: node and pod metrics)."""
    owner = f'created_by_kind="DaemonSet", created_by_name="{pods.daemonset}"'
    exporter = f'kube_pod_info{{namespace="{pods.namespace}", {owner}}}'
    expr = (
        f"(max by (node) (kube_node_status_capacity{{{GPU_RESOURCES}}}) > 0) unless on (node) "
        f'({exporter} * on (namespace, pod) group_left () (kube_pod_status_phase{{phase="Running"}} == 1))'
    )
    return _alert(
        "GpuNodeWithoutExporter",
        expr,
        "15m",
        "warning",
        "GPU node has no running GPU metrics exporter",
        f"Node {{{{ $labels.node }}}} has GPUs but no Running {pods.namespace}/{pods.daemonset} pod: its GPUs report "
        "no metrics, so no GPU alert can fire for it.",
    )


def rules_file_yaml(groups: list[dict[str, Any]]) -> str:
    """A Prometheus rules file (`rule_files:` entry)."""
    return yamltext.dump({"groups": groups}, sort_keys=False, width=120)


def prometheus_rule_manifest(namespace: str, labels: dict[str, str], groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The same groups as a prometheus-operator PrometheusRule."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "gpuplane-gpu-rules", "namespace": namespace, "labels": dict(labels)},
        "spec": {"groups": groups},
    }
