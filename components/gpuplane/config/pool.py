"""A GPU pool (or, with auto-provisioning, a GPU class) of the stack config: `gpuplane:gpuPools[]`.

Split from `config.model` (which re-exports `GpuPool` and `Taint`); the checks that need the GPU catalog
or the platform read them from the validation context, as there.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..catalog import DEFAULT_GPU_IMAGE, GPUS, NODE_IMAGES, Platform, gpus_on, lookup
from ..catalog.images import arch_of
from .base import DNS_LABEL as _DNS_LABEL
from .base import Model as _Model
from .base import context_value, shaped, suggest, valid_labels
from .capacity import MAX_RUN_SECONDS, CapacityType, Reservation, duration_seconds
from .coldstart import ColdStart
from .network import PLACEMENT_GROUP, check_network, check_zones
from .sharing import Sharing


def _cloud(info: ValidationInfo) -> str | None:
    cloud = context_value(info, "cloud")
    return cloud if isinstance(cloud, str) else None


CLOUD_NAMES = {"gcp": "GCP", "aws": "AWS"}
KUBERNETES_SERVICES = {"gcp": ("a", "GKE"), "aws": ("an", "EKS")}
"""Cloud -> (article, its Kubernetes service), for messages about the cloud's config section."""
SYSTEM_MACHINES = {"gcp": "e2-standard-4", "aws": "m7i.large"}
"""Cloud -> default machine for the system (add-on) pool."""


def resource_of(pool: GpuPool, cloud: str) -> str:
    from ..scheduling.sharing import resource_name

    return resource_name(pool, cloud)


def _max_nodes_ge_min(v: int, info: ValidationInfo) -> int:
    """`maxNodes` validator shared by every pool model."""
    lo = info.data.get("minNodes")
    if lo is not None and v < lo:
        raise ValueError(f"must be >= minNodes ({lo})")
    return v


class Taint(_Model):
    """A node taint (Kubernetes spelling of the effect)."""

    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class GpuPool(_Model):
    """One pool of GPU nodes of a single GPU type."""

    name: str = Field(pattern=_DNS_LABEL, min_length=1, max_length=30)
    """Pool name (a DNS label, at most 30 characters); also the `gpuplane.io/pool` node label."""
    gpu: str
    """GPU type from the catalog (`gpuplane gpus` lists them), e.g. `l4`, `a100-40gb`, `h100`."""
    gpusPerNode: int = Field(default=1, ge=1, le=16, validate_default=True)
    """GPUs on each node; with `machineType` unset it picks the catalog's machine for that count."""
    machineType: str | None = None
    """GCP machine type. Must be one the catalog lists for this GPU and count (N1 machines accept any size)."""
    instanceTypes: list[str] | None = Field(default=None, min_length=1)
    """AWS instance types (all from the catalog for this GPU and count). Unset: the catalog's smallest."""
    amiType: str = DEFAULT_GPU_IMAGE
    """EKS AMI type: `AL2023_x86_64_NVIDIA` (default), `BOTTLEROCKET_x86_64_NVIDIA`, or `AL2023_x86_64_STANDARD`
    with `driver: operator`."""
    driver: Literal["preinstalled", "operator"] = Field(default="preinstalled", validate_default=True)
    """EKS: use the image's NVIDIA driver, or let the gpu-operator install one (plain AMIs only)."""
    spot: bool = False
    """Run on spot capacity (cheaper, can be reclaimed); GKE spot pools also get a spot taint."""
    minNodes: int = Field(default=0, ge=0)
    """Fewest nodes the autoscaler keeps; 0 lets the pool scale to zero when idle."""
    maxNodes: int = Field(ge=1)
    """Most nodes the autoscaler may add (across all zones)."""
    diskSizeGb: int = Field(default=200, ge=50, le=65536)
    """Boot disk in GB; CUDA images are large, so the default is 200."""
    diskType: Literal["pd-balanced", "pd-ssd", "pd-standard", "hyperdisk-balanced"] = "pd-balanced"
    """Boot disk type (GCP)."""
    driverVersion: Literal["DEFAULT", "LATEST"] = "DEFAULT"
    """GKE-managed NVIDIA driver: the GKE version's DEFAULT or its LATEST driver."""
    sharing: Sharing | None = None
    """Share each GPU between pods: time-slicing, MPS or MIG (see `Sharing`)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra node labels."""
    taints: list[Taint] = Field(default_factory=list)
    """Extra taints beyond the `nvidia.com/gpu` (and spot) taints gpuplane always sets."""
    capacity: list[CapacityType] | None = Field(default=None, min_length=1)
    """Capacity types in preference order, e.g. `[reserved, spot, on-demand]` (see docs/scarce-gpus.md):
    `reserved`, `spot`, `on-demand`, and on GKE `flex-start` and `queued` (Dynamic Workload Scheduler).
    Unset: `spot` decides, as before. With both set, `spot` must agree (spot is in the list)."""
    reservation: Reservation | None = None
    """The reservation `reserved` capacity consumes (AWS ODCR / Capacity Block, GCP reservation)."""
    maxRunDuration: str | None = Field(
        default=None,
        pattern=shaped(r"^[0-9]+(s|m|h|d)$", "must be a duration: a whole number and s, m, h or d (e.g. 24h, 7d)"),
    )
    """GKE flex-start / queued nodes: how long each node may run (at most 7d; GKE's default is 7d)."""

    @model_validator(mode="before")
    @classmethod
    def _spot_from_capacity(cls, data: object) -> object:
        """With `capacity` given and `spot` not, `spot` says whether spot is in the order."""
        if isinstance(data, dict) and isinstance(data.get("capacity"), list) and "spot" not in data:
            return {**data, "spot": "spot" in data["capacity"]}
        return data

    @field_validator("capacity")
    @classmethod
    def _agrees_with_spot(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        spot = info.data.get("spot")
        if v is not None and spot is not None and spot != ("spot" in v):
            said = "spot: true asks for spot" if spot else "spot: false refuses spot"
            raise ValueError(
                f"{said}, but capacity {v} {'lacks' if spot else 'has'} it; drop spot (capacity replaces it)"
            )
        return v

    @field_validator("maxRunDuration")
    @classmethod
    def _at_most_a_week(cls, v: str | None) -> str | None:
        if v is not None and not 0 < duration_seconds(v) <= MAX_RUN_SECONDS:
            raise ValueError("must be between 1s and 7d (flex-start nodes run at most seven days)")
        return v

    @field_validator("machineType", "diskSizeGb", "diskType", "driverVersion", "minNodes")
    @classmethod
    def _used_on_platform(cls, v: object, info: ValidationInfo) -> object:
        platform = context_value(info, "platform")
        if not isinstance(platform, Platform):
            return v
        if info.field_name in platform.unused_pool_keys:
            raise ValueError(f"not used on {platform.name}: the cloud chooses the nodes; remove it")
        if info.field_name == "minNodes" and v and not platform.fixed_pools:
            raise ValueError(f"{platform.name} GPU classes have no node floor (the auto-provisioner starts at 0)")
        return v

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, v: str, info: ValidationInfo) -> str:
        gpu = lookup(v)
        cloud = _cloud(info)
        if gpu is None:
            known = gpus_on(cloud) if cloud else list(GPUS)
            raise ValueError(f"unknown GPU {v!r}{suggest(v, known)} (known: {', '.join(known)})")
        if cloud and getattr(gpu, cloud) is None:
            raise ValueError(f"GPU {v!r} is not offered on {cloud} (offered: {', '.join(gpus_on(cloud))})")
        return gpu.name

    @field_validator("gpusPerNode")
    @classmethod
    def _count_offered(cls, v: int, info: ValidationInfo) -> int:
        gpu = lookup(str(info.data.get("gpu", "")))
        cloud = _cloud(info)
        counts = gpu.counts_on(cloud) if gpu is not None and cloud else []
        if counts and v not in counts:
            raise ValueError(f"{gpu.name if gpu else ''} comes {counts} per node on {CLOUD_NAMES[str(cloud)]}, not {v}")
        return v

    @field_validator("machineType")
    @classmethod
    def _machine_carries_gpu(cls, v: str | None, info: ValidationInfo) -> str | None:
        gpu = lookup(str(info.data.get("gpu", "")))
        count = info.data.get("gpusPerNode")
        if v is not None and _cloud(info) == "aws":
            raise ValueError("is for GCP; on AWS use instanceTypes")
        if v is None or gpu is None or gpu.gcp is None or count is None or _cloud(info) != "gcp":
            return v
        if not gpu.gcp.allows(v, count):
            shapes = ", ".join(f"{m} ({n})" for m, n in gpu.gcp.machines.items())
            raise ValueError(f"{v!r} does not carry {count} x {gpu.name} (catalog shapes: {shapes})")
        return v

    @field_validator("instanceTypes")
    @classmethod
    def _instances_carry_gpu(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        gpu = lookup(str(info.data.get("gpu", "")))
        count = info.data.get("gpusPerNode")
        if v is not None and _cloud(info) == "gcp":
            raise ValueError("is for AWS; on GCP use machineType")
        if v is None or gpu is None or gpu.aws is None or count is None:
            return v
        bad = [i for i in v if gpu.aws.instances.get(i) != count]
        if bad:
            offered = ", ".join(f"{i} ({n})" for i, n in gpu.aws.instances.items())
            raise ValueError(f"{bad} do not carry {count} x {gpu.name} (catalog: {offered})")
        return v

    @field_validator("amiType")
    @classmethod
    def _known_image(cls, v: str) -> str:
        if v not in NODE_IMAGES:
            raise ValueError(f"unknown AMI type {v!r} (known: {', '.join(NODE_IMAGES)})")
        return v

    @field_validator("amiType")
    @classmethod
    def _image_matches_arch(cls, v: str, info: ValidationInfo) -> str:
        """An x86 image on Arm instances (P6e-GB200's Grace CPUs), or the reverse, never boots."""
        image = NODE_IMAGES.get(v)
        gpu = lookup(str(info.data.get("gpu", "")))
        if image is None or _cloud(info) != "aws" or gpu is None or gpu.aws is None:
            return v
        count = info.data.get("gpusPerNode")
        types = info.data.get("instanceTypes") or [gpu.aws.default_instance(int(count or 1))]
        other = [t for t in types if t and arch_of("aws", t) != image.arch]
        if other:
            fits = [i.ami_type for i in NODE_IMAGES.values() if i.arch == arch_of("aws", other[0])]
            raise ValueError(
                f"{image.ami_type} is an {image.arch} image, but {', '.join(other)} run {arch_of('aws', other[0])} "
                f"(use {' or '.join(fits)})"
            )
        return v

    @field_validator("driver")
    @classmethod
    def _driver_matches_image(cls, v: str, info: ValidationInfo) -> str:
        image = NODE_IMAGES.get(str(info.data.get("amiType")))
        if image is None or _cloud(info) != "aws":
            return v
        if v == "operator" and image.driver:
            raise ValueError(
                f"{image.ami_type} already ships the NVIDIA driver; an operator-installed driver on top breaks "
                "nodes (use AL2023_x86_64_STANDARD for driver: operator)"
            )
        if v == "preinstalled" and not image.driver:
            raise ValueError(f"{image.ami_type} has no NVIDIA driver; set driver: operator or use AL2023_x86_64_NVIDIA")
        return v

    _max_ge_min = field_validator("maxNodes")(_max_nodes_ge_min)

    @field_validator("sharing")
    @classmethod
    def _sharing_possible(cls, v: Sharing | None, info: ValidationInfo) -> Sharing | None:
        if v is None:
            return v
        gpu = lookup(str(info.data.get("gpu", "")))
        platform = context_value(info, "platform")
        if isinstance(platform, Platform) and v.strategy not in platform.sharing:
            offered = ", ".join(platform.sharing) or "none (its device plugin is managed by the cloud)"
            raise ValueError(f"{platform.name} does not offer {v.strategy} (offered: {offered})")
        if v.strategy == "mig" and gpu is not None:
            profiles = list(gpu.gke_mig_profiles if _cloud(info) == "gcp" else gpu.mig_profiles)
            if not gpu.mig_capable:
                capable = ", ".join(n for n, g in GPUS.items() if g.mig_capable)
                raise ValueError(f"{gpu.name} has no MIG (MIG-capable: {capable})")
            if v.migProfile not in profiles:
                raise ValueError(
                    f"{v.migProfile} is not a MIG profile of {gpu.name} here (profiles: {', '.join(profiles)})"
                )
            image = NODE_IMAGES.get(str(info.data.get("amiType")))
            if _cloud(info) == "aws" and image is not None and not image.mig_manager:
                raise ValueError(f"{image.ami_type} has no gpu-operator MIG manager; use AL2023_x86_64_NVIDIA for MIG")
        image = NODE_IMAGES.get(str(info.data.get("amiType")))
        if v.strategy != "mig" and _cloud(info) == "aws" and image is not None and image.device_plugin:
            raise ValueError(
                f"{image.ami_type} runs its own device plugin, so the gpu-operator's {v.strategy} config would not "
                "apply; use AL2023_x86_64_NVIDIA for shared GPUs"
            )
        return v

    _valid_labels = field_validator("labels")(valid_labels)

    zones: list[str] | None = Field(default=None, min_length=1)
    """Zones of this pool's nodes (AWS Availability Zones such as `us-east-1a`, or GCP zones); unset: the
    cluster's. A multi-node `network` pool needs exactly one."""
    network: Literal["efa", "gpudirect"] | None = None
    """Multi-node GPU networking (docs/multi-node.md): `efa` on EKS (EFA interfaces, a cluster placement
    group, one AZ), `gpudirect` on GKE A3 Mega / A3 Ultra / A4 (extra VPCs, multi-networking, compact
    placement). Only where the catalog says the instance or machine type has it."""
    gpuAllocation: Literal["device-plugin", "dra"] | None = None
    """How pods get this pool's GPUs: `device-plugin` (count `nvidia.com/gpu`) or `dra` (claim them through
    Dynamic Resource Allocation and the NVIDIA DRA driver; docs/gpu-claims.md). Unset: the stack's
    `gpuAllocation`, else `device-plugin`."""
    placementGroup: str | None = None
    """AWS, with `network: efa`: an existing cluster placement group (name, or `pg-` ID) to launch into;
    unset: managed node groups get their own, Karpenter classes launch without one."""
    coldStart: ColdStart = Field(default_factory=ColdStart)
    """How fast a new node gets its container images (docs/cold-start.md): GKE image streaming and secondary
    boot disks, EKS SOCI parallel pull, a Bottlerocket image-cache snapshot, the data volume's throughput; on by
    default where the platform has them. The capacity summary estimates each pool's cold start from it."""

    @field_validator("zones")
    @classmethod
    def _zones(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        return check_zones(v, _cloud(info))

    @field_validator("network")
    @classmethod
    def _network_possible(cls, v: str | None, info: ValidationInfo) -> str | None:
        gpu = lookup(str(info.data.get("gpu", "")))
        count = int(info.data.get("gpusPerNode") or 1)
        machine = info.data.get("machineType")
        if machine is None and gpu is not None and gpu.gcp is not None:
            machine = gpu.gcp.default_machine(count)
        platform = context_value(info, "platform")
        sharing = info.data.get("sharing")
        check_network(
            v,
            cloud=_cloud(info),
            platform=platform.name if isinstance(platform, Platform) else None,
            gpu=gpu.name if gpu is not None else str(info.data.get("gpu", "")),
            count=count,
            machine=machine,
            instance_types=info.data.get("instanceTypes"),
            zones=info.data.get("zones"),
            sharing=sharing.strategy if isinstance(sharing, Sharing) else None,
        )
        return v

    @field_validator("placementGroup")
    @classmethod
    def _placement_group(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        failed = "network" not in info.data  # already reported there
        if not failed and info.data["network"] != "efa" or _cloud(info) == "gcp":
            raise ValueError("is for AWS pools with network: efa (a cluster placement group for EFA)")
        if not PLACEMENT_GROUP.match(v):
            raise ValueError(f"{v!r} is not a placement group name or pg- ID")
        return v
