"""Placement helpers: the pod-spec fragments (resources, node affinity, tolerations) that put a pod on
one GPU pool of a stack, on that platform's real node labels. They follow the seed's example pod spec.

```python
from gpuplane import placement
fragment = placement(pools.gpu_nodes[0], gpus=1)  # a pool component's output: {"resources", "affinity", ...}
fragment = placement(cfg, "inference", gpus=1)    # or one pool of a parsed stack config
```
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, overload

from ..args.inputs import GpuAllocation, GpuNodes, SharingArgs, SharingStrategy, TaintArgs, TaintEffect
from ..catalog import lookup
from ..catalog.dra import NVLINK_LABELS
from ..config import ConfigError
from ..config.base import suggest
from ..config.capacity import capacity_order, eks_capacity_type, uses_compute_class
from ..config.dra import claims_gpus
from ..config.model import GpuPool, StackConfig
from . import claims, multinode
from .compute_class import LABEL as COMPUTE_CLASS_LABEL
from .compute_class import class_name
from .nodes import GPU_LABEL, GPU_TAINT, POOL_LABEL, pool_labels, pool_taints
from .sharing import gke_node_labels, resource_name, slots_per_gpu

Expr = dict[str, Any]


def _in(key: str, *values: str) -> Expr:
    return {"key": key, "operator": "In", "values": list(values)}


def _gke_common(pool: GpuPool) -> list[Expr]:
    gpu = lookup(pool.gpu)
    assert gpu is not None and gpu.gcp is not None
    exprs = [_in("cloud.google.com/gke-accelerator", gpu.gcp.accelerator)]
    if capacity_order("gke-standard", pool) == ("spot",):
        exprs.append(_in("cloud.google.com/gke-spot", "true"))
    exprs += [_in(k, v) for k, v in gke_node_labels(pool).items()]
    return exprs


def _gke_auto(platform: str, pool: GpuPool) -> list[Expr]:
    """NAP and Autopilot: the accelerator, and the class's ComputeClass where it has one (`compute_class.py`)."""
    own = [_in(COMPUTE_CLASS_LABEL, class_name(pool))] if uses_compute_class(platform, pool) else []
    return [*_gke_common(pool), *own]


def _gke_pool(pool: GpuPool) -> list[Expr]:
    return [_in("cloud.google.com/gke-nodepool", pool.name), *_gke_common(pool)]


def _eks_managed(pool: GpuPool) -> list[Expr]:
    return [_in(POOL_LABEL, pool.name), _in("eks.amazonaws.com/capacityType", eks_capacity_type(pool))]


def _karpenter(prefix: str, pool: GpuPool) -> list[Expr]:
    """Karpenter and Auto Mode: the NodePool, its capacity types and the GPU's name under the provider's label
    prefix."""
    gpu = lookup(pool.gpu)
    assert gpu is not None and gpu.aws is not None
    capacity = capacity_order("eks-karpenter", pool)
    return [
        _in("karpenter.sh/nodepool", pool.name),
        _in("karpenter.sh/capacity-type", *capacity),
        _in(f"{prefix}/instance-gpu-name", gpu.aws.gpu_name),
    ]


AFFINITY: Mapping[str, Callable[[GpuPool], list[Expr]]] = MappingProxyType(
    {
        "gke-standard": _gke_pool,
        "gke-nap": functools.partial(_gke_auto, "gke-nap"),
        "gke-autopilot": functools.partial(_gke_auto, "gke-autopilot"),
        "eks-managed": _eks_managed,
        "eks-karpenter": functools.partial(_karpenter, "karpenter.k8s.aws"),
        "eks-automode": functools.partial(_karpenter, "eks.amazonaws.com"),
    }
)
"""Platform -> node-affinity expressions selecting one pool's nodes, on labels that platform sets (module
functions bound by `partial`, not closures, so each call runs the function itself)."""

NODE_SELECTOR_PLATFORMS = ("gke-autopilot",)
"""Autopilot provisions GPU nodes from a pod's nodeSelector, so the fragment carries one as well."""


def tolerations(taints: list[TaintArgs]) -> list[dict[str, str]]:
    """The seed's tolerations: `nvidia.com/gpu` Exists, and each other taint of the pool (spot) by value."""
    out = []
    for t in taints:
        effect = str(t.get("effect") or "NoSchedule")  # TaintEffect is a StrEnum: str is the Kubernetes spelling
        if t["key"] == GPU_TAINT.key:
            out.append({"key": t["key"], "operator": "Exists", "effect": effect})
        else:
            out.append({"key": t["key"], "operator": "Equal", "value": t.get("value", ""), "effect": effect})
    return out


def find_pool(cfg: StackConfig, name: str) -> GpuPool:
    for p in cfg.gpuPools:
        if p.name == name:
            return p
    names = [p.name for p in cfg.gpuPools]
    raise ConfigError(
        [("pool", f"no GPU pool {name!r}{suggest(name, names)} in this stack (pools: {', '.join(names)})")]
    )


def ceiling(pool: GpuPool) -> int:
    """Most of the pool's resource it can offer: maxNodes x GPUs x units per GPU (the capacity summary's
    `slots_at_max`, `gpuplane.stack.capacity`)."""
    return pool.maxNodes * pool.gpusPerNode * slots_per_gpu(pool)


def gpu_nodes(platform: str, pool: GpuPool, labels: Mapping[str, str]) -> GpuNodes:
    """What one pool's nodes carry (`labels`: as the pool's resource sets them) and offer, on `platform`."""
    cloud = "gcp" if platform.startswith("gke") else "aws"
    shared = pool.sharing is not None and pool.sharing.strategy in ("time-slicing", "mps")
    exprs = AFFINITY[platform](pool)
    platform_labels = {e["key"]: e["values"][0] for e in exprs if len(e["values"]) == 1}
    taints = [TaintArgs(key=t.key, value=t.value, effect=TaintEffect(t.effect)) for t in pool_taints(cloud, pool)]
    compute_class = uses_compute_class(platform, pool)
    if compute_class:
        # GKE taints the nodes it creates for a class with the class (and tolerates it for pods that select
        # the class by nodeSelector); tolerating it here keeps the fragment and Kueue's flavor explicit.
        taints.append(TaintArgs(key=COMPUTE_CLASS_LABEL, value=class_name(pool), effect=TaintEffect.NO_SCHEDULE))
    nodes = GpuNodes(
        pool=pool.name,
        labels={**platform_labels, **labels},
        taints=taints,
        resource=resource_name(pool, cloud),
        # A slice of a shared GPU is a share of time (or of MPS threads), not more GPU: ask for one.
        capacity=1 if shared else pool.gpusPerNode * slots_per_gpu(pool),
        affinity=exprs,  # type: ignore[typeddict-item]
        nodes=pool.maxNodes,
        ceiling=ceiling(pool),
    )
    if platform in NODE_SELECTOR_PLATFORMS:
        nodes["selector"] = platform_labels
    elif compute_class:
        # GKE docs, "About custom ComputeClasses": pods request a class with a nodeSelector.
        nodes["selector"] = {COMPUTE_CLASS_LABEL: class_name(pool)}
    if claims_gpus(pool):
        nodes["allocation"] = GpuAllocation.DRA
    gpu = lookup(pool.gpu)
    if gpu is not None and gpu.multi_node_nvlink and gpu.nvlink_domain_gpus:
        nodes["nvlink_nodes"] = gpu.nvlink_domain_gpus // pool.gpusPerNode
        nodes["nvlink_label"] = NVLINK_LABELS[cloud]
    devices = multinode.devices(cloud, pool)
    if devices:
        nodes["devices"] = devices
    annotations = multinode.pod_annotations(cloud, pool)
    if annotations:
        nodes["annotations"] = annotations
    topology = multinode.topology_keys(cloud, pool)
    if topology:
        nodes["topology"] = topology
    if pool.sharing is not None:
        s = pool.sharing
        sharing = SharingArgs(strategy=SharingStrategy(s.strategy))
        if s.replicas is not None:
            sharing["replicas"] = s.replicas
        if s.migProfile is not None:
            sharing["profile"] = s.migProfile
        nodes["sharing"] = sharing
    return nodes


def stack_gpu_nodes(cfg: StackConfig) -> list[GpuNodes]:
    """Every pool of a stack config, as its pool component outputs it (platforms' `gpu_nodes`)."""
    return [gpu_nodes(cfg.platform, p, pool_labels(cfg.cluster.name, p, cfg.platform_spec.cloud)) for p in cfg.gpuPools]


def affinity_of(nodes: GpuNodes) -> list[dict[str, Any]]:
    """The node-affinity expressions that select one pool's nodes (a fresh copy): the pool's own, or the
    gpuplane pool label. Kueue's ResourceFlavor of the pool is built from the same expressions."""
    default = [{"key": POOL_LABEL, "operator": "In", "values": [nodes["pool"]]}]
    exprs: list[dict[str, Any]] = [dict(e) for e in nodes.get("affinity") or default]
    for e in exprs:
        if "values" in e:
            e["values"] = list(e["values"])
    return exprs


@overload
def placement(
    target: GpuNodes,
    *,
    gpus: int = 1,
    job: str | None = None,
    mig: str | None = None,
    selector: str | None = None,
    compute_domain: int | None = None,
) -> dict[str, Any]: ...
@overload
def placement(
    target: StackConfig,
    pool_name: str,
    gpus: int = 1,
    *,
    job: str | None = None,
    mig: str | None = None,
    selector: str | None = None,
    compute_domain: int | None = None,
) -> dict[str, Any]: ...
def placement(
    target: GpuNodes | StackConfig,
    pool_name: str | None = None,
    gpus: int = 1,
    job: str | None = None,
    mig: str | None = None,
    selector: str | None = None,
    compute_domain: int | None = None,
) -> dict[str, Any]:
    """Pod-spec fragments (`resources`, `affinity`, `tolerations`, and `nodeSelector` where the platform
    needs one) for `gpus` GPUs (or MIG slices / shared GPUs) on one pool: a pool component's `gpu_nodes`
    entry, or a pool of a parsed stack config by name.

    On a multi-node pool the resources also take the node's share of its EFA devices, and with `job` the
    fragment adds `labels` (put them on the pod) and a preferred pod affinity that packs the job's pods
    under the same closest network node (see `multinode.job_affinity`).

    On a pool with `gpuAllocation: dra` the pod claims its GPUs: the fragment has a `resourceClaimTemplate`
    (create it in the pod's namespace), the pod's `resourceClaims` and the container's `resources.claims`,
    and no GPU limits. `mig` claims MIG devices of that profile, `selector` adds a CEL selector on the
    driver's device attributes. `compute_domain` (GB200 / GB300 pools, with `job` as its name): a
    ComputeDomain for a job of that many nodes, whose channel every pod of the job claims, and a required
    pod affinity that keeps the job inside one NVLink domain (`claims.compute_domain`)."""
    if isinstance(target, StackConfig):
        pool = find_pool(target, str(pool_name))
        target = gpu_nodes(target.platform, pool, pool_labels(target.cluster.name, pool, target.platform_spec.cloud))
    nodes = target
    dra = claims.claims_on(nodes)
    wrong = [(k, v) for k, v in (("mig", mig), ("selector", selector)) if v is not None and not dra]
    if wrong:
        raise ConfigError(
            [
                (k, f"{nodes['pool']} counts GPUs through the device plugin; claims need gpuAllocation: dra")
                for k, _ in wrong
            ]
        )
    per_node = int(nodes.get("capacity", 1)) * _mig_units(nodes, mig)
    if not 1 <= gpus <= per_node:
        what = f"{mig} MIG devices" if mig else nodes["resource"]
        raise ConfigError([("gpus", f"{nodes['pool']} nodes offer 1 to {per_node} {what}, not {gpus}")])
    if compute_domain is not None and job is None:
        raise ConfigError([("job", "required with compute_domain: it names the job's ComputeDomain")])
    exprs = affinity_of(nodes)
    fragment: dict[str, Any] = {
        "resources": {"limits": {} if dra else {nodes["resource"]: gpus}},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}
            }
        },
        "tolerations": tolerations(list(nodes["taints"])),
    }
    if dra:
        template = claims.claim_template(nodes, gpus, mig, selector)
        parts = claims.claim_fragment(template)
        fragment["resourceClaimTemplate"] = template
        fragment["resourceClaims"] = parts["resourceClaims"]
        fragment["resources"]["claims"] = parts["claims"]
    if "selector" in nodes:
        fragment["nodeSelector"] = dict(nodes["selector"])
    if nodes.get("annotations"):
        fragment["annotations"] = dict(nodes["annotations"])
    for resource, count in multinode.device_share(nodes.get("devices") or {}, gpus, per_node).items():
        fragment["resources"]["limits"][resource] = count
    if not fragment["resources"]["limits"]:
        del fragment["resources"]["limits"]
    if job is not None:
        fragment["labels"] = {multinode.JOB_LABEL: job}
        affinity = multinode.job_affinity(job, list(nodes.get("topology") or []))
        if affinity:
            fragment["affinity"]["podAffinity"] = affinity
    if compute_domain is not None:
        domain = claims.compute_domain(nodes, str(job), compute_domain)
        fragment["computeDomain"] = domain["computeDomain"]
        fragment["resourceClaims"] = [*fragment.get("resourceClaims", []), *domain["resourceClaims"]]
        fragment["resources"]["claims"] = [*fragment["resources"].get("claims", []), *domain["claims"]]
        fragment["affinity"]["podAffinity"] = domain["podAffinity"]
    return fragment


def node_units(cfg: StackConfig, pool_name: str) -> int:
    """GPU units (GPUs, or MIG slices / shares on a sharing pool) one node of the pool offers."""
    pool = find_pool(cfg, pool_name)
    nodes = gpu_nodes(cfg.platform, pool, pool_labels(cfg.cluster.name, pool, cfg.platform_spec.cloud))
    return int(nodes.get("capacity", 1))


def _mig_units(nodes: GpuNodes, mig: str | None) -> int:
    """MIG devices of profile `mig` one GPU of the pool splits into (1 without `mig`; an unknown profile is
    reported by `claims.claim_template`)."""
    gpu = lookup(str(dict(nodes["labels"]).get(GPU_LABEL, "")))
    return gpu.mig_profiles.get(mig, 1) if mig and gpu is not None else 1


def pod(cfg: StackConfig, pool_name: str, gpus: int, name: str, image: str, command: list[str]) -> dict[str, Any]:
    """A whole Pod built from the fragment (what the smoke test and the README example use)."""
    f = placement(cfg, pool_name, gpus)
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": image, "command": command, "resources": f["resources"]}],
        **({"resourceClaims": f["resourceClaims"]} if "resourceClaims" in f else {}),
        "affinity": f["affinity"],
        "tolerations": f["tolerations"],
    }
    if "nodeSelector" in f:
        spec["nodeSelector"] = f["nodeSelector"]
    metadata: dict[str, Any] = {"name": name}
    if "annotations" in f:
        metadata["annotations"] = f["annotations"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
