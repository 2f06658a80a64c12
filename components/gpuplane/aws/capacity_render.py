"""Launch-template settings for a managed node group's reserved capacity (pure).

A Capacity Block runs with the node group's `capacity_type: CAPACITY_BLOCK` and a launch template whose
market type is `capacity-block` and that targets the block; a targeted on-demand capacity reservation
(ODCR) runs `ON_DEMAND` instances through the launch template's `capacity_reservation_specification`
(EKS user guide, capacity-blocks-mng.adoc and the targeted-ODCR pattern of aws-ia/terraform-aws-eks-blueprints
`patterns/targeted-odcr`). Names are pulumi-aws `ec2.LaunchTemplate` inputs; values are EC2's
(botocore ec2 model: `MarketType`, `CapacityReservationPreference`), checked by the tests.
"""

from __future__ import annotations

from typing import Any

from ..config.capacity import capacity_order
from ..config.model import GpuPool


def reserved_launch_args(pool: GpuPool) -> dict[str, Any]:
    """Extra `ec2.LaunchTemplate` arguments of a reserved pool ({} for others)."""
    r = pool.reservation
    if r is None or capacity_order("eks-managed", pool)[0] != "reserved" or not r.ids:
        return {}
    target = {
        # `capacity-reservations-only`: never fall outside the reservation (the order has no on-demand).
        "capacity_reservation_preference": "capacity-reservations-only",
        "capacity_reservation_target": {"capacity_reservation_id": r.ids[0]},
    }
    if r.type == "capacity-block":
        return {
            "instance_market_options": {"market_type": "capacity-block"},
            "capacity_reservation_specification": target,
        }
    return {"capacity_reservation_specification": target}


def reservation_zone(pool: GpuPool) -> str | None:
    """The Availability Zone a reserved pool's subnets are pinned to (a reservation lives in one AZ)."""
    r = pool.reservation
    if r is None or capacity_order("eks-managed", pool)[0] != "reserved":
        return None
    return r.zone
