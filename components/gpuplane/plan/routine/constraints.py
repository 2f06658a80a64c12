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
    refuses: Callable[[Mapping[str, Any], Mapping[str, Any], str], bool]
    """(old inputs, new inputs, how the resource changes: "in place", "rolls", "replaced create-first" or
    "replaced delete-first") -> refused."""
    why: str
    source: str


def _sc(i: Mapping[str, Any]) -> Mapping[str, Any]:
    return i.get("scalingConfig") or {}


def _min_above_desired(old: Mapping[str, Any], new: Mapping[str, Any], how: str) -> bool:
    """The stored desired size is the old one (`ignoreScalingChanges`), at worst the old minimum once the
    autoscaler scaled down; EKS refuses a minimum above it."""
    if not new.get("ignoreScalingChanges"):
        return int(_sc(new).get("minSize", 0)) > int(_sc(new).get("desiredSize", 0))
    return int(_sc(new).get("minSize", 0)) > int(_sc(old).get("minSize", 0))


def _desired_above_max(old: Mapping[str, Any], new: Mapping[str, Any], how: str) -> bool:
    """The mirror: the stored desired size may be the old maximum (the autoscaler scaled up), and EKS
    refuses a desired size above the new maximum."""
    if how != "in place" or not new.get("ignoreScalingChanges"):
        return int(_sc(new).get("desiredSize", 0)) > int(_sc(new).get("maxSize", 0))
    return int(_sc(new).get("maxSize", 0)) < int(_sc(old).get("maxSize", 0))


def _capacity_block_rolls(old: Mapping[str, Any], new: Mapping[str, Any], how: str) -> bool:
    """A roll of a Capacity Block group that may have nodes: its desired size, or (ignored, owned by the
    autoscaler) anything up to its maximum."""
    if how != "rolls" or new.get("capacityType") != "CAPACITY_BLOCK":
        return False
    may_have = int(_sc(new).get("maxSize", 0)) if new.get("ignoreScalingChanges") else 0
    return max(int(_sc(new).get("desiredSize", 0)), may_have) > 0


def _reservation_created_first(old: Mapping[str, Any], new: Mapping[str, Any], how: str) -> bool:
    """A Capacity Block group replaced create-first: the new group's nodes need the block the old group's
    nodes still hold."""
    return how == "replaced create-first" and new.get("capacityType") == "CAPACITY_BLOCK"


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
        "eks-desired-above-max",
        _desired_above_max,
        "EKS refuses a desired size above maxSize, and the desired size sent is the stored one, which "
        "cluster-autoscaler may have raised to the old maximum",
        "botocore eks service-2 NodegroupScalingConfig (desiredSize <= maxSize); hashicorp/terraform-provider-aws "
        "internal/service/eks/node_group.go expandNodegroupScalingConfig (always sends desired_size)",
    ),
    Constraint(
        "eks:index:ManagedNodeGroup",
        "capacity-block-created-first",
        _reservation_created_first,
        "a Capacity Block group replaced before the old one is deleted gets no instances: the block's capacity "
        "is still held by the old group's nodes",
        "EKS user guide capacity-blocks-mng; EC2 user guide capacity-blocks-using",
    ),
    Constraint(
        "eks:index:ManagedNodeGroup",
        "capacity-block-roll",
        _capacity_block_rolls,
        "a Capacity Block node group must be at desired size 0 before an update that rolls its nodes",
        'EKS user guide capacity-blocks-mng ("update ... set the desired size to 0")',
    ),
)
