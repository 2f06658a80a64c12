"""Dynamic Resource Allocation (DRA) facts: where GPU claims work, what the NVIDIA DRA driver creates, and
what a DRA node must carry. Data only; `config.dra` refuses what these tables rule out, `nvidia.dra`
renders the driver from them, and the deploy simulator checks claims against them.

Sources (checked 2026-12):
- Kubernetes: DRA is GA in 1.34, API group `resource.k8s.io/v1` (KEP-4381; kubernetes.io/docs/concepts/
  scheduling-eviction/dynamic-resource-allocation).
- NVIDIA DRA driver for GPUs, chart 0.4.1 (kubernetes-sigs/dra-driver-nvidia-gpu @ v0.4.1,
  deployments/helm/dra-driver-nvidia-gpu): DeviceClasses `gpu.nvidia.com`, `mig.nvidia.com`,
  `vfio.gpu.nvidia.com` (templates/deviceclass-gpu.yaml, deviceclass-mig.yaml, deviceclass-vfio-gpu.yaml:
  `resources.gpus.enabled`) and `compute-domain-daemon.nvidia.com`,
  `compute-domain-default-channel.nvidia.com` (templates/deviceclass-compute-domain-*.yaml,
  `resources.computeDomains.enabled`); the ComputeDomain CRD (resource.nvidia.com/v1beta1).
- GKE "Allocate devices with DRA" / "Set up DRA" (cloud.google.com/kubernetes-engine/docs/how-to/
  set-up-dra): GKE 1.34+, node pools with GPU driver installation disabled and labelled
  `gke-no-default-nvidia-gpu-device-plugin=true` and `nvidia.com/gpu.present=true`; not with node
  auto-provisioning, Autopilot, or GKE GPU sharing (time-sharing, MPS, multi-instance GPUs).
- Karpenter 1.14: no DRA-aware provisioning. A pod with any ResourceClaim never triggers a launch
  (`IGNORE_DRA_REQUESTS` defaults to true, kubernetes-sigs/karpenter v1.14.1 pkg/operator/options/options.go and
  pkg/controllers/provisioning/scheduling/scheduler.go; kubernetes-sigs/karpenter #1231;
  aws/karpenter-provider-aws #9519). EKS user guide, ml-eks-nvidia-ultraserver: "DRA is not supported in
  Karpenter or EKS Auto Mode".
- Chart 0.4.1 templates/validation.yaml: `resources.gpus.enabled` needs `gpuResourcesEnabledOverride: true`
  (the driver must not share a node with the device plugin); the controller Deployment exists only with
  `resources.computeDomains.enabled` (templates/controller.yaml).
- gpu-operator: an operand is kept off a node labelled `nvidia.com/gpu.deploy.<operand>=false` (NVIDIA
  GPU Operator docs, "Disabling operands on a node"; gpu-operator v26.7.0 controllers/state_manager.go).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

MIN_KUBERNETES = (1, 34)
"""The first Kubernetes minor that serves `resource.k8s.io/v1` (DRA GA)."""

ALLOCATIONS = ("device-plugin", "dra")
"""`gpuAllocation` values: count GPUs through the device plugin, or claim them through DRA."""

GPU_CLASS = "gpu.nvidia.com"
"""DeviceClass of whole GPUs (the driver's `resources.gpus`)."""
MIG_CLASS = "mig.nvidia.com"
"""DeviceClass of MIG devices (the driver's `resources.gpus`)."""
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
"""DeviceClass of a ComputeDomain's IMEX channel, which the driver's controller claims for a job's pods."""
DAEMON_CLASS = "compute-domain-daemon.nvidia.com"
"""DeviceClass of the IMEX daemon each ComputeDomain node runs."""

DEVICE_CLASSES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"gpus": (GPU_CLASS, MIG_CLASS, "vfio.gpu.nvidia.com"), "computeDomains": (CHANNEL_CLASS, DAEMON_CLASS)}
)
"""Driver chart `resources.<key>.enabled` -> the DeviceClasses that chart install creates."""

ATTRIBUTE_DOMAIN = "gpu.nvidia.com"
"""Qualifier of the attributes the driver publishes per device (`device.attributes['gpu.nvidia.com']`):
`type`, `productName`, `brand`, `architecture`, `profile` and `parentUUID` (MIG), `uuid`, `driverVersion`,
`cudaComputeCapability`;
capacity `device.capacity['gpu.nvidia.com'].memory` (cmd/gpu-kubelet-plugin/deviceinfo.go)."""


@dataclass(frozen=True)
class DraHost:
    """What the DRA driver needs to know about a cloud's GPU nodes."""

    driver_root: str
    """Where the node's NVIDIA driver lives (the chart's `nvidiaDriverRoot`)."""
    priority_quota: bool
    """The cloud admits `system-node-critical` pods (the driver's default priority class) outside kube-system
    only under a ResourceQuota (GKE; as for dcgm-exporter, `nvidia.dcgm.quota_manifest`)."""


DRA_HOSTS: Mapping[str, DraHost] = MappingProxyType(
    {
        # GKE installs the driver under /home/kubernetes/bin/nvidia (GKE "Set up DRA": nvidiaDriverRoot).
        "gcp": DraHost(driver_root="/home/kubernetes/bin/nvidia", priority_quota=True),
        # The EKS AL2023 NVIDIA AMI installs the driver on the host root (EKS user guide, ml-eks-optimized-ami).
        "aws": DraHost(driver_root="/", priority_quota=False),
    }
)
"""Cloud -> how the DRA driver finds the node's NVIDIA driver."""


@dataclass(frozen=True)
class PlatformDra:
    """Whether a platform can claim GPUs through DRA, and why not."""

    refused: str = ""
    """Empty: DRA works; otherwise why it can't, with the source."""


PLATFORM_DRA: Mapping[str, PlatformDra] = MappingProxyType(
    {
        "gke-standard": PlatformDra(),
        "eks-managed": PlatformDra(),
        "gke-nap": PlatformDra(
            refused='GKE node auto-provisioning does not create node pools for DRA (GKE docs, "Set up DRA", '
            "limitations)"
        ),
        "gke-autopilot": PlatformDra(
            refused='GKE Autopilot does not support DRA for GPUs (GKE docs, "Set up DRA", limitations)'
        ),
        "eks-karpenter": PlatformDra(
            refused="Karpenter does not launch nodes for pods that ask for GPUs through ResourceClaims: 1.14 ignores "
            "every pod with a claim (IGNORE_DRA_REQUESTS defaults to true, kubernetes-sigs/karpenter v1.14.1 "
            "pkg/operator/options/options.go), and its AWS provider has no ResourceSlice templates to launch for "
            "them (kubernetes-sigs/karpenter #1231, aws/karpenter-provider-aws #9519)"
        ),
        "eks-automode": PlatformDra(
            refused="EKS Auto Mode runs its own NVIDIA device plugin, which gpuplane cannot turn off on a node, and "
            "the EKS user guide says DRA is not supported in Karpenter or EKS Auto Mode (ml-eks-nvidia-ultraserver)"
        ),
    }
)
"""Platform -> its DRA support (every platform of the provider matrix has a row; a test holds it)."""

DRA_NODE_LABELS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        # GKE "Set up DRA": GKE's own device plugin stays off these nodes.
        "gcp": MappingProxyType({"gke-no-default-nvidia-gpu-device-plugin": "true"}),
        # gpu-operator (EKS): its device plugin stays off these nodes, so no GPU is offered twice.
        "aws": MappingProxyType({"nvidia.com/gpu.deploy.device-plugin": "false"}),
    }
)
"""Cloud -> the labels every node of a pool that claims GPUs through DRA carries (its device plugin off)."""

NO_MANUAL_DRIVER: Mapping[str, str] = MappingProxyType(
    {
        "a4x-maxgpu-": "GKE publishes no manual driver installer for A4X Max bare metal (GoogleCloudPlatform/"
        "container-engine-accelerators 992db812 nvidia-driver-installer/cos has the default and A4X ones only)",
    }
)
"""GKE machine-type prefix -> why a DRA pool (GKE's driver installation disabled) can't get a driver there."""

PLUGIN_NODE_LABELS: Mapping[str, str] = MappingProxyType(
    {
        # The chart's kubelet plugin requires NFD's NVIDIA PCI labels or this one (0.4.1 values.yaml
        # `kubeletPlugin.affinity`); GKE runs no NFD, and the EKS AL2023 NVIDIA AMI's nodeadm sets it itself.
        "nvidia.com/gpu.present": "true",
    }
)
"""Labels every node the DRA driver's kubelet plugin serves carries (GPU claims or ComputeDomains)."""

PLUGIN_LABEL = "gpuplane.io/dra-plugin"
"""gpuplane's node label (value `true`) on the nodes the DRA driver's kubelet plugin runs on: pools that claim
GPUs through DRA, and pools whose GPUs share an NVLink domain across nodes (ComputeDomains)."""

NVLINK_LABELS: Mapping[str, str] = MappingProxyType(
    {
        # GPU Feature Discovery's `<clusterUUID>.<cliqueID>` from NVML (NVIDIA/k8s-device-plugin internal/lm/imex.go);
        # the EKS user guide (ml-eks-nvidia-ultraserver) runs the gpu-operator's GFD for it, as gpuplane does.
        "aws": "nvidia.com/gpu.clique",
        # GKE sets no GFD labels; its A4X nodes carry the gce-topology labels (catalog.topology), and an A4X
        # sub-block is one NVL72 rack of 18 machines (Cluster Director "VM and cluster topology"; not re-read
        # offline: verify before relying on it).
        "gcp": "cloud.google.com/gce-topology-subblock",
    }
)
"""Cloud -> the node label whose value names a node's NVLink domain (a job's pods stay within one value)."""


def version_tuple(version: str) -> tuple[int, int] | None:
    """`1.35` or `1.35.2-eks` -> (1, 35); None for anything else."""
    parts = version.split(".")
    if len(parts) < 2 or not parts[0].isdigit():
        return None
    minor = "".join(ch for ch in parts[1] if ch.isdigit())
    return (int(parts[0]), int(minor)) if minor else None


__all__ = [
    "ALLOCATIONS",
    "ATTRIBUTE_DOMAIN",
    "CHANNEL_CLASS",
    "DAEMON_CLASS",
    "DEVICE_CLASSES",
    "DRA_HOSTS",
    "DraHost",
    "DRA_NODE_LABELS",
    "GPU_CLASS",
    "MIG_CLASS",
    "NO_MANUAL_DRIVER",
    "MIN_KUBERNETES",
    "NVLINK_LABELS",
    "PLATFORM_DRA",
    "PLUGIN_LABEL",
    "PLUGIN_NODE_LABELS",
    "PlatformDra",
    "version_tuple",
]
