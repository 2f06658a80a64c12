"""What the queries' answers say, as plain dataclasses: each GPU a pod held (`HeldGpu`), each workload's peaks
and coverage (`Workload`), each pool's peaks (`PoolUse`). Pure functions over the answers (`client.Sample`
lists by query name, `query.series_queries` / `pool_queries`), so they are tested without a server.

A held GPU belongs to the pool of its node (`query.pool_map`, from `kube_node_labels`); without that map, to the
stack's first pool (in config order) of the GPU its model name names (`rules.gpu_of_model`), and the workload
says so (`pool_from`). A MIG instance's utilisation is unknown (None), whatever the exporter wrote for it:
dcgm-exporter reports none for MIG instances, or zeros (NVIDIA/dcgm-exporter #216).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..config.model import GpuPool
from ..monitoring.labels import LabelModel
from ..monitoring.rules import METRIC_SETS
from .client import Sample
from .query import KSM_NODE, OWNERS, POOL, USAGE, series_key
from .rules import gpu_of_model, workload_name


@dataclass(frozen=True)
class HeldGpu:
    """One GPU (or MIG instance) one pod held during the window."""

    cluster: str
    node: str
    gpu: str
    """The GPU's id on its node (index or UUID), with the MIG instance id when it is one."""
    mig: str
    """The MIG profile of the instance, or empty for a whole GPU."""
    model: str
    namespace: str
    pod: str
    util_peak: float | None
    """None: unknown (a MIG instance, or no utilisation series)."""
    util_p95: float | None
    memory_peak_gib: float | None
    memory_total_gib: float | None
    """Memory the device holds as its exporter reports it (`FB_USED + FB_FREE`), or None."""
    samples: int
    first: float
    last: float


@dataclass(frozen=True)
class Workload:
    """The GPUs one workload (pods of one controller, `rules.workload_name`) held in one pool."""

    cluster: str
    namespace: str
    name: str
    pool: str | None
    pool_from: str
    """`node label` or `gpu model` (no pool label on the node), or empty when no pool has the GPU."""
    gpu: str | None
    """The catalog GPU (the pool's, else the exporter's model name's)."""
    mig: str
    pods: int
    gpus_per_pod: int
    util_peak: float | None
    """Highest utilisation of its GPUs (percent), None when one of them reports none (MIG)."""
    util_p95: float | None
    memory_peak_gib: float | None
    memory_total_gib: float | None
    """Least usable memory the exporter reported for its GPUs (whole GPUs), or None."""
    samples: int
    expected_samples: int
    first: float
    last: float
    gpu_hours: float
    """GPU-hours held in the window (each held GPU from its first to its last sample, plus one interval)."""

    @property
    def observed_hours(self) -> float:
        return (self.last - self.first) / 3600

    @property
    def gaps(self) -> float:
        """Fraction of the samples expected at the scrape interval that are missing."""
        return max(0.0, 1 - self.samples / self.expected_samples) if self.expected_samples else 1.0


@dataclass(frozen=True)
class PoolUse:
    """A pool's peaks over the window (None: no `kube_node_labels` with the pool label)."""

    peak_nodes: int | None
    peak_busy_nodes: int | None
    """Most nodes at once with at least one GPU held by a pod."""
    peak_gpus: int | None
    """Most GPUs (or MIG instances) held at once."""


Answers = Mapping[str, list[Sample]]


def _by_key(samples: list[Sample], key: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    return {tuple(m.get(k, "") for k in key): v for m, v in samples}


def held_gpus(answers: Answers, labels: LabelModel) -> list[HeldGpu]:
    """The GPUs pods held, from `series_queries`' answers: every device with a memory or utilisation peak."""
    key = series_key(labels)
    columns = {
        name: _by_key(answers.get(name, []), key)
        for name in ("utilPeak", "utilP95", "memoryPeakGib", "memoryTotalGib", "samples", "first", "last")
    }
    mig_labels = USAGE[labels.metrics].mig_labels
    gpu_label, model_label = METRIC_SETS[labels.metrics].gpu_label, USAGE[labels.metrics].model_label
    out = []
    for values in sorted(set(columns["memoryPeakGib"]) | set(columns["utilPeak"])):
        m = dict(zip(key, values, strict=True))
        instance = m.get(mig_labels[0], "") if mig_labels else ""
        mig = m.get(mig_labels[1], "") if mig_labels else ""
        util = {} if mig or instance else {k: columns[k].get(values) for k in ("utilPeak", "utilP95")}
        out.append(
            HeldGpu(
                cluster=m[labels.cluster],
                node=m[labels.node],
                gpu=m[gpu_label] + (f"/{instance}" if instance else ""),
                mig=mig,
                model=m[model_label],
                namespace=m["namespace"],
                pod=m["pod"],
                util_peak=util.get("utilPeak"),
                util_p95=util.get("utilP95", util.get("utilPeak")),
                memory_peak_gib=columns["memoryPeakGib"].get(values),
                memory_total_gib=None if mig else columns["memoryTotalGib"].get(values),
                samples=int(columns["samples"].get(values, 0)),
                first=columns["first"].get(values, 0.0),
                last=columns["last"].get(values, 0.0),
            )
        )
    return out


def node_pools(samples: list[Sample], cluster_label: str, clusters: Sequence[str]) -> dict[tuple[str, str], str]:
    """(cluster, node) -> pool, from the `nodePools` answer (`query.pool_map` labels every node with its
    cluster), for the stack's clusters."""
    pools = {(m.get(cluster_label, ""), m[KSM_NODE]): m[POOL] for m, _ in samples}
    return {k: v for k, v in pools.items() if k[0] in clusters}


def pool_of(
    held: HeldGpu, nodes: Mapping[tuple[str, str], str], pools: Sequence[GpuPool]
) -> tuple[str | None, str, str | None]:
    """(pool, how it was found, catalog GPU) of a held GPU; `pools` are its cluster's."""
    pool = nodes.get((held.cluster, held.node))
    by_name = {p.name: p for p in pools}
    if pool in by_name:
        return pool, "node label", by_name[pool].gpu
    gpu = gpu_of_model(held.model)
    first = next((p for p in pools if p.gpu == gpu), None)
    return (first.name, "gpu model", gpu) if first is not None else (None, "", gpu)


NO_OWNER = "<none>"
"""kube-state-metrics' `owner_kind` and `owner_name` of an object without an owner."""


def owned(answers: Answers) -> dict[str, list[str]]:
    """Owner kind -> the names `podOwners` gives of that kind (the objects whose own owner to ask for)."""
    out: dict[str, list[str]] = defaultdict(list)
    for m, _ in answers.get("podOwners", []):
        out[m.get("owner_kind", "")].append(m.get("owner_name", ""))
    return dict(out)


def owners(answers: Answers, cluster_label: str, clusters: Sequence[str]) -> dict[tuple[str, str, str], str]:
    """(cluster, namespace, pod) -> its workload from kube-state-metrics (`query.owner_queries`' answers): the
    pod's controller, or that controller's own owner for a ReplicaSet (its Deployment) or a Job (its CronJob);
    a pod without an owner is its own workload. Series without a cluster label count for a single cluster."""

    def cluster_of(m: Mapping[str, str]) -> str:
        return m.get(cluster_label, "") or (clusters[0] if len(clusters) == 1 else "")

    parents = {
        (kind, cluster_of(m), m.get("namespace", ""), m.get(label, "")): m.get("owner_name", "")
        for kind, (name, _, label) in OWNERS.items()
        for m, _ in answers.get(name, [])
        if m.get("owner_name", NO_OWNER) != NO_OWNER
    }
    out = {}
    for m, _ in answers.get("podOwners", []):
        cluster, namespace, pod = cluster_of(m), m.get("namespace", ""), m.get("pod", "")
        kind, name = m.get("owner_kind", NO_OWNER), m.get("owner_name", NO_OWNER)
        if name == NO_OWNER:
            out[(cluster, namespace, pod)] = pod
        else:
            out[(cluster, namespace, pod)] = parents.get((kind, cluster, namespace, name), name)
    return out


def workloads(
    held: Sequence[HeldGpu],
    nodes: Mapping[tuple[str, str], str],
    pools: Mapping[str, Sequence[GpuPool]],
    interval: float,
    named: Mapping[tuple[str, str, str], str] | None = None,
) -> list[Workload]:
    """Held GPUs grouped by cluster, namespace, workload and pool; `pools` by cluster; `interval` in seconds;
    `named`: workloads from kube-state-metrics' owners (`owners`), else `rules.workload_name` of the pod."""
    groups: dict[tuple[str, str, str, str | None], list[HeldGpu]] = defaultdict(list)
    found: dict[tuple[str, str, str, str | None], tuple[str, str | None]] = {}
    named = named or {}
    for h in held:
        pool, how, gpu = pool_of(h, nodes, pools.get(h.cluster, ()))
        name = named.get((h.cluster, h.namespace, h.pod)) or workload_name(h.pod)
        k = (h.cluster, h.namespace, name, pool)
        groups[k].append(h)
        found[k] = (how, gpu)
    out = []
    for k, items in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        per_pod: dict[str, int] = defaultdict(int)
        for h in items:
            per_pod[h.pod] += 1
        memory = [h.memory_peak_gib for h in items if h.memory_peak_gib is not None]
        totals = [h.memory_total_gib for h in items if h.memory_total_gib is not None]
        util = [h.util_peak for h in items]
        p95 = [h.util_p95 for h in items]
        out.append(
            Workload(
                cluster=k[0],
                namespace=k[1],
                name=k[2],
                pool=k[3],
                pool_from=found[k][0],
                gpu=found[k][1],
                mig=max(h.mig for h in items),
                pods=len(per_pod),
                gpus_per_pod=max(per_pod.values()),
                util_peak=None if None in util else max(u for u in util if u is not None),
                util_p95=None if None in p95 else max(u for u in p95 if u is not None),
                memory_peak_gib=max(memory) if memory else None,
                memory_total_gib=min(totals) if totals else None,
                samples=sum(h.samples for h in items),
                expected_samples=sum(max(h.samples, round((h.last - h.first) / interval) + 1) for h in items),
                first=min(h.first for h in items),
                last=max(h.last for h in items),
                gpu_hours=sum(h.last - h.first + interval for h in items) / 3600,
            )
        )
    return out


def pool_use(answers: Answers, cluster_label: str, clusters: Sequence[str]) -> dict[tuple[str, str], PoolUse]:
    """(cluster, pool) -> peaks, from `pool_queries`' answers; a pool with nodes in the window but none held is
    at 0. `peakNodes` comes from kube-state-metrics, whose series carry the cluster label only where the
    collector adds one: without it, the stack's only cluster (a fleet's clusters cannot be told apart)."""

    def where(m: Mapping[str, str]) -> tuple[str, str]:
        cluster = m.get(cluster_label, "") or (clusters[0] if len(clusters) == 1 else "")
        return cluster, m[POOL]

    columns = {
        name: {where(m): int(v) for m, v in answers.get(name, [])}
        for name in ("peakNodes", "peakBusyNodes", "peakGpus")
    }
    keys = {k for c in columns.values() for k in c}
    return {
        k: PoolUse(
            peak_nodes=columns["peakNodes"].get(k),
            peak_busy_nodes=columns["peakBusyNodes"].get(k, 0),
            peak_gpus=columns["peakGpus"].get(k, 0),
        )
        for k in keys
    }


__all__ = [
    "HeldGpu",
    "PoolUse",
    "Workload",
    "held_gpus",
    "node_pools",
    "owned",
    "owners",
    "pool_of",
    "pool_use",
    "workloads",
]
