"""What the clouds refuse on update, as a table (each row cites its source)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Constraint:
    """An update the cloud refuses (or that breaks a rule the cloud states), on one resource type."""

    type: str
    id: str
    refuses: Callable[[Mapping[str, Any], Mapping[str, Any], bool], bool]
    """(old inputs, new inputs, whether the change rolls nodes) -> refused."""
    why: str
    source: str


def _sc(i: Mapping[str, Any]) -> Mapping[str, Any]:
    return i.get("scalingConfig") or {}


def _min_above_desired(old: Mapping[str, Any], new: Mapping[str, Any], rolls: bool) -> bool:
    """The stored desired size is the old one (`ignoreScalingChanges`), at worst the old minimum once the
    autoscaler scaled down; EKS refuses a minimum above it."""
    if not new.get("ignoreScalingChanges"):
        return int(_sc(new).get("minSize", 0)) > int(_sc(new).get("desiredSize", 0))
    return int(_sc(new).get("minSize", 0)) > int(_sc(old).get("minSize", 0))


def _capacity_block_rolls(old: Mapping[str, Any], new: Mapping[str, Any], rolls: bool) -> bool:
    return rolls and new.get("capacityType") == "CAPACITY_BLOCK" and int(_sc(new).get("desiredSize", 0)) > 0


CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint(
        "eks:index:ManagedNodeGroup",
        "eks-min-above-desired",
        _min_above_desired,
        "EKS UpdateNodegroupConfig refuses minSize above the desired size (InvalidParameterException), and the "
        "desired size sent is the stored one, which cluster-autoscaler owns",
        "botocore eks service-2 NodegroupScalingConfig; terraform-aws-modules/terraform-aws-eks #748, #944, #2030, "
        "#3306; pulumi/pulumi-eks #1770",
    ),
    Constraint(
        "eks:index:ManagedNodeGroup",
        "capacity-block-roll",
        _capacity_block_rolls,
        "a Capacity Block node group must be at desired size 0 before an update that rolls its nodes",
        'EKS user guide capacity-blocks-mng ("update ... set the desired size to 0")',
    ),
)
