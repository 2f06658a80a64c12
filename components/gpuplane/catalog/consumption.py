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
  G4 (g4-standard-*, RTX PRO 6000) is sold on demand and as Spot VMs (cluster-toolkit's daily tests run
  gke-g4-onspot; dstack lists on-demand G4 prices) but not flex-start ("About flex-start VMs", above), so not
  queued either. A4X Max (a4x-maxgpu-4g-metal) shares the `a4x-` prefix: AI Hypercomputer "Create an A4X Max
  MIG" ("You must use the reservation-bound provisioning model. Other provisioning models are not supported").
- AWS: EC2 user guide "Capacity Blocks for ML" (capacity-blocks-how: p6-b200, p5, p5e, p5en, p4d, p4de,
  trn1, trn2); on-demand, spot and ODCRs for the other GPU families. Checked 2026-12 for Blackwell: P6e-GB200
  is sold only as UltraServer Capacity Blocks (AWS SDK EC2 changelog 2025-07-09: "Capacity Blocks for ML ...
  P6e-GB200 UltraServers. Customers can now purchase u-p6e-gb200x72 and u-p6e-gb200x36 UltraServers"; EC2
  user guide "Launch instances using Capacity Blocks": "To use P6e-GB200 UltraServer Capacity Blocks, you must
  be opted in to the Dallas Local Zone"; AWS PCS "Configure UltraServer instances" requires a Capacity Block;
  EC2 "Accelerated computing instances" shows no Spot support for p6e-gb200.36xlarge, as quoted by third-party
  pages: the stored copy of that table was not readable here). P6-B300 Capacity Blocks: EC2 Capacity Blocks
  pricing lists p6-b300.48xlarge (quoted by third-party pages; the user guide's list was not readable here:
  verify). P6-B200, P6-B300 and G7e have on-demand and Spot prices in skypilot-org/skypilot-catalog
  catalogs/v9/aws/vms.csv (2c3d7ea7, generated from the AWS price list).
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
        "a4x-": frozenset({"reserved"}),  # A4X (GB200) and A4X Max (a4x-maxgpu-4g-metal, GB300)
        # G4 (RTX PRO 6000): no flex-start ("About flex-start VMs": all accelerator-optimized types except A4X, G4)
        "g4-": frozenset({"on-demand", "spot", "reserved"}),
        # A3 High with 1, 2 or 4 GPUs: Spot or flex-start only (Compute Engine "GPU machine types", A3 High)
        "a3-highgpu-1g": frozenset({"spot", "flex-start", "queued"}),
        "a3-highgpu-2g": frozenset({"spot", "flex-start", "queued"}),
        "a3-highgpu-4g": frozenset({"spot", "flex-start", "queued"}),
        "n1-": frozenset({"on-demand", "spot", "reserved"}),
    }
)
"""GCP machine-type prefix -> consumption options; machines not listed are sold under every option."""

CAPACITY_BLOCK_FAMILIES = frozenset(
    {"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200", "trn1", "trn2"}
)
"""AWS instance families offered as EC2 Capacity Blocks for ML (p6e-gb200 as UltraServers: `catalog.topology.
NVLINK_DOMAINS`). g7e is not among them (no G7e Capacity Block price)."""

ALL_AWS = frozenset({"on-demand", "spot", "reserved"})

AWS_SOLD: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        # P6e-GB200: only UltraServer Capacity Blocks (a reservation), in the Dallas Local Zone of us-east-1.
        "p6e-gb200": frozenset({"reserved"}),
    }
)
"""AWS instance family -> consumption options (`on-demand`, `spot`, `reserved`: an ODCR or Capacity Block);
families not listed are sold under all three."""


def gcp_sold(machine: str) -> frozenset[str]:
    """The consumption options GCP sells `machine` under."""
    hits = [p for p in GCP_SOLD if machine.startswith(p)]
    return GCP_SOLD[max(hits, key=len)] if hits else ALL_GCP


def aws_sold(instance_type: str) -> frozenset[str]:
    """The consumption options AWS sells `instance_type` under."""
    return AWS_SOLD.get(instance_type.split(".", 1)[0], ALL_AWS)


def capacity_block_offered(instance_type: str) -> bool:
    return instance_type.split(".", 1)[0] in CAPACITY_BLOCK_FAMILIES


__all__ = [
    "ALL_AWS",
    "ALL_GCP",
    "AWS_SOLD",
    "CAPACITY_BLOCK_FAMILIES",
    "GCP_SOLD",
    "aws_sold",
    "capacity_block_offered",
    "gcp_sold",
]
