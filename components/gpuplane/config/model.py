"""Typed stack config: the `gpuplane:` namespace of a Pulumi stack, as nested pydantic models.

Field names are the camelCase keys users write in `stacks/Pulumi.<stack>.yaml`. Checks that need the
GPU catalog or the platform (which cloud) read them from the validation context, so every bad key is
reported in one pass (see `gpuplane.config.load`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..catalog import NODE_IMAGES, PLATFORMS, Platform, operator_components
from .autoscaling import AutoscalingConfig
from .aws import AwsConfig
from .base import DNS_LABEL as _DNS_LABEL
from .base import Model as _Model
from .base import context_value, repeated, shaped, suggest, unknown
from .fleet import FleetConfig, PriceConfig
from .gcp import GcpConfig
from .health import HealthConfig, ValidationConfig
from .monitoring import MonitoringConfig
from .pool import (  # re-exported: GpuPool, Taint and the pool helpers are config.model's API too
    CLOUD_NAMES as CLOUD_NAMES,
)
from .pool import (
    KUBERNETES_SERVICES as KUBERNETES_SERVICES,
)
from .pool import (
    SYSTEM_MACHINES as SYSTEM_MACHINES,
)
from .pool import (
    GpuPool as GpuPool,
)
from .pool import (
    Taint as Taint,
)
from .pool import (
    _cloud as _cloud,
)
from .pool import (
    _max_nodes_ge_min as _max_nodes_ge_min,
)
from .pool import (
    resource_of as resource_of,
)
from .provisioning import AutoProvisioningConfig, KarpenterConfig
from .queues import QueuesConfig
from .storage import StorageConfig


class SystemPool(_Model):
    """The small non-GPU pool that runs cluster add-ons (operators, exporters' controllers, DNS)."""

    machineType: str | None = Field(default=None, validate_default=True)
    """Machine (GCP) or instance (AWS) type of the system nodes; unset: `e2-standard-4` / `m7i.large`."""
    minNodes: int = Field(default=1, ge=1)
    """Smallest size of the system pool; at least one node so add-ons always have a home."""
    maxNodes: int = Field(default=3, ge=1)
    """Largest size of the system pool."""
    diskSizeGb: int = Field(default=100, ge=20)
    """Boot disk size of system nodes, in GB."""

    _max_ge_min = field_validator("maxNodes")(_max_nodes_ge_min)

    @field_validator("machineType")
    @classmethod
    def _cloud_default(cls, v: str | None, info: ValidationInfo) -> str | None:
        cloud = _cloud(info)
        return v if v is not None or cloud is None else SYSTEM_MACHINES[cloud]


class ClusterConfig(_Model):
    """Cluster-wide settings."""

    name: str = Field(pattern=_DNS_LABEL, min_length=1, max_length=40)
    """Cluster name (a DNS label, at most 40 characters)."""
    releaseChannel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    """GKE release channel; GKE upgrades control plane and nodes along it."""
    kubernetesVersion: str | None = Field(
        default=None,
        pattern=shaped(r"^1\.[0-9]{2}(\.[0-9]+.*)?$", "must be a Kubernetes version like 1.33 (or 1.33.2)"),
    )
    """Minimum control plane version (e.g. `1.33`); unset follows the release channel's default."""
    deletionProtection: bool = True
    """The cloud's own deletion protection (GKE `deletion_protection`, EKS `deletionProtection`): the
    cloud API refuses to delete the cluster, even outside Pulumi, until this is turned off."""
    protect: bool = False
    """Pulumi `protect` on the cluster (and its secrets KMS key on EKS): any `pulumi up` that would delete
    or replace it, and `pulumi destroy`, fails until this is turned off and applied."""
    retainOnDelete: bool = False
    """Pulumi `retainOnDelete` on the cluster (and its KMS key): when Pulumi deletes it from the stack, the
    cloud resource is left running instead (for handing a cluster over to another stack)."""
    systemPool: SystemPool = Field(default_factory=dict, validate_default=True)
    """The non-GPU pool for add-ons. The cloud's default pool is always removed."""


class SmokeTest(_Model):
    """An `nvidia-smi` Job per GPU pool after deploy (off by default)."""

    enabled: bool = False
    """Create the Jobs; `pulumi up` then waits until each pool ran one GPU pod."""
    image: str = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
    """A CUDA base image with `nvidia-smi`."""


class StackConfig(_Model):
    """Everything under the `gpuplane:` namespace of one stack."""

    platform: str
    """Which platform to build; one of the provider matrix's rows (`gpuplane matrix`)."""
    cluster: ClusterConfig
    """Cluster-wide settings."""
    gcp: GcpConfig | None = Field(default=None, validate_default=True)
    """GCP location; required for GKE platforms."""
    aws: AwsConfig | None = Field(default=None, validate_default=True)
    """AWS region and network; required for EKS platforms."""
    gpuPools: list[GpuPool] = Field(default_factory=list, validate_default=True)
    """GPU node pools (fixed-pool platforms) or GPU classes (auto-provisioning platforms)."""
    autoProvisioning: AutoProvisioningConfig | None = Field(default=None, validate_default=True)
    """GKE node auto-provisioning limits and defaults (`gke-nap`)."""
    karpenter: KarpenterConfig | None = Field(default=None, validate_default=True)
    """Karpenter NodePool and EC2NodeClass settings (`eks-karpenter`)."""
    smokeTest: SmokeTest | None = None
    """Optional `nvidia-smi` Job per pool that proves each pool can run a GPU pod (`validation` replaces it:
    `smokeTest: {enabled: true}` is `validation` with only the GPU count check)."""
    health: HealthConfig = Field(default_factory=HealthConfig)
    """GPU fault detection and node repair (docs/health.md)."""
    validation: ValidationConfig | None = None
    """Post-deploy checks per GPU pool: GPUs visible, DCGM diagnostics, NCCL across nodes (docs/health.md)."""
    fleet: FleetConfig | None = None
    """Lay the platform over several regions, one cluster each (see `gpuplane.stack.fleet`)."""
    fleetStack: str | None = None
    """This stack's part of a fleet run as a stack per region (docs/fleets.md): one of `fleet.regions` (that region's
    cluster, an ordinary stack with its share of the spread) or `central` (what is fleet-wide). `gpuplane fleet stacks`
    writes these stack files; unset: the whole fleet in this one stack."""
    prices: PriceConfig = Field(default_factory=PriceConfig)
    """Price overrides for the capacity and cost summary."""
    monitoring: MonitoringConfig = Field(default_factory=dict, validate_default=True)
    """GPU metrics settings."""
    allowUnlistedRegions: bool = False
    """Accept regions (`gcp.region`, `aws.region`, fleet regions) that the catalog's dated region tables
    do not list, e.g. a region opened after them. Off: an unlisted region is an error with a "did you mean"."""
    queues: QueuesConfig | None = None
    """Kueue job queues per team with GPU quotas per pool (see docs/queues.md)."""
    autoscaling: AutoscalingConfig | None = None
    """Deployments KEDA scales on GPU or serving metrics of the stack's Prometheus (see docs/autoscaling.md)."""
    storage: StorageConfig | None = None
    """Model and dataset stores: buckets mounted in GPU pods through the cloud's CSI driver, readable by the service
    accounts named here only (see docs/storage.md)."""
    gpuAllocation: Literal["device-plugin", "dra"] = "device-plugin"
    """How pods get GPUs on pools that don't say (`gpuPools[].gpuAllocation`): `device-plugin` (count
    `nvidia.com/gpu`) or `dra` (claim them through Dynamic Resource Allocation; docs/gpu-claims.md)."""

    @model_validator(mode="before")
    @classmethod
    def _pools_inherit_allocation(cls, data: object) -> object:
        """Pools without `gpuAllocation` take the stack's (each pool then knows its own)."""
        if not isinstance(data, dict) or data.get("gpuAllocation") not in ("device-plugin", "dra"):
            return data
        pools = data.get("gpuPools")
        if not isinstance(pools, list):
            return data
        filled = [
            {**p, "gpuAllocation": data["gpuAllocation"]} if isinstance(p, dict) and "gpuAllocation" not in p else p
            for p in pools
        ]
        return {**data, "gpuPools": filled}

    @field_validator("platform")
    @classmethod
    def _known_platform(cls, v: str) -> str:
        if v not in PLATFORMS:
            raise ValueError(f"unknown platform {v!r}{suggest(v, PLATFORMS)} (known: {', '.join(PLATFORMS)})")
        return v

    @field_validator("gcp", "aws")
    @classmethod
    def _cloud_section(cls, v: object, info: ValidationInfo) -> object:
        """`gcp` on GKE platforms and `aws` on EKS ones: required there, refused elsewhere."""
        platform = context_value(info, "platform")
        if not isinstance(platform, Platform):
            return v
        article, kind = KUBERNETES_SERVICES[str(info.field_name)]
        if v is None and platform.cloud == info.field_name and info.field_name not in unknown(info):
            raise ValueError(f"required for {article} {kind} platform")
        if v is not None and platform.cloud != info.field_name:
            raise ValueError(f"applies to {kind} platforms only, not {platform.name}")
        return v

    @field_validator("gpuPools")
    @classmethod
    def _unique_pool_names(cls, v: list[GpuPool], info: ValidationInfo) -> list[GpuPool]:
        platform = context_value(info, "platform")
        if isinstance(platform, Platform) and len(v) < platform.min_pools:
            what = (
                "GPU pool"
                if platform.fixed_pools
                else "GPU class (its ceiling becomes the auto-provisioner's GPU limit)"
            )
            raise ValueError(f"{platform.name} needs at least {platform.min_pools} {what}")
        gcp = info.data.get("gcp")
        direct = [p.name for p in v if p.network == "gpudirect"]
        if direct and isinstance(gcp, GcpConfig) and not gcp.multiNetworking:
            raise ValueError(
                f"gpudirect pools ({', '.join(direct)}) need gcp.multiNetworking: true (set it when creating the "
                "cluster: turning it on replaces an existing one)"
            )
        names = [p.name for p in v]
        dupes = repeated(names)
        if dupes:
            raise ValueError(f"pool names must be unique (repeated: {', '.join(dupes)})")
        if _cloud(info) == "aws":
            # One gpu-operator per cluster: its values follow from the node image, so images must agree.
            profiles = {p.amiType: operator_components(NODE_IMAGES[p.amiType]) for p in v}
            if len({tuple(sorted(c.items())) for c in profiles.values()}) > 1:
                raise ValueError(
                    f"GPU pools mix node images {sorted(profiles)} that need different gpu-operator settings; "
                    "use one NVIDIA image per cluster"
                )
        return v

    @field_validator("autoProvisioning", "karpenter", mode="before")
    @classmethod
    def _section_on_platform(cls, v: object, info: ValidationInfo) -> object:
        platform = context_value(info, "platform")
        if not isinstance(platform, Platform) or info.field_name is None:
            return v
        owners = [p.name for p in PLATFORMS.values() if info.field_name in p.sections]
        if v is not None and info.field_name not in platform.sections:
            raise ValueError(f"applies to platform {', '.join(owners)} only, not {platform.name}")
        if v is None and info.field_name in platform.sections:
            return {}  # validated next into the section's defaults
        return v

    @field_validator("fleetStack")
    @classmethod
    def _part_of_the_fleet(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if "fleet" not in info.data:
            return v  # the fleet itself is bad: its own error says so
        fleet = info.data["fleet"]
        if not isinstance(fleet, FleetConfig):
            raise ValueError("names a part of gpuplane:fleet, which this stack does not have")
        parts = ["central", *(r.region for r in fleet.regions)]
        if v not in parts:
            raise ValueError(f"{v!r} is not a part of the fleet{suggest(v, parts)} (parts: {', '.join(parts)})")
        return v

    @field_validator("validation")
    @classmethod
    def _one_validation(cls, v: ValidationConfig | None, info: ValidationInfo) -> ValidationConfig | None:
        if v is not None and info.data.get("smokeTest") is not None:
            raise ValueError(
                "replaces smokeTest: give one of them (validation: {enabled: true} runs the smoke test too)"
            )
        return v

    @property
    def checks(self) -> ValidationConfig | None:
        """The post-deploy checks the stack asks for: `validation`, or the old `smokeTest` as its GPU count check
        alone; None when off."""
        if self.validation is not None:
            return self.validation if self.validation.enabled else None
        if self.smokeTest is not None and self.smokeTest.enabled:
            return ValidationConfig(enabled=True, image=self.smokeTest.image, diagnostics=False, nccl=False)
        return None

    @field_validator("queues")
    @classmethod
    def _queues_fit_pools(cls, v: QueuesConfig | None, info: ValidationInfo) -> QueuesConfig | None:
        """The teams' nominal quotas on a pool sum to at most its ceiling (unless `overcommit`)."""
        if v is None:
            return v
        if info.data.get("fleet") is not None:
            raise ValueError("not supported with a fleet yet: each region's cluster would need its own quotas")
        from ..kueue.stack import over_ceilings  # needs the sharing tables, which import this module
        from ..scheduling.placement import ceiling

        pools = {p.name: p for p in info.data.get("gpuPools") or []}
        cloud = _cloud(info) or "gcp"
        from ..scheduling.nodes import pool_taints

        crowded = [n for n, p in pools.items() if len(pool_taints(cloud, p)) > 8]
        if crowded:
            raise ValueError(f"pools {crowded} have more taints than a Kueue ResourceFlavor holds (8, with gpuplane's)")
        over = over_ceilings(v, {n: ceiling(p) for n, p in pools.items()})
        if over and not v.overcommit:
            text = "; ".join(f"{n}: {s} > {c} {resource_of(pools[n], cloud)}" for n, (s, c) in over.items())
            raise ValueError(
                f"the teams' quotas exceed the pools' ceilings (maxNodes x per-node units): {text}; lower them, "
                "or set overcommit: true to accept queued jobs that may never fit"
            )
        return v

    @field_validator("autoscaling")
    @classmethod
    def _autoscaling_where_supported(
        cls, v: AutoscalingConfig | None, info: ValidationInfo
    ) -> AutoscalingConfig | None:
        """One cluster, whose GPU metrics gpuplane wires (Autopilot's come from GKE itself)."""
        if v is None:
            return v
        if info.data.get("fleet") is not None:
            raise ValueError("not supported with a fleet yet: each region's cluster would need its own workloads")
        platform = context_value(info, "platform")
        if isinstance(platform, Platform) and platform.name == "gke-autopilot":
            raise ValueError(
                "not supported on gke-autopilot yet: GKE collects its GPU metrics itself, so the deploy checks could "
                "not tell which series and labels a query may name"
            )
        return v

    @property
    def region(self) -> str:
        """The cluster's region (`gcp.region` or `aws.region`; empty when a component's caller left it unknown)."""
        return self.gcp.region if self.gcp else self.aws.region if self.aws else ""

    @property
    def platform_spec(self) -> Platform:
        """The provider-matrix row of this stack's platform."""
        return PLATFORMS[self.platform]
