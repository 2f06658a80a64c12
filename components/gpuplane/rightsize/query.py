"""The PromQL `gpuplane rightsize` sends, built from the stack's label model (`monitoring.labels`), so one set of
queries reads every integration: the GPU series' node, cluster and workload labels are wherever the
integration stores them (GKE Managed Prometheus: the workload's namespace in `exported_namespace`), and
`rules.workload` copies them to their canonical names before anything groups by them.

Per GPU (or MIG instance) a pod held in the window, grouped by `series_key`: peak and p95 utilisation, peak
memory, samples, and the first and last sample's time (a subquery at `step`). Per pool: the most nodes it had
and the most that held a GPU of a pod. Which node is in which pool comes from kube-state-metrics'
`kube_node_labels`, selected by the pool's node-affinity expressions exactly as the cost rules'
`gpuplane:node_pool:info` selects them (`monitoring.cost.node_matchers`: `gpuplane.io/pool` on managed node
groups, `cloud.google.com/gke-nodepool` on GKE, `karpenter.sh/nodepool` on Karpenter, ...), joined to the GPU
series on the node's name. kube-state-metrics exposes those labels only when allowed
(`--metric-labels-allowlist`, `monitoring.cost.allowlist_flag`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..monitoring.cost import node_matchers
from ..monitoring.labels import LabelModel
from ..monitoring.rules import METRIC_SETS, workload
from .rules import UTIL_QUANTILE


@dataclass(frozen=True)
class UsageMetrics:
    """The per-workload memory series of one metrics source (utilisation is `rules.METRIC_SETS[...].util`)."""

    memory: str
    """Used GPU memory of the GPU a pod holds, carrying the pod's workload labels."""
    per_gib: float
    """Units of `memory` in one GiB."""
    model_label: str
    """Label holding the GPU's product name (NVML)."""
    mig_labels: tuple[str, ...]
    """Labels telling MIG instances of one GPU apart (instance id, profile)."""
    source: str


USAGE: Mapping[str, UsageMetrics] = MappingProxyType(
    {
        "dcgm": UsageMetrics(
            memory="DCGM_FI_DEV_FB_USED",
            per_gib=1024.0,
            model_label="modelName",
            mig_labels=("GPU_I_ID", "GPU_I_PROFILE"),
            source="dcgm-exporter default counters: DCGM_FI_DEV_FB_USED in MiB; MIG instances carry GPU_I_ID and "
            "GPU_I_PROFILE (internal/pkg/rendermetrics)",
        ),
        "gke-device-plugin": UsageMetrics(
            memory="memory_used",
            per_gib=float(2**30),
            model_label="model",
            mig_labels=(),
            source="container-engine-accelerators pkg/gpu/nvidia/metrics/metrics.go: memory_used in bytes per "
            "container, with namespace, pod, container, accelerator_id, model",
        ),
    }
)
"""Metrics source (`LabelModel.metrics`) -> its memory series."""

KSM_NODE = "node"
"""kube-state-metrics' label naming the node on `kube_node_labels`."""
POOL = "pool"
"""The label the node -> pool map adds (as the cost rules' `gpuplane:node_pool:info`)."""


@dataclass(frozen=True)
class PoolNodes:
    """One pool and the node-affinity expressions that select its nodes (`scheduling.placement.affinity_of`)."""

    pool: str
    affinity: tuple[Mapping[str, object], ...]

    @property
    def matchers(self) -> str:
        return node_matchers(self.affinity)


def series_key(labels: LabelModel) -> tuple[str, ...]:
    """Labels that tell one GPU (or MIG instance) held by one pod apart, under their canonical names."""
    metrics, usage = METRIC_SETS[labels.metrics], USAGE[labels.metrics]
    return (
        labels.cluster,
        labels.node,
        metrics.gpu_label,
        *usage.mig_labels,
        usage.model_label,
        "namespace",
        "pod",
    )


def selector(labels: LabelModel, clusters: Sequence[str], held: bool = True) -> str:
    """Matchers for the stack's clusters' GPU series (`held`: only those a pod holds)."""
    matchers = [f'{labels.cluster}=~"{"|".join(clusters)}"']
    if held:
        matchers.append(f'{labels.stored("pod")}!=""')
    return "{" + ", ".join(matchers) + "}"


@dataclass(frozen=True)
class Window:
    """The range the queries cover."""

    text: str
    """As the user gave it (`7d`): the range selector's duration."""
    seconds: float
    step_seconds: int
    """Subquery resolution (first/last sample, pool peaks)."""

    @property
    def step(self) -> str:
        return f"{self.step_seconds}s"


def series_queries(labels: LabelModel, clusters: Sequence[str], window: Window) -> dict[str, str]:
    """Name -> instant query, one sample per GPU a pod held, each grouped by `series_key`."""
    util = METRIC_SETS[labels.metrics].util
    usage = USAGE[labels.metrics]
    held = selector(labels, clusters)
    by = ", ".join(series_key(labels))
    w, step = window.text, window.step

    def per_series(inner: str, agg: str = "max") -> str:
        return f"{agg} by ({by}) ({workload(inner, labels)})"

    return {
        "utilPeak": per_series(f"max_over_time({util}{held}[{w}])"),
        "utilP95": per_series(f"quantile_over_time({UTIL_QUANTILE:g}, {util}{held}[{w}])"),
        "samples": per_series(f"count_over_time({util}{held}[{w}])"),
        "first": per_series(f"min_over_time(timestamp({util}{held})[{w}:{step}])", "min"),
        "last": per_series(f"max_over_time(timestamp({util}{held})[{w}:{step}])"),
        "memoryPeakGib": per_series(f"max_over_time({usage.memory}{held}[{w}])") + f" / {usage.per_gib:.0f}",
    }


def _on_node(expr: str, labels: LabelModel) -> str:
    """`expr` with its node label copied to `node`, as kube-state-metrics names it."""
    if labels.node == KSM_NODE:
        return expr
    return f'label_replace({expr}, "{KSM_NODE}", "$1", "{labels.node}", "(.*)")'


def pool_map(labels: LabelModel, pools: Sequence[PoolNodes], window: str = "") -> str:
    """Node -> pool series (`node`, the cluster label where kube-state-metrics' series carry one, `pool`), at
    each instant, or over `window` (every node that was there at some time in it)."""
    parts = []
    for p in pools:
        nodes = f"kube_node_labels{{{p.matchers}}}"
        if window:
            nodes = f"max_over_time({nodes}[{window}])"
        parts.append(f'label_replace(max by ({KSM_NODE}, {labels.cluster}) ({nodes}), "{POOL}", "{p.pool}", "", "")')
    return " or ".join(parts) if parts else "vector(0) == 1"


def pool_queries(
    labels: LabelModel, clusters: Sequence[str], window: Window, pools: Sequence[PoolNodes]
) -> dict[str, str]:
    """Name -> instant query about pools: the node -> pool map over the window, each pool's peak node count,
    and its peak count of nodes with (and of GPUs in) a pod's hands."""
    metrics = METRIC_SETS[labels.metrics]
    usage = USAGE[labels.metrics]
    w, step = window.text, window.step
    gpus = f"max by ({labels.cluster}, {labels.node}, {metrics.gpu_label}{''.join(', ' + m for m in usage.mig_labels)})"
    held = _on_node(f"{gpus} ({metrics.util}{selector(labels, clusters)})", labels)
    now = pool_map(labels, pools)
    joined = f"{held} * on ({KSM_NODE}) group_left ({POOL}) max by ({KSM_NODE}, {POOL}) ({now})"
    by_pool = f"{labels.cluster}, {POOL}"
    busy = f"count by ({by_pool}) (count by ({by_pool}, {KSM_NODE}) ({joined}))"
    return {
        "nodePools": pool_map(labels, pools, w),
        "peakNodes": f"max_over_time((count by ({by_pool}) ({now}))[{w}:{step}])",
        "peakBusyNodes": f"max_over_time(({busy})[{w}:{step}])",
        "peakGpus": f"max_over_time((count by ({by_pool}) ({joined}))[{w}:{step}])",
    }


def presence_queries(labels: LabelModel, clusters: Sequence[str], window: Window) -> dict[str, str]:
    """Name -> instant query saying what the server holds: the stack's GPU series per cluster, held or not
    (none: no data in the window); every GPU series per cluster and kube-state-metrics' `kube_node_labels`
    (to say what is there instead)."""
    util, w = METRIC_SETS[labels.metrics].util, window.text
    stack = selector(labels, clusters, held=False)
    return {
        "stackGpus": f"count by ({labels.cluster}) (max_over_time({util}{stack}[{w}]))",
        "gpuClusters": f"count by ({labels.cluster}) (max_over_time({util}[{w}]))",
        "nodeLabels": f"count(max_over_time(kube_node_labels[{w}]))",
    }


__all__ = [
    "POOL",
    "PoolNodes",
    "USAGE",
    "UsageMetrics",
    "Window",
    "pool_map",
    "pool_queries",
    "presence_queries",
    "series_key",
    "series_queries",
]
