"""GPU sharing carried to each platform's mechanism, as data and pure functions.

- GKE: `gpu_sharing_config` (TIME_SHARING / MPS, max clients) or `gpu_partition_size` (MIG) on the
  node pool; GKE labels the nodes itself (`cloud.google.com/gke-gpu-sharing-strategy`, ...).
- EKS with the gpu-operator: one device-plugin ConfigMap (`version: v1`) with a config per sharing
  pool, picked by the node label `nvidia.com/device-plugin.config`; MIG through `mig.strategy: mixed`
  and the node label `nvidia.com/mig.config: all-<profile>` (the MIG manager's built-in layouts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from ..catalog import lookup
from ..config.model import GpuPool
from ..config.sharing import Sharing
from ..text import yamltext

GKE_STRATEGY: Mapping[str, str] = MappingProxyType({"time-slicing": "TIME_SHARING", "mps": "MPS"})
"""gpuplane strategy -> GKE API GPUSharingConfig.gpuSharingStrategy."""
GKE_NODE_STRATEGY: Mapping[str, str] = MappingProxyType({"time-slicing": "time-sharing", "mps": "mps"})
"""gpuplane strategy -> value of GKE's node label `cloud.google.com/gke-gpu-sharing-strategy`."""
OPERATOR_SHARING_KEY: Mapping[str, str] = MappingProxyType({"time-slicing": "timeSlicing", "mps": "mps"})
"""gpuplane strategy -> key under `sharing:` in the device plugin's config file."""

DEVICE_PLUGIN_CONFIG = "gpuplane-device-plugin-config"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"


def gke_accelerator_sharing(pool: GpuPool) -> dict[str, Any]:
    """Extra `guest_accelerators[0]` arguments for a GKE pool's sharing."""
    s = pool.sharing
    if s is None:
        return {}
    if s.strategy == "mig":
        return {"gpu_partition_size": s.migProfile}
    return {
        "gpu_sharing_config": {
            "gpu_sharing_strategy": GKE_STRATEGY[s.strategy],
            "max_shared_clients_per_gpu": s.replicas,
        }
    }


def gke_node_labels(pool: GpuPool) -> dict[str, str]:
    """Labels GKE itself puts on a sharing pool's nodes (pods select them)."""
    s = pool.sharing
    if s is None:
        return {}
    if s.strategy == "mig":
        return {"cloud.google.com/gke-gpu-partition-size": str(s.migProfile)}
    return {
        "cloud.google.com/gke-gpu-sharing-strategy": GKE_NODE_STRATEGY[s.strategy],
        "cloud.google.com/gke-max-shared-clients-per-gpu": str(s.replicas),
    }


def operator_node_labels(pool: GpuPool) -> dict[str, str]:
    """Node labels that make the gpu-operator configure a pool's sharing (EKS node groups, Karpenter)."""
    s = pool.sharing
    if s is None:
        return {}
    if s.strategy == "mig":
        return {MIG_CONFIG_LABEL: f"all-{s.migProfile}"}
    return {DEVICE_PLUGIN_CONFIG_LABEL: pool.name}


MIG_STRATEGY = "mixed"
"""Always `mixed`: MIG partitions appear as `nvidia.com/mig-<profile>` and GPUs without MIG stay
`nvidia.com/gpu`, so adding or removing a MIG pool changes no cluster-wide setting (no operator roll)."""


class SharedPool(Protocol):
    """What the device-plugin config reads of a pool (a `GpuPool`, or a `gpu_nodes` entry's sharing)."""

    @property
    def name(self) -> str: ...
    @property
    def sharing(self) -> Sharing | None: ...


def device_plugin_configs(pools: Sequence[SharedPool]) -> dict[str, str]:
    """The device plugin's config files (name -> YAML): `default` for whole GPUs, one per sharing pool."""
    flags = {"migStrategy": MIG_STRATEGY}
    configs = {"default": yamltext.dump({"version": "v1", "flags": flags}, sort_keys=False)}
    for p in pools:
        s = p.sharing
        if s is None or s.strategy == "mig":
            continue
        doc = {
            "version": "v1",
            "flags": flags,
            "sharing": {
                OPERATOR_SHARING_KEY[s.strategy]: {"resources": [{"name": "nvidia.com/gpu", "replicas": s.replicas}]}
            },
        }
        configs[p.name] = yamltext.dump(doc, sort_keys=False)
    return configs


def device_plugin_configmap(namespace: str, pools: Sequence[SharedPool]) -> dict[str, Any]:
    """The ConfigMap the operator's device plugin reads (`devicePlugin.config.name`)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": DEVICE_PLUGIN_CONFIG, "namespace": namespace},
        "data": device_plugin_configs(pools),
    }


def resource_name(pool: GpuPool, cloud: str) -> str:
    """The extended resource a pod asks for on this pool: MIG partitions are their own resource on EKS
    (mixed strategy); GKE exposes partitions and shared GPUs as `nvidia.com/gpu`."""
    s = pool.sharing
    if s is not None and s.strategy == "mig" and cloud == "aws":
        return f"nvidia.com/mig-{s.migProfile}"
    return "nvidia.com/gpu"


def slots_per_gpu(pool: GpuPool) -> int:
    """Schedulable units one physical GPU becomes: sharing replicas, MIG instances, or 1."""
    s = pool.sharing
    if s is None:
        return 1
    if s.strategy == "mig":
        gpu = lookup(pool.gpu)
        assert gpu is not None
        return gpu.mig_profiles[str(s.migProfile)]
    return s.factor


def advertised(pool: GpuPool, cloud: str) -> dict[str, int]:
    """What one node of the pool advertises to the scheduler (for autoscaler node templates)."""
    return {resource_name(pool, cloud): pool.gpusPerNode * slots_per_gpu(pool)}
