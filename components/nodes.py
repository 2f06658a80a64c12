"""Cloud-neutral facts about GPU nodes: the labels and taints every platform gives its GPU pools.

Exporters, placement helpers and tests read these, so "what the pool carries" and "what a DaemonSet
must tolerate and select" come from one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .config.model import GpuPool, Taint

POOL_LABEL = "gpuplane.io/pool"
"""Node label naming the gpuplane pool a node belongs to."""
GPU_LABEL = "gpuplane.io/gpu"
"""Node label with the catalog name of the node's GPU."""
CLUSTER_LABEL = "gpuplane.io/cluster"
"""Node label with the gpuplane cluster name."""

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


def pool_labels(cluster: str, pool: GpuPool) -> dict[str, str]:
    """Node labels of a GPU pool: gpuplane's own labels plus the user's."""
    return {**pool.labels, CLUSTER_LABEL: cluster, POOL_LABEL: pool.name, GPU_LABEL: pool.gpu}


def pool_taints(cloud: str, pool: GpuPool) -> tuple[Taint, ...]:
    """Taints of a GPU pool: the GPU taint, the spot taint for spot pools, then the user's."""
    spot = (SPOT_TAINTS[cloud],) if pool.spot and cloud in SPOT_TAINTS else ()
    return (GPU_TAINT, *spot, *pool.taints)


def pool_target(cloud: str, cluster: str, pool: GpuPool) -> GpuNodeTarget:
    """The labels and taints of one pool's nodes."""
    return GpuNodeTarget(pool=pool.name, labels=pool_labels(cluster, pool), taints=pool_taints(cloud, pool))


def tolerations_for(targets: tuple[GpuNodeTarget, ...] | list[GpuNodeTarget]) -> list[dict[str, str]]:
    """Kubernetes tolerations that cover every taint of every target, without repeats, in a stable order."""
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    for t in targets:
        for taint in t.taints:
            key = (taint.key, taint.value, taint.effect)
            if key not in seen:
                seen[key] = {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return list(seen.values())


def pool_affinity(targets: tuple[GpuNodeTarget, ...] | list[GpuNodeTarget]) -> dict[str, object]:
    """Required node affinity matching exactly the nodes of the given pools."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": POOL_LABEL, "operator": "In", "values": sorted(t.pool for t in targets)}
                        ]
                    }
                ]
            }
        }
    }


@dataclass(frozen=True)
class NodeSelection:
    """How a node agent (an exporter DaemonSet) selects and tolerates exactly the GPU nodes."""

    affinity: dict[str, Any]
    tolerations: list[dict[str, str]]


def select_pools(targets: tuple[GpuNodeTarget, ...] | list[GpuNodeTarget]) -> NodeSelection:
    """Fixed pools: select by the gpuplane pool label, tolerate every taint of every pool."""
    return NodeSelection(affinity=pool_affinity(targets), tolerations=tolerations_for(targets))


def select_by_label(key: str, values: list[str], taints: tuple[Taint, ...]) -> NodeSelection:
    """Auto-provisioned nodes carry no gpuplane labels: select by a platform label (e.g. the GKE
    accelerator) and tolerate the taints the platform puts on such nodes."""
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": "In", "values": sorted(set(values))}]}
                ]
            }
        }
    }
    target = GpuNodeTarget(pool="*", labels={}, taints=taints)
    return NodeSelection(affinity=affinity, tolerations=tolerations_for([target]))
