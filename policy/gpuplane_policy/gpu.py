"""What counts as a GPU: resource names, instance and machine types, node labels, taints and tolerations.

Everything here is read from plain property values, so it applies to any Pulumi program, not only to
gpuplane's components.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .props import get, items, mapping, number

GPU_TAINT_KEY = "nvidia.com/gpu"
"""The taint that keeps pods that request no GPU off GPU nodes (GKE applies the same key on its own)."""

REPELLING_EFFECTS = frozenset({"NO_SCHEDULE", "NoSchedule", "NO_EXECUTE", "NoExecute"})
"""Taint effects that keep non-tolerating pods off a node (GKE/EKS spelling and Kubernetes spelling).
`PreferNoSchedule` does not: the scheduler still uses the node when nothing else fits."""

KARPENTER_GPU_LIMIT = "nvidia.com/gpu"
"""The resource a Karpenter NodePool's `spec.limits` caps GPUs with (instance capacity, also under MIG)."""

AWS_NVIDIA_FAMILY_PREFIXES = ("g3", "g4dn", "g5", "g6", "g7", "gr6", "p2", "p3", "p4", "p5", "p6")
"""EC2 instance families with NVIDIA GPUs, as prefixes of the family: `g6` covers g6, g6e and g6f, `p5`
covers p5, p5e and p5en, `p6` covers p6-b200 and p6e-gb200. `g4ad` (AMD) is not one."""

GCP_GPU_MACHINE_FAMILIES = frozenset({"a2", "a3", "a4", "a4x", "g2", "g4"})
"""Compute Engine machine families that come with GPUs attached (accelerator-optimized)."""

AWS_GPU_CATEGORIES = frozenset({"g", "p"})
"""Karpenter/Auto Mode `instance-category` values whose instances have GPUs."""

_NODE_SCHEDULERS = ("karpenter.k8s.aws/", "eks.amazonaws.com/")
_COUNT_KEYS = frozenset(f"{p}instance-gpu-count" for p in _NODE_SCHEDULERS) | {"nvidia.com/gpu.count"}
_FAMILY_KEYS = frozenset(f"{p}instance-family" for p in _NODE_SCHEDULERS)
_CATEGORY_KEYS = frozenset(f"{p}instance-category" for p in _NODE_SCHEDULERS)
_INSTANCE_TYPE_KEYS = frozenset({"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"})
_MACHINE_FAMILY_KEYS = frozenset({"cloud.google.com/machine-family"})
_PRESENCE_KEYS = frozenset(
    {
        "cloud.google.com/gke-accelerator",
        "k8s.amazonaws.com/accelerator",
        "nvidia.com/gpu",
        "gpuplane.io/gpu",
    }
)
"""Labels only GPU nodes carry (any value but "false"/"0"): GKE's and cluster-autoscaler's accelerator
labels, gpuplane's pool label for the GPU model, and those below by prefix."""
_PRESENCE_PREFIXES = (
    "nvidia.com/gpu.",  # GPU feature discovery: gpu.present, gpu.product, gpu.memory, ...
    "nvidia.com/mig.",
    "cloud.google.com/gke-gpu",  # gke-gpu-sharing-strategy, gke-gpu-partition-size, gke-gpu-driver-version
    *(f"{p}instance-gpu-" for p in _NODE_SCHEDULERS),  # instance-gpu-name, -manufacturer, -memory
)


def is_gpu_resource(name: str) -> bool:
    """A Kubernetes extended resource that is (a share of) an NVIDIA GPU: `nvidia.com/gpu`, the device
    plugin's renamed shared resources (`nvidia.com/gpu.shared`) and MIG slices (`nvidia.com/mig-1g.5gb`)."""
    return name == "nvidia.com/gpu" or name.startswith(("nvidia.com/gpu.", "nvidia.com/mig-"))


def is_gpu_aws_family(family: str) -> bool:
    return family.lower().startswith(AWS_NVIDIA_FAMILY_PREFIXES)


def is_gpu_instance_type(instance_type: str) -> bool:
    """An EC2 instance type (`g5.2xlarge`) or a Compute Engine machine type (`a3-highgpu-8g`) with GPUs."""
    name = instance_type.strip().lower()
    if "." in name:
        return is_gpu_aws_family(name.split(".", 1)[0])
    return name.split("-", 1)[0] in GCP_GPU_MACHINE_FAMILIES


def value_is_gpu(key: str, value: Any) -> bool | None:
    """Whether a node carrying label `key=value` has GPUs; None when `key` says nothing about GPUs."""
    text = str(value).strip()
    if key in _COUNT_KEYS:
        count = number(text)
        return count is not None and count > 0
    if key in _FAMILY_KEYS:
        return is_gpu_aws_family(text)
    if key in _CATEGORY_KEYS:
        return text.lower() in AWS_GPU_CATEGORIES
    if key in _INSTANCE_TYPE_KEYS:
        return is_gpu_instance_type(text)
    if key in _MACHINE_FAMILY_KEYS:
        return text.lower() in GCP_GPU_MACHINE_FAMILIES
    if key in _PRESENCE_KEYS or key.startswith(_PRESENCE_PREFIXES):
        return text.lower() not in ("", "false", "0")
    return None


def _presence_key(key: str) -> bool:
    return key in _COUNT_KEYS or key in _PRESENCE_KEYS or key.startswith(_PRESENCE_PREFIXES)


def requirement_allows_gpu(req: Mapping[str, Any]) -> bool:
    """Whether a node selector requirement (`key`, `operator`, `values`) admits some GPU node: the test
    for "this Karpenter NodePool launches GPU instances"."""
    key, op = str(get(req, "key") or ""), str(get(req, "operator") or "")
    values = [str(v) for v in items(get(req, "values"))]
    if op == "In":
        return any(value_is_gpu(key, v) for v in values)
    if op in ("Exists", "Gt"):
        return _presence_key(key)
    return False


def requirement_needs_gpu(req: Mapping[str, Any]) -> bool:
    """Whether a node selector requirement admits only GPU nodes: the test for "this pod is pinned to
    GPU nodes"."""
    key, op = str(get(req, "key") or ""), str(get(req, "operator") or "")
    values = [str(v) for v in items(get(req, "values"))]
    if op == "In":
        return bool(values) and all(value_is_gpu(key, v) for v in values)
    if op in ("Exists", "Gt"):
        return _presence_key(key)
    return False


def labels_gpu(labels: Any) -> list[str]:
    """The GPU labels among a label map, as `key=value`."""
    return [f"{k}={v}" for k, v in mapping(labels).items() if value_is_gpu(k, v)]


def has_gpu_taint_key(taints: Any) -> bool:
    return any(get(t, "key") == GPU_TAINT_KEY for t in items(taints))


def repels_non_gpu_pods(taints: Any) -> bool:
    """Whether the taints include `nvidia.com/gpu` with an effect that keeps other pods off."""
    return any(get(t, "key") == GPU_TAINT_KEY and get(t, "effect") in REPELLING_EFFECTS for t in items(taints))


def tolerates_gpu_taint(tolerations: Any) -> bool:
    """Whether pod tolerations cover the `nvidia.com/gpu` NoSchedule taint, whatever its value: `Exists`
    on the key (or on every key), or `Equal` on the key with any value, with no effect or NoSchedule."""
    for t in items(tolerations):
        if get(t, "effect") not in (None, "", "NoSchedule"):
            continue
        key, op = get(t, "key") or "", get(t, "operator") or "Equal"
        if op == "Exists" and key in ("", GPU_TAINT_KEY):
            return True
        if op == "Equal" and key == GPU_TAINT_KEY:
            return True
    return False
