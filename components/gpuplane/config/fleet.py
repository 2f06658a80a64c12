"""Fleet and price sections of the stack config (`gpuplane:fleet`, `gpuplane:prices`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from ..catalog import lookup
from .base import DNS_LABEL, Model, context_value, not_ipv4_cidrs, repeated, shaped, suggest
from .deployments import FleetDeployments
from .regions import known_region, known_zones


class FleetRegion(Model):
    """One region of a fleet, in the order the user prefers."""

    region: str = Field(
        pattern=shaped(r"^[a-z]{2,}[-a-z0-9]*[0-9]$", "must look like us-east-1 (AWS) or us-central1 (GCP)")
    )
    """GCP or AWS region the catalog lists (unless `allowUnlistedRegions`)."""
    zones: list[str] = Field(default_factory=list)
    """GCP only: node zones; empty picks the zones that offer the pools' GPUs (GPU catalog)."""
    quota: dict[str, int] = Field(default_factory=dict)
    """GPUs this stack may use here, per GPU type (catalog name), e.g. `{l4: 16}`; unset is unlimited."""

    @field_validator("region")
    @classmethod
    def _known_region(cls, v: str, info: ValidationInfo) -> str:
        return known_region(context_value(info, "cloud"), v, info)

    @field_validator("zones")
    @classmethod
    def _known_zones(cls, v: list[str], info: ValidationInfo) -> list[str]:
        region = info.data.get("region")
        return known_zones(region, v, info) if region and context_value(info, "cloud") == "gcp" else v

    @field_validator("quota")
    @classmethod
    def _known_gpus(cls, v: dict[str, int]) -> dict[str, int]:
        bad = [k for k in v if lookup(k) is None]
        if bad:
            raise ValueError(f"unknown GPU(s) {bad}")
        if any(n < 0 for n in v.values()):
            raise ValueError("quotas must be >= 0")
        return {lookup(k).name: n for k, n in v.items()}  # type: ignore[union-attr]


MULTIKUEUE_WORKERS = 20
"""A MultiKueueConfig lists at most 20 clusters (kueue v0.19.2 kueue.x-k8s.io_multikueueconfigs.yaml maxItems)."""


class FleetMultiKueue(Model):
    """Kueue MultiKueue over a fleet run as a stack per region (docs/queues.md, "MultiKueue across a fleet").

    One region's cluster is the manager, every other region's a worker. Jobs submitted to the manager's LocalQueue
    `queueName` run on whichever worker's own Kueue admits them."""

    namespaces: list[Annotated[str, Field(pattern=DNS_LABEL, max_length=63)]] = Field(min_length=1)
    """Namespaces jobs are submitted from: each gets a LocalQueue `queueName` on the manager and on every worker
    (MultiKueue creates a job's copy in the same namespace and LocalQueue on the worker)."""
    manager: str | None = None
    """The region whose cluster is the manager (Kueue does not let it be a worker for itself; its own GPUs take
    jobs through its LocalQueue `<queueName>-local`); unset: the first region."""
    queueName: str = Field(default="gpuplane-fleet", pattern=DNS_LABEL, max_length=57)
    """Name of the LocalQueues jobs name in `kueue.x-k8s.io/queue-name`, and of the manager's ClusterQueue."""
    managerEgress: list[str] = Field(default_factory=list)
    """IPv4 CIDR blocks the manager cluster's traffic leaves from (its Cloud NAT's or NAT gateways' public IPs),
    added to every worker's `gcp.authorizedNetworks` / `aws.publicAccessCidrs`: the manager's Kueue calls each
    worker's API endpoint, which admits only those lists. Required, except on EKS with `publicAccessCidrs` open to
    0.0.0.0/0."""

    @field_validator("managerEgress")
    @classmethod
    def _cidrs(cls, v: list[str]) -> list[str]:
        bad = not_ipv4_cidrs(v)
        if bad:
            raise ValueError(f"not IPv4 CIDR blocks (host bits zero, e.g. 34.1.2.3/32): {bad}")
        dupes = repeated(v)
        if dupes:
            raise ValueError(f"CIDR blocks must not repeat (repeated: {', '.join(dupes)})")
        return v

    @field_validator("manager")
    @classmethod
    def _a_fleet_region(cls, v: str | None, info: ValidationInfo) -> str | None:
        regions = context_value(info, "fleet_regions")
        if v is not None and isinstance(regions, list) and v not in regions:
            raise ValueError(f"{v!r} is not a region of the fleet{suggest(v, regions)}")
        return v

    @field_validator("namespaces")
    @classmethod
    def _unique_namespaces(cls, v: list[str]) -> list[str]:
        dupes = repeated(v)
        if dupes:
            raise ValueError(f"namespaces must be unique (repeated: {', '.join(dupes)})")
        return v


class FleetConfig(Model):
    """One cluster per region; pool sizes per region, or totals spread over the regions within quota."""

    regions: list[FleetRegion] = Field(min_length=2)
    """Regions in preference order (the spread fills them in this order)."""
    totals: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    """Pool name -> total GPUs wanted across the fleet; pools not listed keep `maxNodes` in every region."""
    deployments: FleetDeployments | None = None
    """The region stacks' Pulumi Deployments settings when the fleet runs as a stack per region
    (`gpuplane:fleetStack`), declared by the central stack through `pulumi-pulumiservice` (docs/fleets.md, "Pulumi
    Deployments as code"); unset, none."""
    multikueue: FleetMultiKueue | None = None
    """Kueue MultiKueue across the region stacks: jobs submitted on the manager region's cluster go to the worker
    regions' GPUs (docs/queues.md); needs a stack per region (`gpuplane:fleetStack`). Unset, none."""

    @field_validator("totals", mode="before")
    @classmethod
    def _known_pools(cls, v: object, info: ValidationInfo) -> object:
        names = context_value(info, "pool_names")
        if isinstance(names, list) and isinstance(v, dict):
            bad = [n for n in v if n not in names]
            if bad:
                hint = suggest(bad[0], names) if len(bad) == 1 else ""
                raise ValueError(f"no GPU pool named {', '.join(map(repr, bad))}{hint}")
        return v

    @field_validator("regions")
    @classmethod
    def _unique(cls, v: list[FleetRegion]) -> list[FleetRegion]:
        names = [r.region for r in v]
        if len(set(names)) != len(names):
            raise ValueError("regions must not repeat")
        return v

    @property
    def multikueue_manager(self) -> str | None:
        """The MultiKueue manager's region (None without `multikueue`)."""
        if self.multikueue is None:
            return None
        return self.multikueue.manager or self.regions[0].region


class PriceConfig(Model):
    """Your prices, replacing the catalog's dated estimates (`gpuplane:prices`)."""

    onDemand: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    """Instance or machine type -> on-demand USD/h (for GCP N1 machines, including their GPUs)."""
    spotFraction: float | None = Field(default=None, gt=0, le=1)
    """Spot price as a fraction of on-demand."""
    flexStartFraction: float | None = Field(default=None, gt=0, le=1)
    """GCP DWS flex-start (and queued) price of A2, A3 and A4 machines as a fraction of on-demand; unset,
    such nodes are not priced (the catalog has no DWS rates)."""
