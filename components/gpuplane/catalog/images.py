"""EKS node images as data: what each AMI type ships for GPUs, and so what the gpu-operator must add.

Sources: AWS EKS user guide ("Amazon EKS optimized accelerated AMIs", Bottlerocket NVIDIA variants):
the AL2023 NVIDIA AMI ships the driver and container toolkit but no device plugin; Bottlerocket NVIDIA
ships driver, toolkit and device plugin; the AL2023 standard AMI ships none of them. AMI type names are
the EKS API's (`AMITypes` in botocore's EKS model; tests check them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class NodeImage:
    """One EKS AMI type and its NVIDIA software."""

    ami_type: str
    os: str
    driver: bool
    """The image ships the NVIDIA driver."""
    toolkit: bool
    """The image ships and configures the NVIDIA container toolkit."""
    device_plugin: bool
    """The image runs the NVIDIA device plugin itself."""
    mig_manager: bool
    """The gpu-operator's MIG manager can run on it (Bottlerocket partitions MIG through its own settings)."""
    data_device: str
    """Block device that holds container images (sized for CUDA images)."""
    karpenter_alias: str
    """Karpenter EC2NodeClass `amiSelectorTerms[].alias` family."""
    arch: str = "x86_64"
    """CPU architecture of the image (`x86_64` or `arm64`); it must match the instance types'."""
    os_volume_gb: int = 0
    """Size of a separate OS volume on `/dev/xvda` (Bottlerocket's), or 0 when the data device is the root."""
    parallel_pull: str = ""
    """How the image turns on SOCI parallel pull (`gpuPools[].coldStart.parallelPull`), in its user data:
    `nodeadm` (AL2023: a NodeConfig with `featureGates.FastImagePull: true` in a MIME part; soci-snapshotter is
    installed in every AL2023 AMI, awslabs/amazon-eks-ami templates/al2023/provisioners/install-worker.sh,
    nodeadm/doc/examples.md), `bottlerocket` (TOML `settings.container-runtime.snapshotter = "soci"` and the
    soci-snapshotter plugin's `pull-mode = "parallel-pull-unpack"`, Bottlerocket 1.44.0+,
    https://bottlerocket.dev/en/os/1.44.x/api/settings/container-runtime-plugins), or empty: not supported."""
    parallel_pull_from: str = ""
    """The first image release with parallel pull (a Karpenter `amiVersion` older than it keeps it off):
    AL2023 v20250813 (amazon-eks-ami CHANGELOG, #2352), Bottlerocket 1.44.0."""
    image_cache_device: str = ""
    """The device a pool's `coldStart.imageCacheSnapshot` restores (Bottlerocket's `/dev/xvdb` data volume holds
    containerd's images: aws-samples/bottlerocket-images-cache README), or empty: the image has no separate
    data volume to restore."""

    def volumes(self, data_gb: int) -> list[tuple[str, int]]:
        """(device, GiB) of every EBS volume a node gets; gpuplane maps each one, encrypted."""
        os_volume = [("/dev/xvda", self.os_volume_gb)] if self.os_volume_gb else []
        return [*os_volume, (self.data_device, data_gb)]

    @property
    def operator_installs_driver(self) -> bool:
        return not self.driver


AL2023_SOCI_FROM = "v20250813"
"""The first AL2023 release with SOCI parallel pull (awslabs/amazon-eks-ami CHANGELOG, #2352); every AL2023 AMI
since ships soci-snapshotter. nodeadm ignores the gate on nodes under 7 GiB / 4 vCPU
(nodeadm/internal/containerd/config.go), which no GPU instance is."""


def release_at_least(version: str, first: str) -> bool:
    """Whether a Karpenter `amiVersion` (`latest`, `v20250813`, `1.44.0`) is `first` or newer; a version in the
    other family's scheme (a dated one for Bottlerocket) can't be compared and counts as newer."""
    if version == "latest" or not first or version.startswith("v") != first.startswith("v"):
        return True
    if first.startswith("v"):
        return version >= first
    return tuple(int(x) for x in version.split(".")) >= tuple(int(x) for x in first.split("."))


NODE_IMAGES: Mapping[str, NodeImage] = MappingProxyType(
    {
        i.ami_type: i
        for i in (
            NodeImage(
                ami_type="AL2023_x86_64_NVIDIA",
                os="AL2023",
                driver=True,
                toolkit=True,
                device_plugin=False,
                mig_manager=True,
                data_device="/dev/xvda",
                karpenter_alias="al2023",
                parallel_pull="nodeadm",
                parallel_pull_from=AL2023_SOCI_FROM,
            ),
            # The Arm (Graviton / Grace) variant: P6e-GB200 UltraServers take it (EKS user guide,
            # ml-eks-nvidia-ultraserver: AL2023 ARM NVIDIA AMI with the driver, fabric manager and IMEX driver).
            NodeImage(
                ami_type="AL2023_ARM_64_NVIDIA",
                os="AL2023",
                driver=True,
                toolkit=True,
                device_plugin=False,
                mig_manager=True,
                data_device="/dev/xvda",
                karpenter_alias="al2023",
                arch="arm64",
                parallel_pull="nodeadm",
                parallel_pull_from=AL2023_SOCI_FROM,
            ),
            NodeImage(
                ami_type="BOTTLEROCKET_x86_64_NVIDIA",
                os="Bottlerocket",
                driver=True,
                toolkit=True,
                device_plugin=True,
                mig_manager=False,
                data_device="/dev/xvdb",
                karpenter_alias="bottlerocket",
                os_volume_gb=4,  # Bottlerocket's OS volume, as Karpenter's Bottlerocket default maps it
                parallel_pull="bottlerocket",
                parallel_pull_from="1.44.0",
                image_cache_device="/dev/xvdb",
            ),
            NodeImage(
                ami_type="AL2023_x86_64_STANDARD",
                os="AL2023",
                driver=False,
                toolkit=False,
                device_plugin=False,
                mig_manager=True,
                data_device="/dev/xvda",
                karpenter_alias="al2023",
                parallel_pull="nodeadm",
                parallel_pull_from=AL2023_SOCI_FROM,
            ),
        )
    }
)
"""AMI type -> what it ships. The default GPU image is `AL2023_x86_64_NVIDIA`."""

DEFAULT_GPU_IMAGE = "AL2023_x86_64_NVIDIA"

ARM_TYPES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        # EC2 "Accelerated computing instances": P6e-GB200 pairs Blackwell GPUs with Grace (Arm) CPUs.
        "aws": ("p6e-gb200.", "p6e-gb300.", "g5g."),
        # Compute Engine machine families with Arm CPUs: A4X (NVIDIA Grace), C4A (Axion), T2A (Ampere Altra); GKE
        # taints Arm nodes `kubernetes.io/arch=arm64:NoSchedule` (GKE docs, "Arm workloads on GKE").
        "gcp": ("a4x-", "c4a-", "t2a-"),
    }
)
"""Cloud -> instance / machine type prefixes with Arm CPUs (all other GPU machines are x86_64)."""


def arch_of(cloud: str, machine: str) -> str:
    """`arm64` or `x86_64` for an instance (AWS) or machine (GCP) type."""
    return "arm64" if machine.startswith(ARM_TYPES.get(cloud, ())) else "x86_64"


SYSTEM_IMAGE = "AL2023_x86_64_STANDARD"
"""The system (non-GPU) node group's image."""


def operator_components(image: NodeImage) -> dict[str, bool]:
    """What the gpu-operator must deploy on nodes of this image (the seed's EKS column)."""
    return {
        "driver": not image.driver,
        "toolkit": not image.toolkit,
        "devicePlugin": not image.device_plugin,
        "migManager": image.mig_manager,
    }
