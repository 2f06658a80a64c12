"""Cold start of a GPU pool: `gpuplane:gpuPools[].coldStart` (docs/cold-start.md), what each platform turns on
by default, and the rules that refuse what a platform can't do.

- GKE image streaming (`node_config.gcfs_config`; on gke-nap the cluster's `node_pool_defaults`, which also
  covers auto-provisioned pools): https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming.
  Autopilot always streams (1.25.5-gke.1000+, same page).
- GKE secondary boot disks (`node_config.secondary_boot_disks`, mode CONTAINER_IMAGE_CACHE; needs image streaming
  and GKE 1.28.3-gke.1067000): https://cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading.
- EKS SOCI parallel pull: how each node image turns it on is data (`catalog.images.NodeImage.parallel_pull`).
  EKS Auto Mode has it built in (aws-samples/karpenter-blueprints soci-snapshotter README, Auto Mode section).
- EKS Bottlerocket image cache: the `/dev/xvdb` data volume restored from an EBS snapshot
  (aws-samples/bottlerocket-images-cache README).
- gp3 throughput of the data volume: 125-1000 MiB/s (the Karpenter EC2NodeClass CRD and pulumi_aws document
  1000 as the maximum); 600 where parallel pull is on (awslabs/amazon-eks-ami nodeadm docs recommend at least
  600 MiB/s for SOCI). gp3 gives at most 0.25 MiB/s per provisioned IOPS, so above 750 MiB/s the IOPS rise to
  throughput x 4 (AWS EBS gp3 docs; aws-storage.md section 9).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from pydantic import Field, ValidationInfo, field_validator

from ..catalog import NODE_IMAGES, Platform
from ..catalog.dra import version_tuple
from ..catalog.images import release_at_least
from .base import Model as _Model
from .base import context_value, shaped

if TYPE_CHECKING:
    from .model import GpuPool, StackConfig

SOCI_THROUGHPUT = 600
"""MiB/s of the data volume where parallel pull is on (amazon-eks-ami nodeadm docs: at least 600 for SOCI)."""
GP3_MIBPS_PER_IOPS = 0.25
GP3_BASE_IOPS = 3000
SECONDARY_BOOT_DISK_MIN = (1, 28, 3, 1067000)
"""GKE 1.28.3-gke.1067000: the first Standard version with secondary boot disks (GKE data-container-image-
preloading how-to; pulumi_gcp's docstring has the same version with a digit missing)."""

_STREAMING_SCOPE: Mapping[str, str] = MappingProxyType(
    {"gke-standard": "pool", "gke-nap": "cluster", "gke-autopilot": "always"}
)
"""Where image streaming is set per platform: each node pool, the cluster's node pool defaults (NAP), or
always on (Autopilot). Other platforms have none."""
_PARALLEL_PULL: Mapping[str, str] = MappingProxyType(
    {"eks-managed": "user-data", "eks-karpenter": "user-data", "eks-automode": "built-in"}
)
"""Where SOCI parallel pull is set: the node image's user data (launch template, EC2NodeClass), or built in."""
_EBS = ("eks-managed", "eks-karpenter")
"""Platforms whose GPU nodes' EBS volumes gpuplane maps (launch templates, EC2NodeClasses)."""


class ColdStart(_Model):
    """How fast a pool's new nodes get their container images (docs/cold-start.md).

    Unset keys take the platform's default; the capacity summary estimates each pool's cold start."""

    imageStreaming: bool | None = None
    """GKE image streaming (Artifact Registry images start before they are pulled). Unset: on for gke-standard
    pools and gke-nap (cluster-wide); gke-autopilot always streams. Needs the Container File System API."""
    secondaryBootDisk: str | None = Field(
        default=None,
        pattern=shaped(
            r"^(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/)?global/images/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$",
            "must be a disk image: global/images/NAME or projects/PROJECT/global/images/NAME",
        ),
    )
    """GKE Standard: your disk image with container images preloaded (`global/images/NAME` or
    `projects/PROJECT/global/images/NAME`, built with gke-disk-image-builder), attached to every node as a
    secondary boot disk (CONTAINER_IMAGE_CACHE). Needs image streaming and GKE 1.28.3-gke.1067000+; changing it
    replaces the node pool."""
    parallelPull: bool | None = None
    """EKS: SOCI parallel pull (layers downloaded and unpacked in parallel). Unset: on where the node image has
    it (AL2023 v20250813+, Bottlerocket 1.44.0+); eks-automode has it built in."""
    imageCacheSnapshot: str | None = Field(
        default=None,
        pattern=shaped(
            r"^snap-([0-9a-f]{8}|[0-9a-f]{17})$", "must be an EBS snapshot ID: snap- and 8 or 17 hex digits"
        ),
    )
    """EKS Bottlerocket pools: an EBS snapshot of a data volume with container images cached
    (aws-samples/bottlerocket-images-cache) to restore on `/dev/xvdb`. It must be encrypted (or the account
    encrypt new volumes by default): a volume made from a snapshot takes the snapshot's encryption."""
    diskThroughputMiBps: int | None = Field(default=None, ge=125, le=1000)
    """EKS: gp3 throughput of the volume that holds container images, 125-1000 MiB/s. Unset: 600 where parallel
    pull is on, else gp3's 125. Above 750 the volume's IOPS rise to 4 per MiB/s (gp3's limit)."""
    imageSizeGb: float = Field(default=10, gt=0, le=500)
    """Compressed size of the pool's largest container image, in GB: only for the cold-start estimate."""

    @field_validator("imageStreaming")
    @classmethod
    def _streaming_on_platform(cls, v: bool | None, info: ValidationInfo) -> bool | None:
        platform = context_value(info, "platform")
        if v is None or not isinstance(platform, Platform):
            return v
        scope = _STREAMING_SCOPE.get(platform.name)
        if scope is None:
            raise ValueError(f"applies to GKE, not {platform.name} (EKS pulls faster with parallelPull)")
        if scope == "always":
            raise ValueError("gke-autopilot always streams images (GKE 1.25.5-gke.1000 and later): remove it")
        return v

    @field_validator("secondaryBootDisk")
    @classmethod
    def _boot_disk_on_platform(cls, v: str | None, info: ValidationInfo) -> str | None:
        platform = context_value(info, "platform")
        if v is None or not isinstance(platform, Platform):
            return v
        if platform.cloud != "gcp":
            raise ValueError(f"applies to GKE Standard, not {platform.name} (on EKS Bottlerocket: imageCacheSnapshot)")
        if _STREAMING_SCOPE.get(platform.name) != "pool":
            raise ValueError(
                f"not supported on {platform.name} yet: its nodes would need a ComputeClass with secondaryBootDisks "
                "and a GCPResourceAllowlist for the image"
            )
        if info.data.get("imageStreaming") is False:
            raise ValueError("needs image streaming (GKE): remove imageStreaming: false")
        return v

    @field_validator("parallelPull")
    @classmethod
    def _parallel_pull_on_platform(cls, v: bool | None, info: ValidationInfo) -> bool | None:
        platform = context_value(info, "platform")
        if v is None or not isinstance(platform, Platform):
            return v
        where = _PARALLEL_PULL.get(platform.name)
        if where is None:
            raise ValueError(f"applies to EKS, not {platform.name} (GKE streams images: imageStreaming)")
        if where == "built-in":
            raise ValueError(
                "eks-automode has SOCI parallel pull built in (on G, P and Trn instances with local NVMe): remove it"
            )
        return v

    @field_validator("imageCacheSnapshot", "diskThroughputMiBps")
    @classmethod
    def _ebs_on_platform(cls, v: object, info: ValidationInfo) -> object:
        platform = context_value(info, "platform")
        if v is None or not isinstance(platform, Platform) or platform.name in _EBS:
            return v
        if platform.cloud == "aws":
            raise ValueError(f"not supported on {platform.name} yet: gpuplane maps no EBS volumes of its nodes")
        other = "diskType and diskSizeGb" if info.field_name == "diskThroughputMiBps" else "secondaryBootDisk"
        raise ValueError(f"applies to EKS EBS volumes, not {platform.name} (on GKE: {other})")


@dataclass(frozen=True)
class ColdStartPlan:
    """What a pool's nodes get, with every default filled in."""

    image_streaming: bool
    secondary_boot_disk: str | None
    parallel_pull: str
    """How the pool's image turns parallel pull on (`NodeImage.parallel_pull`), or empty when it is off (or
    built in, eks-automode: see `built_in`)."""
    snapshot: str | None
    throughput: int | None
    iops: int | None
    built_in: bool = False

    @property
    def method(self) -> str:
        """The pull method the estimate uses (`catalog.coldstart.METHODS`)."""
        if self.snapshot:
            return "snapshot-cache"
        if self.secondary_boot_disk:
            return "secondary-boot-disk"
        if self.image_streaming:
            return "image-streaming"
        if self.parallel_pull or self.built_in:
            return "soci-parallel"
        return "default"


NO_COLD_START = ColdStartPlan(
    image_streaming=False, secondary_boot_disk=None, parallel_pull="", snapshot=None, throughput=None, iops=None
)
"""Nothing added: the system node group, and any node group without a GPU pool's settings."""


def _iops(throughput: int | None) -> int | None:
    """gp3 needs at least throughput / 0.25 IOPS; its included 3,000 cover up to 750 MiB/s."""
    if throughput is None or throughput <= GP3_BASE_IOPS * GP3_MIBPS_PER_IOPS:
        return None
    return int(throughput / GP3_MIBPS_PER_IOPS)


def plan(platform: str, pool: GpuPool, pools: Sequence[GpuPool] = (), ami_version: str = "latest") -> ColdStartPlan:
    """The pool's cold-start settings on `platform`: its keys, or the platform's defaults. `pools`: all the
    stack's pools (gke-nap sets image streaming for the whole cluster); `ami_version`: Karpenter's pinned
    image release (older images lack parallel pull)."""
    cs = pool.coldStart
    scope = _STREAMING_SCOPE.get(platform)
    if scope == "cluster":
        streaming = nap_image_streaming(pools or [pool])
    else:
        streaming = scope == "always" or (scope == "pool" and cs.imageStreaming is not False)
    how = ""
    if _PARALLEL_PULL.get(platform) == "user-data":
        image = NODE_IMAGES[pool.amiType]
        offered = image.parallel_pull if release_at_least(ami_version, image.parallel_pull_from) else ""
        # a snapshot's cached images are containerd's own (overlayfs): switching the snapshotter to soci wipes
        # /var/lib/containerd (Bottlerocket container-runtime settings, 1.44.x), so a cache keeps parallel pull off
        wanted = cs.parallelPull if cs.parallelPull is not None else not cs.imageCacheSnapshot
        how = offered if wanted else ""
    throughput = cs.diskThroughputMiBps
    if throughput is None and how:
        throughput = SOCI_THROUGHPUT
    ebs = platform in _EBS
    return ColdStartPlan(
        image_streaming=streaming,
        secondary_boot_disk=cs.secondaryBootDisk if scope == "pool" else None,
        parallel_pull=how,
        snapshot=cs.imageCacheSnapshot if ebs else None,
        throughput=throughput if ebs else None,
        iops=_iops(throughput) if ebs else None,
        built_in=_PARALLEL_PULL.get(platform) == "built-in",
    )


def nap_image_streaming(pools: Sequence[GpuPool]) -> bool:
    """gke-nap streams images cluster-wide unless a GPU class turns it off (classes may not disagree:
    `coldstart_problems`)."""
    return all(p.coldStart.imageStreaming is not False for p in pools)


Loc = tuple[str | int, ...]


def coldstart_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """The rules that need a pool's image, the stack's other pools, or the cluster's version."""
    out: list[tuple[Loc, str]] = []
    ami_version = cfg.karpenter.amiVersion if cfg.karpenter is not None else "latest"
    said = {p.coldStart.imageStreaming for p in cfg.gpuPools} - {None}
    for i, pool in enumerate(cfg.gpuPools):
        cs, at = pool.coldStart, ("gpuPools", i, "coldStart")
        image = NODE_IMAGES.get(pool.amiType)
        if cfg.platform in _EBS and image is not None:
            if cs.imageCacheSnapshot and not image.image_cache_device:
                out.append(
                    (
                        (*at, "imageCacheSnapshot"),
                        f"is for Bottlerocket pools: {image.ami_type} has no separate data volume to restore "
                        "(use amiType BOTTLEROCKET_x86_64_NVIDIA)",
                    )
                )
            if cs.parallelPull and not (
                image.parallel_pull and release_at_least(ami_version, image.parallel_pull_from)
            ):
                first = image.parallel_pull_from or "none"
                out.append(
                    (
                        (*at, "parallelPull"),
                        f"{image.ami_type} at release {ami_version} has no SOCI parallel pull (first release: {first})",
                    )
                )
        if cfg.platform in _EBS and cs.parallelPull and cs.imageCacheSnapshot:
            out.append(
                (
                    (*at, "parallelPull"),
                    "would wipe the imageCacheSnapshot's cached images (Bottlerocket clears /var/lib/containerd when "
                    "the snapshotter changes to soci): leave it unset with a snapshot",
                )
            )
        if cfg.platform == "gke-nap" and cs.imageStreaming is not None and len(said) > 1:
            out.append(
                (
                    (*at, "imageStreaming"),
                    "gke-nap streams images cluster-wide (node_pool_defaults): every class that sets it must agree",
                )
            )
        version = cfg.cluster.kubernetesVersion
        if cs.secondaryBootDisk and version is not None and _older(version, SECONDARY_BOOT_DISK_MIN):
            out.append(
                (
                    (*at, "secondaryBootDisk"),
                    f"needs GKE 1.28.3-gke.1067000 or later, and cluster.kubernetesVersion is {version}",
                )
            )
    return out


def _older(version: str, first: tuple[int, ...]) -> bool:
    """Whether a GKE version (`1.27`, `1.28.2-gke.100`) may be older than `first`; a bare minor of `first`'s
    minor (`1.28`) counts as new enough (GKE picks that minor's default patch, long past the first)."""
    minor = version_tuple(version)
    if minor is None:
        return False
    if minor != first[:2]:
        return minor < first[:2]
    digits = [int("".join(c for c in part if c.isdigit()) or 0) for part in version.replace("-gke.", ".").split(".")]
    return len(digits) > 2 and tuple(digits) < first


__all__ = ["NO_COLD_START", "ColdStart", "ColdStartPlan", "coldstart_problems", "nap_image_streaming", "plan"]
