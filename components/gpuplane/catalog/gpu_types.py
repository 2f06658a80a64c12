"""The GPU catalog's record types: one GPU model (`Gpu`) and how each cloud offers it (`GcpOffer`, `AwsOffer`).

The tables of them are `gpus.GPUS` (which merges `gpus_blackwell.BLACKWELL`); `gpus` re-exports these names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


def frozen(d: dict[str, int]) -> Mapping[str, int]:
    """A read-only copy of `d` (catalog tables are never changed at run time)."""
    return MappingProxyType(dict(d))


@dataclass(frozen=True)
class GcpOffer:
    """How GCP offers a GPU: its accelerator name and the machine types that carry it."""

    accelerator: str
    """The accelerator type, as in `guest_accelerator.type` and the node label `cloud.google.com/gke-accelerator`."""
    machines: Mapping[str, int]
    """Machine type -> GPUs attached. For fixed shapes (A2, A3, A4, G2, G4) the count is part of the machine."""
    attachable_family: str | None = None
    """For GPUs attached to general-purpose VMs (N1), the machine family a user may pick freely."""
    attachable_counts: tuple[int, ...] = ()
    """GPU counts allowed when attaching to `attachable_family` machines."""

    def default_machine(self, gpus: int) -> str | None:
        """The smallest listed machine that carries exactly `gpus` GPUs, or None."""
        for machine, count in self.machines.items():
            if count == gpus:
                return machine
        return None

    def allows(self, machine: str, gpus: int) -> bool:
        """True when `machine` with `gpus` attached GPUs is a shape GCP offers."""
        if machine in self.machines:
            return self.machines[machine] == gpus
        if self.attachable_family and machine.startswith(self.attachable_family + "-"):
            return gpus in self.attachable_counts
        return False


@dataclass(frozen=True)
class AwsOffer:
    """How AWS offers a GPU: the EC2 instance types that carry it."""

    instances: Mapping[str, int]
    """Instance type -> GPUs per instance."""
    gpu_name: str
    """The value of Karpenter's `karpenter.k8s.aws/instance-gpu-name` label."""

    def default_instance(self, gpus: int) -> str | None:
        """The first listed (smallest) instance type with exactly `gpus` GPUs, or None."""
        return next((i for i, n in self.instances.items() if n == gpus), None)

    @property
    def families(self) -> tuple[str, ...]:
        """Instance families (the part before the dot), in catalog order, without repeats."""
        return tuple(dict.fromkeys(i.split(".")[0] for i in self.instances))


@dataclass(frozen=True)
class Gpu:
    """One GPU model and where each cloud offers it."""

    name: str
    """Friendly name used in stack config (`gpuplane:gpuPools[].gpu`)."""
    memory_gib: int
    """Memory per GPU in GiB: NVIDIA's nominal figure, the one the full-GPU MIG profile carries (H100 80,
    H200 141, B200 180), which rounds the memory the driver reports up to the next whole GiB."""
    architecture: str
    mig_profiles: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    """MIG partition profile (e.g. `1g.10gb`) -> instances of it one GPU splits into; empty without MIG."""
    gke_mig_profiles: tuple[str, ...] = ()
    """The profiles GKE accepts as `gpu_partition_size` (GKE offers no 4g profiles on A100/H100)."""
    gcp: GcpOffer | None = None
    aws: AwsOffer | None = None
    description: str = ""
    nvlink_domain_gpus: int | None = None
    """GPUs joined by one NVLink domain: 8 on an HGX board, 72 on an NVL72 rack; None where the catalog does
    not record it, or where the GPUs talk over PCIe only."""

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)

    @property
    def multi_node_nvlink(self) -> bool:
        """True when one NVLink domain spans more GPUs than any one node of it carries on any cloud (GB200 and
        GB300 NVL72): NVLink between the nodes then needs NVIDIA IMEX, which a DRA ComputeDomain sets up."""
        largest = max((*self.counts_on("gcp"), *self.counts_on("aws")), default=0)
        return self.nvlink_domain_gpus is not None and 0 < largest < self.nvlink_domain_gpus

    def counts_on(self, cloud: str) -> list[int]:
        """GPUs-per-node counts a cloud offers for this GPU, ascending."""
        if cloud == "gcp" and self.gcp is not None:
            return sorted(set(self.gcp.machines.values()) | set(self.gcp.attachable_counts))
        if cloud == "aws" and self.aws is not None:
            return sorted(set(self.aws.instances.values()))
        return []


__all__ = ["AwsOffer", "GcpOffer", "Gpu", "frozen"]
