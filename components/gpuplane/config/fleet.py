"""Fleet and price sections of the stack config (`gpuplane:fleet`, `gpuplane:prices`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from ..catalog import lookup
from .base import Model, context_value, shaped, suggest
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


class PriceConfig(Model):
    """Your prices, replacing the catalog's dated estimates (`gpuplane:prices`)."""

    onDemand: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    """Instance or machine type -> on-demand USD/h (for GCP N1 machines, including their GPUs)."""
    spotFraction: float | None = Field(default=None, gt=0, le=1)
    """Spot price as a fraction of on-demand."""
    flexStartFraction: float | None = Field(default=None, gt=0, le=1)
    """GCP DWS flex-start (and queued) price of A2, A3 and A4 machines as a fraction of on-demand; unset,
    such nodes are not priced (the catalog has no DWS rates)."""
