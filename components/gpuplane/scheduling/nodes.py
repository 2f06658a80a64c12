"""Cloud-neutral facts about GPU nodes: the labels and taints every platform gives its GPU pools.

Exporters, placement helpers and tests read these, so "what the pool carries" and "what a DaemonSet
must tolerate and select" come from one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..args.inputs import GpuNodes
from ..catalog.dra import DRA_NODE_LABELS, PLUGIN_LABEL, PLUGIN_NODE_LABELS
from ..catalog.images import arch_of
from ..config.capacity import pool_machines
from ..config.dra import claims_gpus, needs_driver
from ..config.model import GpuPool, Taint

POOL_LABEL = "gpuplane.io/pool"
"""Node label naming the gpuplane pool a node belongs to."""
GPU_LABEL = "gpuplane.io/gpu"
"""Node label with the catalog name of the node's GPU."""
CLUSTER_LABEL = "gpuplane.io/cluster"
"""Node label with the gpuplane cluster name."""
NETWORK_LABEL = "gpuplane.io/network"
"""Node label of multi-node pools: their `network` (`efa`, `gpudirect`); the EFA device plugin selects it."""

GPU_TAINT = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
"""The taint on every GPU node, so only pods that ask for GPUs (and tolerate it) land there."""

SPOT_TAINTS: Mapping[str, Taint] = MappingProxyType(
    {
        "gcp": Taint(key="cloud.google.com/gke-spot", value="true", effect="NoSchedule"),
    }
)
"""Cloud -> the taint gpuplane puts on spot GPU pools (the seed's pod example tolerates it)."""


@dataclass(frozen=True)
class GpuNodeTarget:
    """What a GPU pool's nodes carry: enough for a DaemonSet to select and tolerate exactly them."""

    pool: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]


def pool_labels(cluster: str, pool: GpuPool, cloud: str) -> dict[str, str]:
    """Node labels of a GPU pool on `cloud`: gpuplane's own labels plus the user's."""
    network = {NETWORK_LABEL: pool.network} if pool.network else {}
    return {
        **pool.labels,
        CLUSTER_LABEL: cluster,
        POOL_LABEL: pool.name,
        GPU_LABEL: pool.gpu,
        **network,
        **dra_labels(pool, cloud),
    }


def dra_labels(pool: GpuPool, cloud: str) -> dict[str, str]:
    """A pool that claims GPUs through DRA: the labels that keep the device plugin off and let the DRA driver on
    (`catalog.dra.DRA_NODE_LABELS`); and on every pool the DRA driver's kubelet plugin serves (GPU claims or
    ComputeDomains), gpuplane's label that the plugin selects."""
    claims = dict(DRA_NODE_LABELS[cloud]) if claims_gpus(pool) else {}
    return {**claims, **PLUGIN_NODE_LABELS, PLUGIN_LABEL: "true"} if needs_driver(pool) else {}


QUEUED_TAINTS = {"gcp": Taint(key="cloud.google.com/gke-queued", value="true", effect="NoSchedule")}
"""The taint GKE puts on nodes of queued-provisioning (DWS) node pools (GKE docs, "Deploy GPUs for batch
workloads with ProvisioningRequest": pods need a toleration for `cloud.google.com/gke-queued`)."""


ARM_TAINTS = {"gcp": Taint(key="kubernetes.io/arch", value="arm64", effect="NoSchedule")}
"""The taint GKE puts on Arm nodes, so only pods that say they run on Arm land there (GKE docs, "Prepare an
Arm workload for deployment"); A4X (GB200) nodes are Arm."""


def pool_taints(cloud: str, pool: GpuPool) -> tuple[Taint, ...]:
    """Taints of a GPU pool: the GPU taint, the spot taint for spot pools, the queued-provisioning taint
    for queued pools, GKE's Arm taint on Arm machines, then the user's."""
    spot = (SPOT_TAINTS[cloud],) if pool.spot and cloud in SPOT_TAINTS else ()
    queued = (QUEUED_TAINTS[cloud],) if "queued" in (pool.capacity or ()) and cloud in QUEUED_TAINTS else ()
    arm_machines = (
        [m for m in pool_machines(cloud, pool) if arch_of(cloud, m) == "arm64"] if cloud in ARM_TAINTS else []
    )
    arm = (ARM_TAINTS[cloud],) if arm_machines else ()
    return (GPU_TAINT, *spot, *queued, *arm, *pool.taints)


def pool_target(cloud: str, cluster: str, pool: GpuPool) -> GpuNodeTarget:
    """The labels and taints of one pool's nodes."""
    return GpuNodeTarget(pool=pool.name, labels=pool_labels(cluster, pool, cloud), taints=pool_taints(cloud, pool))


def targets_of(nodes: Sequence[GpuNodes]) -> list[GpuNodeTarget]:
    """Pool components' `gpu_nodes` (or the user's own) as targets a node agent selects and tolerates."""
    return [
        GpuNodeTarget(
            pool=n["pool"],
            labels=dict(n["labels"]),
            taints=tuple(
                Taint.model_validate({"key": t["key"], "value": t.get("value", ""), "effect": getattr(e, "value", e)})
                for t in n["taints"]
                for e in [t.get("effect") or "NoSchedule"]
            ),
        )
        for n in nodes
    ]


def platform_taints(cloud: str) -> tuple[Taint, ...]:
    """Taints gpuplane may put on any GPU node of `cloud` (the GPU taint, and the cloud's spot, queued-provisioning
    and Arm taints): node agents always tolerate them, so adding or removing a spot, queued or Arm pool leaves the
    agents alone."""
    extra = [t[cloud] for t in (SPOT_TAINTS, QUEUED_TAINTS, ARM_TAINTS) if cloud in t]
    return (GPU_TAINT, *extra)


def tolerations_for(targets: tuple[GpuNodeTarget, ...] | list[GpuNodeTarget]) -> list[dict[str, str]]:
    """Kubernetes tolerations that cover every taint of every target, without repeats, in a stable order."""
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    for t in targets:
        for taint in t.taints:
            key = (taint.key, taint.value, taint.effect)
            if key not in seen:
                seen[key] = {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return list(seen.values())


def agent_tolerations(cloud: str, targets: tuple[GpuNodeTarget, ...] | list[GpuNodeTarget]) -> list[dict[str, str]]:
    """Tolerations for a GPU node agent: the platform's taints always (so adding or removing a plain or
    spot pool leaves the agent's pod template alone), then the pools' own extra taints."""
    return tolerations_for([GpuNodeTarget(pool="*", labels={}, taints=platform_taints(cloud)), *targets])


def label_affinity(key: str) -> dict[str, Any]:
    """Required node affinity for nodes that carry label `key` (any value)."""
    term = {"matchExpressions": [{"key": key, "operator": "Exists"}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


@dataclass(frozen=True)
class NodeSelection:
    """How a node agent (an exporter DaemonSet) selects and tolerates exactly the GPU nodes."""

    affinity: dict[str, Any]
    tolerations: list[dict[str, str]]


def select_pools(cloud: str, targets: tuple[GpuNodeTarget, ...] | list[GpuNodeTarget]) -> NodeSelection:
    """Fixed pools: every node with the gpuplane pool label (only gpuplane GPU pools carry it), tolerating
    the platform's taints and every pool's own. Pool names are not listed, so adding or removing a pool
    does not roll the agent's DaemonSet."""
    return NodeSelection(affinity=label_affinity(POOL_LABEL), tolerations=agent_tolerations(cloud, targets))


def select_by_label(key: str, taints: tuple[Taint, ...]) -> NodeSelection:
    """Auto-provisioned nodes carry no gpuplane labels: select every node with a platform label (e.g. the
    GKE accelerator label, which only GPU nodes have) and tolerate the taints the platform puts on such
    nodes. GPU classes are not listed, so adding one leaves the agent alone."""
    target = GpuNodeTarget(pool="*", labels={}, taints=taints)
    return NodeSelection(affinity=label_affinity(key), tolerations=tolerations_for([target]))
