"""Placement helpers: the pod-spec fragments (resources, node affinity, tolerations) that put a pod on
one GPU pool of a stack, on that platform's real node labels. They follow the seed's example pod spec.

```python
from gpuplane.config import parse_config
from gpuplane.placement import placement
fragment = placement(cfg, "inference", gpus=1)   # {"resources": ..., "affinity": ..., "tolerations": ...}
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from .catalog import lookup
from .config import ConfigError
from .config.model import GpuPool, StackConfig
from .nodes import GPU_TAINT, POOL_LABEL, pool_taints
from .nvidia.sharing import gke_node_labels, resource_name, slots_per_gpu

Expr = dict[str, Any]


def _in(key: str, *values: str) -> Expr:
    return {"key": key, "operator": "In", "values": list(values)}


def _gke_common(pool: GpuPool) -> list[Expr]:
    gpu = lookup(pool.gpu)
    assert gpu is not None and gpu.gcp is not None
    exprs = [_in("cloud.google.com/gke-accelerator", gpu.gcp.accelerator)]
    if pool.spot:
        exprs.append(_in("cloud.google.com/gke-spot", "true"))
    exprs += [_in(k, v) for k, v in gke_node_labels(pool).items()]
    return exprs


def _gke_pool(pool: GpuPool) -> list[Expr]:
    return [_in("cloud.google.com/gke-nodepool", pool.name), *_gke_common(pool)]


def _eks_managed(pool: GpuPool) -> list[Expr]:
    return [_in(POOL_LABEL, pool.name), _in("eks.amazonaws.com/capacityType", "SPOT" if pool.spot else "ON_DEMAND")]


def _karpenter(prefix: str) -> Callable[[GpuPool], list[Expr]]:
    def exprs(pool: GpuPool) -> list[Expr]:
        gpu = lookup(pool.gpu)
        assert gpu is not None and gpu.aws is not None
        capacity = ("spot", "on-demand") if pool.spot else ("on-demand",)
        return [
            _in("karpenter.sh/nodepool", pool.name),
            _in("karpenter.sh/capacity-type", *capacity),
            _in(f"{prefix}/instance-gpu-name", gpu.aws.gpu_name),
        ]

    return exprs


AFFINITY: Mapping[str, Callable[[GpuPool], list[Expr]]] = MappingProxyType(
    {
        "gke-standard": _gke_pool,
        "gke-nap": _gke_common,
        "gke-autopilot": _gke_common,
        "eks-managed": _eks_managed,
        "eks-karpenter": _karpenter("karpenter.k8s.aws"),
        "eks-automode": _karpenter("eks.amazonaws.com"),
    }
)
"""Platform -> node-affinity expressions selecting one pool's nodes, on labels that platform sets."""

NODE_SELECTOR_PLATFORMS = ("gke-autopilot",)
"""Autopilot provisions GPU nodes from a pod's nodeSelector, so the fragment carries one as well."""


def tolerations(cloud: str, pool: GpuPool) -> list[dict[str, str]]:
    """The seed's tolerations: `nvidia.com/gpu` Exists, and each other taint of the pool (spot) by value."""
    out = []
    for t in pool_taints(cloud, pool):
        if t.key == GPU_TAINT.key:
            out.append({"key": t.key, "operator": "Exists", "effect": t.effect})
        else:
            out.append({"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect})
    return out


def find_pool(cfg: StackConfig, name: str) -> GpuPool:
    for p in cfg.gpuPools:
        if p.name == name:
            return p
    known = ", ".join(p.name for p in cfg.gpuPools) or "none"
    raise ConfigError([("pool", f"no GPU pool {name!r} in this stack (pools: {known})")])


def placement(cfg: StackConfig, pool_name: str, gpus: int = 1) -> dict[str, Any]:
    """Pod-spec fragments for `gpus` GPUs (or MIG slices / shared GPUs) on one pool of the stack."""
    pool = find_pool(cfg, pool_name)
    cloud = cfg.platform_spec.cloud
    shared = pool.sharing is not None and pool.sharing.strategy in ("time-slicing", "mps")
    # A slice of a shared GPU is a share of time (or of MPS threads), not more GPU: ask for one.
    per_node = 1 if shared else pool.gpusPerNode * slots_per_gpu(pool)
    if not 1 <= gpus <= per_node:
        raise ConfigError(
            [("gpus", f"{pool.name} nodes offer 1 to {per_node} {resource_name(pool, cloud)}, not {gpus}")]
        )
    exprs = AFFINITY[cfg.platform](pool)
    fragment: dict[str, Any] = {
        "resources": {"limits": {resource_name(pool, cloud): gpus}},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}
            }
        },
        "tolerations": tolerations(cloud, pool),
    }
    if cfg.platform in NODE_SELECTOR_PLATFORMS:
        fragment["nodeSelector"] = {e["key"]: e["values"][0] for e in exprs if len(e["values"]) == 1}
    return fragment


def pod(cfg: StackConfig, pool_name: str, gpus: int, name: str, image: str, command: list[str]) -> dict[str, Any]:
    """A whole Pod built from the fragment (what the smoke test and the README example use)."""
    f = placement(cfg, pool_name, gpus)
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": image, "command": command, "resources": f["resources"]}],
        "affinity": f["affinity"],
        "tolerations": f["tolerations"],
    }
    if "nodeSelector" in f:
        spec["nodeSelector"] = f["nodeSelector"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
