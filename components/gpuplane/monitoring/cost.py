"""What GPUs cost, in Prometheus: recording rules for GPU cost per hour by cluster, pool, namespace and pod,
plus the cost of GPUs nobody holds, of empty GPU nodes and of GPUs held but idle.

Where the numbers come from, so that no price sits inside a cost rule:

- **Prices** are series of their own, one per pool (`gpuplane:gpu_price_usd_per_hour{cluster, pool}`), written
  from the price table the capacity summary reads (`config.prices.gpu_price`: the catalog's dated list prices,
  or `gpuplane:prices`). A price change rewrites that group only. A pool the table cannot price has no series,
  so its cost is absent rather than zero (`unpriced`).
- **Which node is in which pool** comes from kube-state-metrics' `kube_node_labels`, selected by the same
  node-affinity expressions the placement helper and Kueue's flavors use (`scheduling.placement.affinity_of`).
  kube-state-metrics exposes a node label only when allowed (`--metric-labels-allowlist`, `allowlist()`);
  gpuplane sets it on the kube-state-metrics it installs (`install`).
- **What is allocated** is kube-state-metrics' `kube_pod_container_resource_requests` for GPU resources on
  Running pods (kube-state-metrics docs, pod metrics; the kube-prometheus mixin's Running/Pending filter). A
  unit of a pool is a whole GPU, a MIG instance or a share: each weighs 1 / `units_per_gpu` of the GPU's price
  (`scheduling.sharing.slots_per_gpu`), so time-slicing and MPS shares are costed as the fraction they are.
  dcgm-exporter would attribute a shared GPU to one pod only (labels.py), which is why requests, not DCGM
  series, carry allocation.
- **Held but idle** reads the GPU series themselves: an allocated GPU (or MIG instance) whose utilisation
  stayed under the idle threshold for the whole idle window, the same test as `GpuAllocatedButIdle`.

Labels are canonical after the rules (`cluster`, `pool`, `node`, `namespace`, `pod`), whatever the integration
stores (`labels.LabelModel`: GKE Managed Prometheus keeps workload namespaces in `exported_namespace`), so the
answers match across integrations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..catalog import lookup
from .labels import WORKLOAD, LabelModel

GPU_RESOURCES = 'resource=~"nvidia_com_gpu|nvidia_com_mig_.+"'
"""kube-state-metrics names extended resources with `.`, `/` and `-` made `_` (`nvidia.com/gpu` ->
`nvidia_com_gpu`, `nvidia.com/mig-1g.10gb` -> `nvidia_com_mig_1g_10gb`)."""

KUBE_STATE_METRICS = ("install",)
"""Integrations where gpuplane knows kube-state-metrics runs (kube-prometheus-stack brings it) and sets it up."""

HOURS_PER_MONTH = 730
"""Average hours in a month (8,760 / 12), as cloud pricing pages use it."""

PRICE = "gpuplane:gpu_price_usd_per_hour"
UNITS = "gpuplane:gpu_units_per_gpu"
NODE_POOL = "gpuplane:node_pool:info"
ALLOCATED = "gpuplane:gpu_units_allocated:by_pod"
CAPACITY = "gpuplane:gpu_units_capacity:by_node"
BY_POD = "gpuplane:gpu_cost_usd_per_hour:by_pod"
BY_NAMESPACE = "gpuplane:gpu_cost_usd_per_hour:by_namespace"
BY_POOL = "gpuplane:gpu_cost_usd_per_hour:by_pool"
CAPACITY_COST = "gpuplane:gpu_capacity_cost_usd_per_hour:by_pool"
UNALLOCATED = "gpuplane:gpu_unallocated_cost_usd_per_hour:by_pool"
EMPTY_NODES = "gpuplane:gpu_empty_node_cost_usd_per_hour:by_pool"
IDLE_ALLOCATED = "gpuplane:gpu_idle_allocated_cost_usd_per_hour:by_namespace"


@dataclass(frozen=True)
class PoolCost:
    """One pool, as the cost rules see it."""

    pool: str
    usd_per_gpu_hour: float | None
    """The pool's price per GPU-hour (None: the price table has none; the pool is not costed)."""
    units_per_gpu: int
    """Schedulable units one GPU becomes (sharing replicas, MIG instances, or 1)."""
    nodes: tuple[Mapping[str, Any], ...]
    """Node-affinity expressions that select the pool's nodes (`In`, `NotIn`, `Exists`, `DoesNotExist`)."""
    claims: bool = False
    """Pods claim the pool's GPUs through DRA ResourceClaims: no `nvidia.com/gpu` requests or capacity, so
    the rules cannot cost it (`gpuCost.notCosted`)."""


@dataclass(frozen=True)
class CostSettings:
    """The stack's pools and prices for the cost rules."""

    cluster: str
    """The cluster the pools are in (the `gpuCost` output names it; no rule carries it: each cluster's
    Prometheus, or GKE's rule evaluator, runs its own rules and labels its series with its cluster)."""
    pools: tuple[PoolCost, ...]

    @property
    def unpriced(self) -> list[str]:
        return [p.pool for p in self.pools if p.usd_per_gpu_hour is None and not p.claims]

    @property
    def not_costed(self) -> list[str]:
        return [p.pool for p in self.pools if p.claims]


def ksm_label(key: str) -> str:
    """kube-state-metrics' label for a Kubernetes label key: `label_` + the key with every character outside
    `[a-zA-Z0-9_]` made `_`, then snake-cased (`_` between a lower-case letter or digit and a capital, all lower
    case): `eks.amazonaws.com/capacityType` -> `label_eks_amazonaws_com_capacity_type` (kube-state-metrics
    internal/store/utils.go `labelName`: `SanitizeLabelName`, `lintLabelName` = `toSnakeCase`)."""
    sanitized = re.sub(r"[^a-zA-Z0-9_]", "_", key)
    return "label_" + re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", sanitized).lower()


def _quote(value: str) -> str:
    """`value` as an exact RE2 match, inside a PromQL double-quoted string (whose escapes are Go's, so each
    regex backslash is doubled: `1g.5gb` -> `1g\\\\.5gb`)."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", value).replace("\\", "\\\\")


MATCHERS = ("In", "NotIn", "Exists", "DoesNotExist")
"""Node-affinity operators the rules can express as label matchers (not `Gt`/`Lt`)."""


def node_matchers(exprs: Sequence[Mapping[str, Any]]) -> str:
    """PromQL label matchers on `kube_node_labels` equivalent to node-affinity expressions."""
    out = []
    for e in exprs:
        name, op, values = ksm_label(str(e["key"])), e["operator"], [str(v) for v in e.get("values") or []]
        alternatives = "|".join(_quote(v) for v in values)
        out.append(
            {
                "In": f'{name}=~"{alternatives}"',
                "NotIn": f'{name}!~"{alternatives}"',
                "Exists": f'{name}!=""',
                "DoesNotExist": f'{name}=""',
            }[op]
        )
    return ", ".join(out)


def allowlist(cost: CostSettings) -> list[str]:
    """The node label keys the cost rules read from `kube_node_labels`."""
    return sorted({str(e["key"]) for p in cost.pools for e in p.nodes})


def allowlist_flag(cost: CostSettings) -> str:
    """The kube-state-metrics argument that exposes those node labels."""
    return f"--metric-labels-allowlist=nodes=[{','.join(allowlist(cost))}]"


def _canonical(expr: str, stored: Mapping[str, str], keep: tuple[str, ...] = ()) -> str:
    """`expr` with workload labels copied to their canonical names from where the integration may store them.
    The copy happens only where the stored label is set (`(.+)`): kube-state-metrics under GKE Managed Prometheus
    keeps `namespace` when its monitor adds no target labels (Google's own kube-state-metrics example:
    ClusterPodMonitoring `targetLabels.metadata: []`) and lands in `exported_namespace` under a PodMonitoring.
    `keep`: labels an aggregation inside `expr` keeps, to which the stored names are added."""
    moved = {c: stored.get(c, c) for c in WORKLOAD if stored.get(c, c) != c}
    extra = [moved[label] for label in keep if label in moved]
    if extra:  # the aggregation keeps every stored name too, so the copies below have a source
        expr = expr.replace(f"({', '.join(keep)})", f"({', '.join([*keep, *extra])})", 1)
    for canonical, where in moved.items():
        expr = f'label_replace({expr}, "{canonical}", "$1", "{where}", "(.+)")'
    return expr


def _on_node(expr: str, node_label: str) -> str:
    return expr if node_label == "node" else f'label_replace({expr}, "node", "$1", "{node_label}", "(.*)")'


def _priced(expr: str) -> str:
    """Per-node series `expr` joined to their pool, times the pool's price per unit (a GPU over its units)."""
    return f"({expr} * on (node) group_left (pool) {NODE_POOL}) * on (pool) group_left () ({PRICE} / {UNITS})"


def memberships(pools: Sequence[PoolCost]) -> list[tuple[PoolCost, str]]:
    """Each pool with the expression of its nodes (`node` -> 1), no node in two pools. Pools that name themselves
    (a pool or class label, `IDENTITY_KEYS`) come first, then the most specific (most affinity expressions), and
    each leaves out the nodes of those before it: a NAP class's spot node keeps to its ComputeClass rather than a
    spot L4 class, and a spot L4 class keeps its nodes from an L4 class that names only the accelerator. Without
    this a node matching two pools breaks every `on (node)` join (many-to-many)."""
    out: list[tuple[PoolCost, str]] = []
    earlier: list[str] = []
    for p in sorted(pools, key=lambda p: (not _names_itself(p), -len(p.nodes))):
        nodes = f"kube_node_labels{{{node_matchers(p.nodes)}}}"
        own = f"max by (node) ({nodes})"
        out.append((p, f"{own} unless on (node) ({' or '.join(earlier)})" if earlier else own))
        earlier.append(nodes)
    order = {p.pool: i for i, p in enumerate(pools)}
    return sorted(out, key=lambda pair: order[pair[0].pool])


IDENTITY_KEYS = frozenset(
    {
        "gpuplane.io/pool",
        "cloud.google.com/gke-nodepool",
        "cloud.google.com/compute-class",
        "karpenter.sh/nodepool",
        "eks.amazonaws.com/nodegroup",
    }
)
"""Node labels that name a node's pool (or class) outright: a pool selected by one of them is taken before pools
selected by shared attributes (accelerator, spot), whose matchers may also match its nodes."""


def _names_itself(p: PoolCost) -> bool:
    return any(e["key"] in IDENTITY_KEYS and e["operator"] == "In" and len(e.get("values") or []) == 1 for e in p.nodes)


PRICES_GROUP = "gpuplane-gpu-prices"


def price_group(cost: CostSettings) -> dict[str, Any]:
    """The pool and price series: the only numbers the cost rules use, from the price table. Labelled with the
    pool only: GKE's rule evaluator refuses a rule that sets `cluster` (prometheus-engine
    pkg/operator/apis/monitoring/v1/rules_config.go `setLabel`: "label already set on rule"), and each cluster's
    own Prometheus adds its cluster as an external label."""
    rules: list[dict[str, Any]] = []
    for p, members in memberships(cost.pools):
        exprs = {NODE_POOL: members}
        if p.usd_per_gpu_hour is not None and not p.claims:
            exprs |= {PRICE: f"vector({p.usd_per_gpu_hour:g})", UNITS: f"vector({p.units_per_gpu})"}
        rules += [{"record": r, "expr": e, "labels": {"pool": p.pool}} for r, e in exprs.items()]
    return {"name": PRICES_GROUP, "interval": "1m", "rules": rules}


def idle_series(labels: LabelModel, util: str, window: str, percent: float) -> str:
    """GPU series (node label `node`) whose pod held the GPU at the start of `window` and holds it now, and whose
    utilisation stayed under `percent` all along: `GpuAllocatedButIdle`'s test (`for:` the window). A pod that
    started or ended inside the window is not idle for it."""
    pod = labels.stored("pod")
    held = f'{util}{{{pod}!=""}}'
    idle = f"(max_over_time({held}[{window}]) < {percent:g}) and {held} and ({held} offset {window})"
    return _on_node(_canonical(idle, labels.workload), labels.node)


def cost_group(labels: LabelModel, util: str, idle_window: str, idle_percent: float) -> dict[str, Any]:
    """Cost per hour from allocation (kube-state-metrics) and idleness (the GPU series), joined to prices."""
    # Duplicate kube-state-metrics series (two replicas, two scrapes) count once (kubernetes-mixin apps rules).
    requests = _canonical(
        f"max by (namespace, pod, container, node, resource) (kube_pod_container_resource_requests{{{GPU_RESOURCES}}})",
        labels.state,
        keep=("namespace", "pod", "container", "node", "resource"),
    )
    # Pending pods on a node hold their GPUs too (the kubelet admits them before the image is pulled);
    # unscheduled ones have node="" and drop out at the pool join (kubernetes-mixin: Pending|Running).
    active = _canonical(
        'max by (namespace, pod) (kube_pod_status_phase{phase=~"Pending|Running"} == 1)',
        labels.state,
        keep=("namespace", "pod"),
    )
    idle = idle_series(labels, util, idle_window, idle_percent)
    # Held-but-idle only where one GPU series is one tenant's GPU: not shares (dcgm-exporter gives a shared
    # GPU to one pod, labels.py) nor MIG instances (no DCGM_FI_DEV_GPU_UTIL on MIG, NVIDIA/dcgm-exporter #216).
    whole = f"({PRICE} and on (pool) ({UNITS} == 1))"
    rules = [
        {
            "record": ALLOCATED,
            "expr": f"sum by (node, namespace, pod) ({requests} * on (namespace, pod) group_left () {active})",
        },
        {
            "record": CAPACITY,
            "expr": f"sum by (node) (max by (node, resource) (kube_node_status_capacity{{{GPU_RESOURCES}}}))",
        },
        {"record": BY_POD, "expr": f"sum by (pool, namespace, pod) ({_priced(ALLOCATED)})"},
        {"record": BY_NAMESPACE, "expr": f"sum by (namespace) ({BY_POD})"},
        {"record": BY_POOL, "expr": f"sum by (pool) ({BY_POD})"},
        {"record": CAPACITY_COST, "expr": f"sum by (pool) ({_priced(CAPACITY)})"},
        {"record": UNALLOCATED, "expr": f"{CAPACITY_COST} - ({BY_POOL} or {CAPACITY_COST} * 0)"},
        {
            "record": EMPTY_NODES,
            "expr": f"sum by (pool) ({_priced(f'({CAPACITY} unless on (node) ({ALLOCATED} > 0))')})",
        },
        {
            "record": IDLE_ALLOCATED,
            "expr": f"sum by (pool, namespace) ((({idle}) * 0 + 1) * on (node) group_left (pool) {NODE_POOL} "
            f"* on (pool) group_left () {whole})",
        },
    ]
    return {"name": "gpuplane-gpu-cost", "interval": "1m", "rules": rules}


RECORDS = (BY_POD, BY_NAMESPACE, BY_POOL, CAPACITY_COST, UNALLOCATED, EMPTY_NODES, IDLE_ALLOCATED)
"""The cost series a dashboard or report reads (USD per hour)."""


def cost_summary(cost: CostSettings | None, integration: str) -> dict[str, Any]:
    """The `gpuCost` stack output: each pool's price per GPU-hour in the rules, the pools without one, the
    series to read, and the kube-state-metrics setting the rules need (gpuplane sets it where it installs
    kube-state-metrics)."""
    installed = integration in KUBE_STATE_METRICS
    if cost is None:
        return {}
    return {
        "usdPerGpuHour": {
            p.pool: p.usd_per_gpu_hour for p in cost.pools if p.usd_per_gpu_hour is not None and not p.claims
        },
        "unpriced": cost.unpriced,
        "notCosted": cost.not_costed,
        "records": list(RECORDS),
        "kubeStateMetrics": "set by gpuplane (kube-prometheus-stack values)" if installed else allowlist_flag(cost),
    }


def pool_cost_of(entry: Mapping[str, Any], where: str) -> tuple[PoolCost | None, list[tuple[str, str]]]:
    """A `GpuPriceArgs` entry as the cost rules' pool, or the problems with it (`where`: its argument path)."""
    problems: list[tuple[str, str]] = []
    nodes = entry.get("nodes")
    price = entry.get("usd_per_gpu_hour")
    if not isinstance(nodes, Mapping) or not isinstance(nodes.get("pool"), str):
        problems.append((f"{where}.nodes", "required: a pool's gpu_nodes entry (with its `pool` name)"))
    if isinstance(price, bool) or not isinstance(price, int | float) or price <= 0:
        problems.append((f"{where}.usd_per_gpu_hour", f"{price!r} is not a positive number of USD"))
    if problems:
        return None, problems
    assert isinstance(nodes, Mapping)
    sharing = nodes.get("sharing") or {}
    mig = str(sharing.get("strategy", "")) == "mig"
    units = entry.get("units_per_gpu")
    exprs = nodes.get("affinity") or [{"key": "gpuplane.io/pool", "operator": "In", "values": [nodes["pool"]]}]
    if units is None:
        gpu = lookup(str((nodes.get("labels") or {}).get("gpuplane.io/gpu", "")))
        profiles = gpu.mig_profiles if gpu is not None else {}
        units = profiles.get(str(sharing.get("profile"))) if mig else sharing.get("replicas", 1)
    if isinstance(units, bool) or not isinstance(units, int) or units < 1:
        why = "a MIG pool whose GPU the catalog does not know needs it" if units is None else f"{units!r} is not >= 1"
        return None, [(f"{where}.units_per_gpu", why)]
    assert isinstance(price, int | float)
    bad = sorted({str(e.get("operator")) for e in exprs if e.get("operator") not in MATCHERS})
    if bad:
        return None, [(f"{where}.nodes.affinity", f"operators {bad} have no label-matcher form (use {list(MATCHERS)})")]
    claims = str(nodes.get("allocation", "")) == "dra"
    return PoolCost(str(nodes["pool"]), float(price), units, tuple(exprs), claims), []
