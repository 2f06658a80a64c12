"""GPU sharing of a pool (`gpuplane:gpuPools[].sharing`): time-slicing, MPS or MIG."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Model, shaped

STRATEGIES = ("time-slicing", "mps", "mig")


class Sharing(Model):
    """How pods share a pool's GPUs. Pools without `sharing` stay whole (one pod per GPU)."""

    strategy: Literal["time-slicing", "mps", "mig"]
    """`time-slicing` (interleaved, no isolation), `mps` (concurrent, memory-limited) or `mig` (partitions)."""
    replicas: int | None = Field(default=None, ge=2, le=48)
    """time-slicing / mps: pods that share one GPU (GKE's max_shared_clients_per_gpu, the operator's replicas)."""
    migProfile: str | None = Field(
        default=None, pattern=shaped(r"^[1-7]g\.[0-9]+gb$", "must be a MIG profile like 1g.10gb")
    )
    """mig: the partition profile, e.g. `1g.10gb` (validated against the GPU catalog)."""

    @model_validator(mode="after")
    def _fields_match_strategy(self) -> Sharing:
        if self.strategy == "mig":
            if self.migProfile is None:
                raise ValueError("strategy mig needs migProfile (e.g. 1g.10gb)")
            if self.replicas is not None:
                raise ValueError("replicas applies to time-slicing and mps; MIG cannot be combined with them here")
        else:
            if self.replicas is None:
                raise ValueError(f"strategy {self.strategy} needs replicas (2-48)")
            if self.migProfile is not None:
                raise ValueError(f"migProfile applies to strategy mig only; {self.strategy} can't be combined with MIG")
        return self

    @property
    def factor(self) -> int:
        """Pods per GPU for time-slicing/MPS (MIG partitions depend on the GPU; see `slots_per_gpu`)."""
        return self.replicas or 1
