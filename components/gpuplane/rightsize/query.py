"""The PromQL `gpuplane rightsize` sends, built from the stack's label model (`monitoring.labels`), so one set of
queries reads every integration: the GPU series' node, cluster and workload labels are wherever the
integration stores them (GKE Managed Prometheus: the workload's namespace in `exported_namespace`), and
`rules.workload` copies them to their canonical names before anything groups by them.

Which GPUs a pod held comes from the memory series (`DCGM_FI_DEV_FB_USED`), which dcgm-exporter writes for
whole GPUs and for each MIG instance (with `GPU_I_ID`, `GPU_I_PROFILE`), or else from the utilisation series;
never from utilisation alone, which dcgm-exporter does not report for MIG instances (NVIDIA/dcgm-exporter #50,
#105, #216, #430).

Per GPU (or MIG instance) a pod held in the window, grouped by `series_key`: peak and p95 utilisation, peak
memory, the usable memory of the device, samples, and the first and last sample's time (a subquery at
`step`). Per pool: the most nodes it had and the most that held a GPU of a pod, each step looking at the
whole step before it (`max_over_time(...[step])`), so a short peak between two steps still counts. Which node
is in which pool comes from kube-state-metrics' `kube_node_labels`, selected exactly as the cost rules'
`gpuplane:node_pool:info` selects them (`monitoring.cost.memberships`: the pools' node-affinity matchers,
most specific first, no node in two pools), scoped to each of the stack's clusters and joined to the GPU
series on the node's name and cluster. kube-state-metrics exposes those labels only when allowed
(`--metric-labels-allowlist`, `monitoring.cost.allowlist_flag`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..monitoring.cost import PoolCost, memberships
from ..monitoring.labels import LabelModel
from ..monitoring.rules import METRIC_SETS, workload
from .rules import UTIL_QUANTILE


@dataclass(frozen=True)
class UsageMetrics:
    """The per-workload memory series of one metrics source (utilisation is `rules.METRIC_SETS[...].util`)."""

    memory: str
    """Used GPU memory of the GPU a pod holds, carrying the pod's workload labels."""
    total: tuple[str, ...]
    """Series that add up to the memory a workload can allocate on the device (same unit as `memory`)."""
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
            total=("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"),
            per_gib=1024.0,
            model_label="modelName",
            mig_labels=("GPU_I_ID", "GPU_I_PROFILE"),
            source="dcgm-exporter default counters: DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE in MiB, per GPU and "
            "per MIG instance (DCGM 3.1.3 release notes); MIG instances carry GPU_I_ID and GPU_I_PROFILE "
            "(internal/pkg/rendermetrics)",
        ),
        "gke-device-plugin": UsageMetrics(
            memory="memory_used",
            total=("memory_total",),
            per_gib=float(2**30),
            model_label="model",
            mig_labels=(),
            source="container-engine-accelerators pkg/gpu/nvidia/metrics/metrics.go: memory_used and memory_total "
            "in bytes per container, with namespace, pod, container, accelerator_id, model",
        ),
    }
)
"""Metrics source (`LabelModel.metrics`) -> its memory series."""

KSM_NODE = "node"
"""kube-state-metrics' label naming the node on `kube_node_labels`."""
POOL = "pool"
"""The label the node -> pool map adds (as the cost rules' `gpuplane:node_pool:info`)."""

PoolsByCluster = Mapping[str, Sequence[PoolCost]]
"""Cluster -> its pools as the cost rules see them (`monitoring.wiring.stack_cost`)."""


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


def present(labels: LabelModel, expr: Callable[[str], str]) -> str:
    """`expr` of the memory series, or of the utilisation series where a device has no memory series: a
    device counts as seen when either is (MIG instances have memory only)."""
    memory, util = USAGE[labels.metrics].memory, METRIC_SETS[labels.metrics].util
    return f"({expr(memory)}) or ({expr(util)})"


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
    """Name -> instant query, one sample per GPU a pod held, each grouped by `series_key`; and the first and
    last sample of any of the stack's GPU series (`spanFirst`, `spanLast`: what the server holds of the window)."""
    util = METRIC_SETS[labels.metrics].util
    usage = USAGE[labels.metrics]
    held, stack = selector(labels, clusters), selector(labels, clusters, held=False)
    by = ", ".join(series_key(labels))
    w, step = window.text, window.step

    def per_series(inner: str, agg: str = "max") -> str:
        return f"{agg} by ({by}) ({workload(inner, labels)})"

    total = " + ".join(f"last_over_time({m}{held}[{w}])" for m in usage.total)
    return {
        "utilPeak": per_series(f"max_over_time({util}{held}[{w}])"),
        "utilP95": per_series(f"quantile_over_time({UTIL_QUANTILE:g}, {util}{held}[{w}])"),
        # sum: an exporter restart (a new pod, a new instance label) splits one device's samples in two series
        "samples": present(labels, lambda m: per_series(f"count_over_time({m}{held}[{w}])", "sum")),
        "first": present(labels, lambda m: per_series(f"min_over_time(timestamp({m}{held})[{w}:{step}])", "min")),
        "last": present(labels, lambda m: per_series(f"max_over_time(timestamp({m}{held})[{w}:{step}])")),
        "memoryPeakGib": per_series(f"max_over_time({usage.memory}{held}[{w}])") + f" / {usage.per_gib:.0f}",
        "memoryTotalGib": per_series(total, "min") + f" / {usage.per_gib:.0f}",
        "spanFirst": f"min({present(labels, lambda m: f'min_over_time(timestamp({m}{stack})[{w}:{step}])')})",
        "spanLast": f"max({present(labels, lambda m: f'max_over_time(timestamp({m}{stack})[{w}:{step}])')})",
    }


def _on_node(expr: str, labels: LabelModel) -> str:
    """`expr` with its node label copied to `node`, as kube-state-metrics names it."""
    if labels.node == KSM_NODE:
        return expr
    return f'label_replace({expr}, "{KSM_NODE}", "$1", "{labels.node}", "(.*)")'


_NODES = re.compile(r"kube_node_labels\{([^{}]*)\}")
_PER_NODE = re.compile(rf"\b(by|on) \({KSM_NODE}\)")


def cluster_members(expr: str, cluster_label: str, cluster: str, window: str, fill: bool) -> str:
    """One of `monitoring.cost.memberships`' node expressions scoped to `cluster`: each `kube_node_labels`
    selector keeps that cluster's nodes (taken over `window` when given) and each `(node)` grouping or match
    keeps the cluster label. `fill`: series without a cluster label are that cluster's too (kube-state-metrics
    scraped without one, in a stack of one cluster)."""

    def scoped(m: re.Match[str]) -> str:
        def of(value: str) -> str:
            nodes = f'kube_node_labels{{{cluster_label}="{value}", {m[1]}}}'
            return f"max_over_time({nodes}[{window}])" if window else nodes

        if not fill:
            return of(cluster)
        return f'({of(cluster)} or label_replace({of("")}, "{cluster_label}", "{cluster}", "", ""))'

    out, selectors = _NODES.subn(scoped, expr)
    out, groupings = _PER_NODE.subn(rf"\1 ({KSM_NODE}, {cluster_label})", out)
    assert selectors and groupings, f"memberships changed shape: {expr}"
    return out


def pool_map(labels: LabelModel, pools: PoolsByCluster, window: str = "") -> str:
    """Node -> pool series (`node`, the cluster label, `pool`) of each cluster's own pools, no node in two pools
    (`monitoring.cost.memberships`), at each instant or over `window` (every node there at some time in it)."""
    fill = len(pools) == 1
    parts = [
        f'label_replace({cluster_members(expr, labels.cluster, cluster, window, fill)}, "{POOL}", "{p.pool}", "", "")'
        for cluster, ps in pools.items()
        for p, expr in memberships(ps)
    ]
    return " or ".join(parts) if parts else "vector(0) == 1"


def pool_queries(labels: LabelModel, clusters: Sequence[str], window: Window, pools: PoolsByCluster) -> dict[str, str]:
    """Name -> instant query about pools: the node -> pool map over the window, each pool's peak node count,
    and its peak count of nodes with (and of GPUs in) a pod's hands. Each subquery step looks at the whole step
    before it (`max_over_time(...[step])`): an instant selector sees 5 minutes back only, less than a step of a
    window over a week."""
    metrics = METRIC_SETS[labels.metrics]
    usage = USAGE[labels.metrics]
    w, step = window.text, window.step
    gpus = f"max by ({labels.cluster}, {labels.node}, {metrics.gpu_label}{''.join(', ' + m for m in usage.mig_labels)})"
    held = _on_node(
        present(labels, lambda m: f"{gpus} (max_over_time({m}{selector(labels, clusters)}[{step}]))"), labels
    )
    now = pool_map(labels, pools, step)
    joined = f"({held}) * on ({KSM_NODE}, {labels.cluster}) group_left ({POOL}) ({now})"
    by_pool = f"{labels.cluster}, {POOL}"
    busy = f"count by ({by_pool}) (count by ({by_pool}, {KSM_NODE}) ({joined}))"
    return {
        "nodePools": pool_map(labels, pools, w),
        "peakNodes": f"max_over_time((count by ({by_pool}) ({now}))[{w}:{step}])",
        "peakBusyNodes": f"max_over_time(({busy})[{w}:{step}])",
        "peakGpus": f"max_over_time((count by ({by_pool}) ({joined}))[{w}:{step}])",
    }


OWNERS = {
    "ReplicaSet": ("replicaSetOwners", "kube_replicaset_owner", "replicaset"),
    "Job": ("jobOwners", "kube_job_owner", "job_name"),
}
"""Owner kinds whose own owner names the workload (a Deployment's ReplicaSet, a CronJob's Job) -> the query's
name, the kube-state-metrics series naming that owner, and its label naming the owned object."""


def _state(expr: str, labels: LabelModel) -> str:
    """`expr` (kube-state-metrics series) with `namespace` copied from where the integration may store it, only
    where that label is set: GKE Managed Prometheus keeps it in `namespace` or in `exported_namespace`
    depending on the monitor (`monitoring.cost` reads kube-state-metrics the same way)."""
    stored = labels.state.get("namespace", "namespace")
    return expr if stored == "namespace" else f'label_replace({expr}, "namespace", "$1", "{stored}", "(.+)")'


def _names(values: Sequence[str]) -> str:
    """An exact-match RE2 alternation of Kubernetes object names (lower-case letters, digits, `-` and `.`)."""
    return "|".join(v.replace(".", "\\\\.") for v in sorted(set(values)))


def owner_queries(
    labels: LabelModel, clusters: Sequence[str], window: Window, pods: Sequence[str], owned: Mapping[str, Sequence[str]]
) -> dict[str, str]:
    """Name -> instant query for kube-state-metrics' owners over the window: of `pods` (`kube_pod_owner`), and of
    the objects `owned` names per owner kind (`OWNERS`: a ReplicaSet's Deployment, a Job's CronJob)."""
    where = f'{labels.cluster}=~"{"|".join(clusters)}|"'
    pod = labels.state.get("pod", "pod")
    out: dict[str, str] = {}
    if pods:
        inner = f'max_over_time(kube_pod_owner{{{where}, {pod}=~"{_names(pods)}"}}[{window.text}])'
        if pod != "pod":
            inner = f'label_replace({inner}, "pod", "$1", "{pod}", "(.+)")'
        out["podOwners"] = (
            f"max by ({labels.cluster}, namespace, pod, owner_kind, owner_name) ({_state(inner, labels)})"
        )
    for kind, names in owned.items():
        if names and kind in OWNERS:
            name, metric, label = OWNERS[kind]
            inner = f'max_over_time({metric}{{{where}, {label}=~"{_names(names)}"}}[{window.text}])'
            by = f"{labels.cluster}, namespace, {label}, owner_kind, owner_name"
            out[name] = f"max by ({by}) ({_state(inner, labels)})"
    return out


def presence_queries(labels: LabelModel, clusters: Sequence[str], window: Window) -> dict[str, str]:
    """Name -> instant query saying what the server holds: the stack's GPU series per cluster, held or not
    (none: no data in the window); every GPU series per cluster and kube-state-metrics' `kube_node_labels`
    per cluster label (to say what is there instead)."""
    w, stack = window.text, selector(labels, clusters, held=False)
    return {
        "stackGpus": f"count by ({labels.cluster}) ({present(labels, lambda m: f'max_over_time({m}{stack}[{w}])')})",
        "gpuClusters": f"count by ({labels.cluster}) ({present(labels, lambda m: f'max_over_time({m}[{w}])')})",
        "nodeLabels": f"count by ({labels.cluster}) (max_over_time(kube_node_labels[{w}]))",
    }


__all__ = [
    "OWNERS",
    "POOL",
    "USAGE",
    "PoolsByCluster",
    "UsageMetrics",
    "Window",
    "cluster_members",
    "owner_queries",
    "pool_map",
    "pool_queries",
    "present",
    "presence_queries",
    "series_key",
    "series_queries",
]
