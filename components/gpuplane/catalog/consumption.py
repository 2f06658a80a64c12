"""How each machine is sold: the consumption options a cloud offers per GPU machine, as dated tables.

A pool's `capacity` order names the options it may use (`on-demand`, `spot`, `flex-start`, `queued`,
`reserved`); an option the machine is not sold under never yields a node, so its pods stay Pending and a
fallback to it never happens. Checked 2026-11; verify for your account and region.

Sources:
- GCP: Cluster Director "Choose a consumption option" (cloud.google.com/cluster-director/docs/
  choose-consumption-option: flex-start for A4, A3 Ultra and A3 Mega; spot for A4, A3 Ultra and A3 Mega;
  no on-demand for them); AI Hypercomputer "Consumption models" (flex-start and spot: any GPU machine
  except A4X); Compute Engine "About flex-start VMs" (all accelerator-optimized machine types except A4X
  and G4, so not N1 with attached GPUs); "About reservation-bound instances" (A4X, A4, A3 Ultra, A3 Mega,
  A3 High 8 GPUs); "GPU machine types" (a3-highgpu-1g, -2g and -4g only as Spot or flex-start VMs;
  recalled, not re-read offline: verify); GoogleCloudPlatform/cluster-toolkit examples/gke-a3-ultragpu
  (needs a reservation;
  gke-consumption-options adds dws-flex-start and queued provisioning). Queued provisioning is flex-start
  with `--enable-queued-provisioning` (GKE ProvisioningRequest docs), so it follows flex-start.
- AWS: EC2 user guide "Capacity Blocks for ML" (capacity-blocks-how: p6-b200, p5, p5e, p5en, p4d, p4de,
  trn1, trn2); on-demand, spot and ODCRs for the other GPU families.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

ALL_GCP = frozenset({"on-demand", "spot", "flex-start", "queued", "reserved"})

GCP_SOLD: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        # machine-type prefix -> how GCP sells it (the longest matching prefix wins)
        "a3-ultragpu-": frozenset({"spot", "flex-start", "queued", "reserved"}),
        "a3-megagpu-": frozenset({"spot", "flex-start", "queued", "reserved"}),
        "a4-highgpu-": frozenset({"spot", "flex-start", "queued", "reserved"}),
        "a4x-": frozenset({"reserved"}),
        # A3 High with 1, 2 or 4 GPUs: Spot or flex-start only (Compute Engine "GPU machine types", A3 High)
        "a3-highgpu-1g": frozenset({"spot", "flex-start", "queued"}),
        "a3-highgpu-2g": frozenset({"spot", "flex-start", "queued"}),
        "a3-highgpu-4g": frozenset({"spot", "flex-start", "queued"}),
        "n1-": frozenset({"on-demand", "spot", "reserved"}),
    }
)
"""GCP machine-type prefix -> consumption options; machines not listed are sold under every option."""

CAPACITY_BLOCK_FAMILIES = frozenset({"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "trn1", "trn2"})
"""AWS instance families offered as EC2 Capacity Blocks for ML."""


def gcp_sold(machine: str) -> frozenset[str]:
    """The consumption options GCP sells `machine` under."""
    hits = [p for p in GCP_SOLD if machine.startswith(p)]
    return GCP_SOLD[max(hits, key=len)] if hits else ALL_GCP


def capacity_block_offered(instance_type: str) -> bool:
    return instance_type.split(".", 1)[0] in CAPACITY_BLOCK_FAMILIES


__all__ = ["ALL_GCP", "CAPACITY_BLOCK_FAMILIES", "GCP_SOLD", "capacity_block_offered", "gcp_sold"]
