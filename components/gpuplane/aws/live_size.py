"""A managed node group's desired size, read from EKS at every `up` and kept within the new range.

cluster-autoscaler owns a group's desired size. Ignoring it (`ignoreScalingChanges`, terraform-aws-eks's
`ignore_changes`) breaks the everyday scaling edits: the provider's update always sends the whole scaling
config with the *stored* desired size (hashicorp/terraform-provider-aws internal/service/eks/node_group.go
`expandNodegroupScalingConfig`), and EKS refuses a minimum above it or a maximum below it
(UpdateNodegroupConfig, InvalidParameterException; terraform-aws-eks #748, #944, #2030, #3306). Without a
refresh the stored size is stale, and sending it shrinks a busy group (pulumi/pulumi-eks #1770).

So gpuplane sends what EKS has now, clamped to the new `[min, max]`: a no-op when nothing changed, the new
minimum when it was raised past the group's size, the new maximum when it was lowered below. A group
that does not exist yet starts at its minimum. The read is an invoke (`eks.getNodeGroups`, then
`eks.getNodeGroup`), made again on every `preview` and `up`; the window between it and the update is the
only time the autoscaler's own change can be overwritten.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

SUFFIX = 26
"""Characters the provider appends to `nodeGroupNamePrefix` (terraform-plugin-sdk `id.PrefixedUniqueId`)."""


def own_group(names: Sequence[str], name_args: Mapping[str, str]) -> str | None:
    """Which of a cluster's node groups is this one: its fixed name, or its prefix plus the provider's
    26-digit suffix (a longer pool name with the same start has more characters before the digits). Of two
    (a replacement half done), the newest name (the suffix is a timestamp)."""
    if "node_group_name" in name_args:
        return name_args["node_group_name"] if name_args["node_group_name"] in names else None
    prefix = name_args["node_group_name_prefix"]
    ours = [n for n in names if n.startswith(prefix) and len(n) == len(prefix) + SUFFIX and n[len(prefix) :].isdigit()]
    return max(ours) if ours else None


def clamp(current: int | None, low: int, high: int) -> int:
    """The desired size to send: the current one within `[low, high]`, or `low` for a new group."""
    return low if current is None else min(max(current, low), high)


def desired_size(
    cluster_name: pulumi.Input[str], name_args: Mapping[str, str], low: int, high: int, parent: pulumi.Resource
) -> pulumi.Output[int]:
    """The desired size of the node group named by `name_args` (`node_group_name` or
    `node_group_name_prefix`), as EKS reports it now and clamped to `[low, high]`."""
    opts = pulumi.InvokeOutputOptions(parent=parent)
    listed = aws.eks.get_node_groups_output(cluster_name=cluster_name, opts=opts)

    def read(found: list[Any]) -> pulumi.Output[int] | int:
        cluster, names = str(found[0]), [str(n) for n in found[1] or []]
        name = own_group(names, name_args)
        if name is None:
            return low
        group = aws.eks.get_node_group_output(cluster_name=cluster, node_group_name=name, opts=opts)
        return group.scaling_configs.apply(lambda sc: clamp(int(sc[0].desired_size) if sc else None, low, high))

    return pulumi.Output.all(listed.cluster_name, listed.names).apply(read)


def with_live_size(
    group_args: Mapping[str, Any], cluster_name: pulumi.Input[str], parent: pulumi.Resource
) -> dict[str, Any]:
    """A node group's arguments (`render.gpu_node_group_args`) with the desired size read from EKS."""
    sc = dict(group_args["scaling_config"])
    name_args = {k: str(v) for k, v in group_args.items() if k in ("node_group_name", "node_group_name_prefix")}
    sc["desired_size"] = desired_size(cluster_name, name_args, int(sc["min_size"]), int(sc["max_size"]), parent)
    return {**group_args, "scaling_config": sc}
