"""The cluster placement group an EFA pool gets when it names none: one place for managed node groups and
Karpenter classes alike."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from ..config.model import GpuPool
from . import efa


def own_placement_group(
    name: str, cluster: str, pool: GpuPool, opts: pulumi.ResourceOptions
) -> pulumi.Output[str] | None:
    """A cluster placement group for an EFA pool that names none (the name its launch template or
    EC2NodeClass then uses): without one the pool's nodes spread over the AZ's network, and a named group
    nothing creates leaves an EC2NodeClass not Ready (PlacementGroupReady false; Karpenter v1.14
    concepts/nodeclasses.md `placementGroupSelector`). None when the pool names its own."""
    if pool.placementGroup is not None:
        return None
    group = aws.ec2.PlacementGroup(f"{name}-{pool.name}-pg", **efa.placement_group_args(cluster, pool), opts=opts)
    out: pulumi.Output[str] = group.name
    return out
