"""Cold start of a GPU node as data: the published rates behind the capacity summary's estimate, and the pure
estimate (node boot, driver ready, image pull at the pool's disk and network rates).

Every figure is a row of `RATES` with its source. Where nothing is published (a GPU node's launch-to-Ready time
on either cloud, a GKE registry pull rate, a secondary boot disk's start time) the row says so and its value is
an assumption, marked `assumed=True` and printed as one (docs/cold-start.md lists them all).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

MIB_PER_GB = 1e9 / 2**20
"""Image sizes are GB (10^9 bytes, as registries print them); rates are MiB/s."""


@dataclass(frozen=True)
class Rate:
    """One figure of the estimate."""

    value: float
    unit: str
    source: str
    assumed: bool = False
    """No published figure: `value` is gpuplane's assumption, and `source` says what was searched."""


_KBP = "aws-samples/karpenter-blueprints blueprints/soci-snapshotter/README.md"
_SOCI_BYTES, _DEFAULT_S, _SOCI_S = 9_354_342_327, 130.813, 39.553
"""KBP: a 9,354,342,327-byte DLC vLLM image from ECR: default containerd pull 2m10.813s, AL2023 SOCI parallel
pull 39.553s (instances with >8000 Mbps EBS and network bandwidth)."""

RATES: Mapping[str, Rate] = MappingProxyType(
    {
        # --- image pull: network / method rates -------------------------------------------------------------
        "pull-default": Rate(
            round(_SOCI_BYTES / 2**20 / _DEFAULT_S, 1),
            "MiB/s",
            f"{_KBP}: 9.35 GB from ECR in 130.8 s with containerd's default pull",
        ),
        "pull-soci-parallel": Rate(
            round(_SOCI_BYTES / 2**20 / _SOCI_S, 1),
            "MiB/s",
            f"{_KBP}: the same 9.35 GB in 39.6 s with SOCI parallel pull (AL2023)",
        ),
        "pull-default-gke": Rate(
            round(_SOCI_BYTES / 2**20 / _DEFAULT_S, 1),
            "MiB/s",
            "no published GKE registry pull rate (GKE docs, ai-on-gke searched); assumed equal to containerd's default "
            f"pull from ECR ({_KBP})",
            assumed=True,
        ),
        "image-streaming": Rate(
            30.0,
            "s",
            "GoogleCloudPlatform/ai-on-gke best-practices/startup-latency.md: a 5.4 GB Triton image's end-to-end start "
            '"reduced from 191s to 30s" with image streaming (the GKE blog says ImagePulling to Running in "a couple '
            'of seconds"; the measured figure includes what streams in while the server starts). Only images in '
            "Artifact Registry (standard or remote repositories) stream (GKE how-to, image-streaming): others pull as "
            "usual",
        ),
        "snapshot-cache": Rate(
            5.0,
            "s",
            "aws-ia/terraform-aws-eks-blueprints patterns/ml-container-cache/README.md: a 9.5 GB image cached on an "
            'EBS snapshot data volume "starts up in less than 5 seconds" (334 s uncached)',
        ),
        "secondary-boot-disk": Rate(
            5.0,
            "s",
            "no published start time (cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-"
            "preloading gives none; the disk is provisioned in parallel with the node); assumed equal to the EBS "
            "snapshot cache (terraform-aws-eks-blueprints ml-container-cache), both serve preloaded layers from disk",
            assumed=True,
        ),
        "unpacked-per-compressed": Rate(
            round(20.4 / 9.5, 2),
            "x",
            "terraform-aws-eks-blueprints patterns/ml-container-cache/README.md: nvcr.io/nvidia/pytorch:25.02-py3 is "
            '"9.5 GB compressed and 20.4 GB decompressed"; what a pull writes to disk per compressed GB',
        ),
        # --- disks --------------------------------------------------------------------------------------------
        "gp3-baseline": Rate(
            125.0,
            "MiB/s",
            "AWS EBS gp3: 3,000 IOPS / 125 MiB/s included (docs.aws.amazon.com/ebs/latest/userguide/"
            "general-purpose.html; botocore EC2 model LaunchTemplateEbsBlockDeviceRequest.Throughput)",
        ),
        "pd-standard-per-gib": Rate(
            0.12, "MiB/s per GiB", "cloud.google.com/compute/docs/disks/performance (zonal pd-standard)"
        ),
        "pd-balanced-per-gib": Rate(
            0.28, "MiB/s per GiB", "cloud.google.com/compute/docs/disks/performance (zonal pd-balanced)"
        ),
        "pd-ssd-per-gib": Rate(0.48, "MiB/s per GiB", "cloud.google.com/compute/docs/disks/performance (zonal pd-ssd)"),
        "pd-balanced-floor": Rate(
            140.0,
            "MiB/s",
            "cloud.google.com/compute/docs/disks/performance baseline (our research notes mark its text "
            "unverified); GoogleCloudPlatform/ai-on-gke best-practices/startup-latency.md measures a 300 GB "
            "pd-balanced boot disk at about 140 MB/s",
        ),
        "pd-ssd-floor": Rate(
            240.0, "MiB/s", "cloud.google.com/compute/docs/disks/performance baseline (marked unverified, as above)"
        ),
        "hyperdisk-balanced": Rate(
            140.0,
            "MiB/s",
            'cloud.google.com/compute/docs/disks/hd-types/hyperdisk-balanced: "up to 3,000 IOPS and 140 MiB/s" '
            "included",
        ),
        "pd-write-cap": Rate(
            1200.0, "MiB/s", "cloud.google.com/compute/docs/disks/performance per-instance write cap (pd-standard: 400)"
        ),
        "pd-standard-write-cap": Rate(400.0, "MiB/s", "cloud.google.com/compute/docs/disks/performance"),
        # --- node boot and driver -----------------------------------------------------------------------------
        "boot-eks": Rate(
            60.0,
            "s",
            "no published GPU launch-to-Ready figure (AWS docs, Karpenter, amazon-eks-ami searched): Karpenter's "
            "maintainers see 30-40 s "
            "for general nodes (aws/karpenter-provider-aws#6165) and GPU instances boot slower "
            "(awslabs/amazon-eks-ami#1099); assumed 60 s",
            assumed=True,
        ),
        "boot-gke": Rate(
            60.0,
            "s",
            "no published GKE GPU scale-up-to-Ready figure (cloud.google.com/kubernetes-engine/docs/concepts/fast-"
            "starting-nodes gives Autopilot only as up to 4x faster); assumed 60 s, as on EKS",
            assumed=True,
        ),
        "driver-gke": Rate(
            30.0,
            "s",
            'GoogleCloudPlatform/ai-on-gke best-practices/startup-latency.md: "driver installation takes ~30 seconds"',
        ),
        "driver-in-image": Rate(
            30.0,
            "s",
            "no published figure for an AMI that ships the driver (AL2023 NVIDIA, Bottlerocket NVIDIA) to advertise "
            "nvidia.com/gpu; assumed as GKE's installed driver (ai-on-gke startup-latency.md)",
            assumed=True,
        ),
        "driver-operator": Rate(
            300.0,
            "s",
            "no published figure for the gpu-operator's driver container; GKE's old manual installer \"takes "
            'several minutes" (old GKE GPU docs); assumed 5 minutes',
            assumed=True,
        ),
    }
)
"""Key -> figure. `gpuplane capacity` and docs/cold-start.md print them with their sources."""

METHODS: Mapping[str, str] = MappingProxyType(
    {
        "default": "pull-default",
        "default-gke": "pull-default-gke",
        "soci-parallel": "pull-soci-parallel",
        "image-streaming": "image-streaming",
        "secondary-boot-disk": "secondary-boot-disk",
        "snapshot-cache": "snapshot-cache",
    }
)
"""Pull method -> its `RATES` row. Rows in MiB/s are rates (bounded by the disk they write to); rows in s are a
time whatever the image's size (the image is streamed, or already on a disk)."""

METHOD_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "default": "default pull",
        "default-gke": "default pull",
        "soci-parallel": "SOCI parallel",
        "image-streaming": "image streaming",
        "secondary-boot-disk": "secondary boot disk",
        "snapshot-cache": "snapshot cache",
    }
)


def rates_table() -> str:
    """`RATES` as the Markdown table docs/cold-start.md carries (a test keeps them in sync)."""
    rows = [
        f"| `{k}` | {r.value:g} {r.unit} | {'**assumed**: ' if r.assumed else ''}{r.source} |" for k, r in RATES.items()
    ]
    return "\n".join(["| key | value | source |", "|---|---|---|", *rows])


def gke_disk_mibps(disk_type: str, size_gb: int) -> float:
    """A GKE boot disk's write throughput: per-GiB scaling with the type's floor, within the per-instance cap."""
    if disk_type == "hyperdisk-balanced":
        return RATES["hyperdisk-balanced"].value
    floor = {"pd-balanced": RATES["pd-balanced-floor"].value, "pd-ssd": RATES["pd-ssd-floor"].value}.get(disk_type, 0.0)
    cap = RATES["pd-standard-write-cap" if disk_type == "pd-standard" else "pd-write-cap"].value
    return min(max(floor, RATES[f"{disk_type}-per-gib"].value * size_gb), cap)


@dataclass(frozen=True)
class Estimate:
    """One pool's estimated cold start: seconds from a node's launch to its first container running."""

    node_boot_s: float
    driver_ready_s: float
    image_pull_s: float
    method: str
    """The pull method's name (`METHOD_NAMES`)."""
    image_gb: float
    disk_mibps: float | None
    """The disk the pull writes to (None when the method writes none, or it is not known)."""
    rate: str
    """The rate used: `N MiB/s` (after the disk's bound) or `N s` for a fixed time."""
    assumed: tuple[str, ...]
    """`RATES` keys among the inputs that are assumptions."""

    @property
    def total_s(self) -> float:
        return round(self.node_boot_s + self.driver_ready_s + self.image_pull_s, 1)


def estimate(method: str, image_gb: float, disk_mibps: float | None, boot: str, driver: str) -> Estimate:
    """Node boot + driver ready + image pull. A rate method pulls the image at its rate, or writes it unpacked
    (`unpacked-per-compressed`) at the disk's throughput, whichever is slower; a fixed-time method takes its time."""
    row = RATES[METHODS[method]]
    if row.unit == "s":
        pull, rate, disk = row.value, f"{row.value:g} s", None
    else:
        mib = image_gb * MIB_PER_GB
        over_network = mib / row.value
        over_disk = mib * RATES["unpacked-per-compressed"].value / disk_mibps if disk_mibps else 0.0
        pull, disk = max(over_network, over_disk), disk_mibps
        rate = f"{mib / pull:.1f} MiB/s"
    used = (METHODS[method], boot, driver, *(["unpacked-per-compressed"] if disk else []))
    return Estimate(
        node_boot_s=RATES[boot].value,
        driver_ready_s=RATES[driver].value,
        image_pull_s=round(pull, 1),
        method=METHOD_NAMES[method],
        image_gb=image_gb,
        disk_mibps=None if disk is None else round(disk, 1),
        rate=rate,
        assumed=tuple(k for k in used if RATES[k].assumed),
    )


__all__ = ["METHODS", "METHOD_NAMES", "RATES", "Estimate", "Rate", "estimate", "gke_disk_mibps", "rates_table"]
