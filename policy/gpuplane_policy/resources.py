"""Pulumi type tokens the pack looks at, and uniform views of GPU node pools and pod specs.

Resources are recognised by type token and engine-format (camelCase) properties, never by the classes
that made them, so a raw pulumi-gcp/pulumi-aws/pulumi-kubernetes/pulumi-eks program is checked exactly
like one built from gpuplane's components.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .gpu import (
    KARPENTER_GPU_LIMIT,
    has_gpu_taint_key,
    is_gpu_instance_type,
    is_gpu_resource,
    labels_gpu,
    requirement_allows_gpu,
    requirement_needs_gpu,
    value_is_gpu,
)
from .props import get, has, items, mapping

GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
"""pulumi-eks's component. Its inputs mirror `aws:eks/nodeGroup:NodeGroup` (plus `gpu`, `enableIMDSv2`
and defaults of its own); it creates one such NodeGroup as a child, which `pulumi preview` checks too."""
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EC2_INSTANCE = "aws:ec2/instance:Instance"
KARPENTER_NODE_POOLS = frozenset({"kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.sh/v1beta1:NodePool"})
"""Karpenter NodePools, and EKS Auto Mode's, which use the same CRD."""
EC2_NODE_CLASSES = frozenset(
    {"kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:karpenter.k8s.aws/v1beta1:EC2NodeClass"}
)

POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "kubernetes:core/v1:Pod": ("spec",),
    "kubernetes:core/v1:ReplicationController": ("spec", "template", "spec"),
    "kubernetes:apps/v1:Deployment": ("spec", "template", "spec"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template", "spec"),
    "kubernetes:batch/v1:Job": ("spec", "template", "spec"),
    "kubernetes:batch/v1:CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
"""Where each workload keeps its pod spec."""
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"


@dataclass(frozen=True)
class GpuPool:
    """A GPU node pool of any platform, as the taint rule sees it."""

    kind: str
    """`GKE node pool`, `EKS node group` or `Karpenter NodePool`, for messages."""
    taints: Any
    """The pool's taints (list of maps with `key` and `effect`)."""


def _gke_pool_is_gpu(props: Mapping[str, Any]) -> bool:
    nc = get(props, "nodeConfig")
    return bool(
        items(get(nc, "guestAccelerators"))
        or is_gpu_instance_type(str(get(nc, "machineType") or "-"))
        or labels_gpu(get(nc, "labels"))
        or has_gpu_taint_key(get(nc, "taints"))
    )


def _eks_group_is_gpu(props: Mapping[str, Any]) -> bool:
    ami = str(get(props, "amiType") or "").upper()
    return bool(
        "NVIDIA" in ami
        or ami.endswith("_GPU")
        or get(props, "gpu") is True  # pulumi-eks: pick the GPU AMI
        or any(is_gpu_instance_type(str(t)) for t in items(get(props, "instanceTypes")))
        or labels_gpu(get(props, "labels"))
        or has_gpu_taint_key(get(props, "taints"))
    )


def _karpenter_pool_is_gpu(props: Mapping[str, Any]) -> bool:
    template = get(props, "spec", "template")
    return bool(
        any(requirement_allows_gpu(mapping(r)) for r in items(get(template, "spec", "requirements")))
        or labels_gpu(get(template, "metadata", "labels"))
        or has_gpu_taint_key(get(template, "spec", "taints"))
        or has(get(props, "spec", "limits"), KARPENTER_GPU_LIMIT)
    )


def gpu_pool(resource_type: str, props: Mapping[str, Any]) -> GpuPool | None:
    """The GPU node pool this resource declares, or None when it declares none."""
    if resource_type == GKE_NODE_POOL and _gke_pool_is_gpu(props):
        return GpuPool("GKE node pool", get(props, "nodeConfig", "taints"))
    if resource_type in (EKS_NODE_GROUP, EKS_MANAGED_NODE_GROUP) and _eks_group_is_gpu(props):
        return GpuPool("EKS node group", get(props, "taints"))
    if resource_type in KARPENTER_NODE_POOLS and _karpenter_pool_is_gpu(props):
        return GpuPool("Karpenter NodePool", get(props, "spec", "template", "spec", "taints"))
    return None


def is_nap_cluster(resource_type: str, props: Mapping[str, Any]) -> bool:
    """A GKE Standard cluster with node auto-provisioning on. Autopilot clusters are not: Google sizes
    their nodes per pod, and they take no resource limits."""
    return (
        resource_type == GKE_CLUSTER
        and get(props, "enableAutopilot") is not True
        and get(props, "clusterAutoscaling", "enabled") is True
    )


def pod_spec(resource_type: str, props: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of a Pod or a workload's pod template."""
    path = POD_SPEC_PATHS.get(resource_type)
    if path is None:
        return None
    spec = get(props, *path)
    return spec if isinstance(spec, Mapping) else None


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Init containers and containers (ephemeral containers take no resources)."""
    return [mapping(c) for c in (*items(get(spec, "initContainers")), *items(get(spec, "containers")))]


def gpu_resources(container: Mapping[str, Any], section: str) -> dict[str, Any]:
    """The GPU resources in a container's `resources.requests` or `resources.limits`."""
    return {k: v for k, v in mapping(get(container, "resources", section)).items() if is_gpu_resource(k)}


def requests_gpu(spec: Mapping[str, Any]) -> list[str]:
    """The GPU resources any container of the pod asks for (in requests or limits), sorted."""
    names: set[str] = set()
    for c in containers(spec):
        names |= set(gpu_resources(c, "requests")) | set(gpu_resources(c, "limits"))
    return sorted(names)


def gpu_node_targeting(spec: Mapping[str, Any]) -> str | None:
    """How the pod is pinned to GPU nodes (a nodeSelector label, or required node affinity every term
    of which admits only GPU nodes), or None when it is not."""
    for key, value in mapping(get(spec, "nodeSelector")).items():
        if value_is_gpu(key, value):
            return f"nodeSelector {key}={value}"
    required = get(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    terms = items(get(required, "nodeSelectorTerms"))
    pinned: list[str] = []
    for term in terms:
        hit = next((e for e in items(get(term, "matchExpressions")) if requirement_needs_gpu(mapping(e))), None)
        if hit is None:
            return None
        pinned.append(str(get(hit, "key")))
    if pinned:
        return "required node affinity on " + ", ".join(sorted(set(pinned)))
    return None
