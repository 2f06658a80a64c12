"""A managed node group's desired size, read from EKS at every `up` and kept within the new range.

cluster-autoscaler owns a group's desired size. Ignoring it (`ignoreScalingChanges`, terraform-aws-eks's
`ignore_changes`) breaks the everyday scaling edits: the provider's update always sends the whole scaling
config with the *stored* desired size (hashicorp/terraform-provider-aws internal/service/eks/node_group.go
`expandNodegroupScalingConfig`), and EKS refuses a minimum above it or a maximum below it
(UpdateNodegroupConfig, InvalidParameterException; terraform-aws-eks #748, #944, #2030, #3306). Without a
refresh the stored size is stale, and sending it shrinks a busy group (pulumi/pulumi-eks #1770).

So gpuplane sends what EKS has now, clamped to the new `[min, max]`: the size the autoscaler chose when
nothing changed (a no-op after a refresh; without one the state is stale and the update re-sends EKS its
own size), the new minimum when it was raised past the group's size, the new maximum when it was lowered
below. A new group starts at its minimum; a create-first replacement at the size of the group it replaces.
The read is an invoke (`eks.getNodeGroups`, then `eks.getNodeGroup`), made again on every `preview` and
`up`. The provider updates the version before the scaling config (`resourceNodeGroupUpdate`), so during a
roll the autoscaler's changes are overwritten by the size read before it.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

SUFFIX = 26
"""Characters the provider appends to `nodeGroupNamePrefix`: terraform-plugin-sdk `helper/id`
`PrefixedUniqueId` formats an 18-digit timestamp and an 8-hex-digit counter (`%s%s%08x`);
terraform-provider-aws matches such names with `[[:xdigit:]]{26}` (internal/create/naming.go)."""

_SUFFIX = re.compile(r"[0-9a-f]{26}")


def own_group(names: Sequence[str], name_args: Mapping[str, str]) -> str | None:
    """Which of a cluster's node groups is this one: its fixed name, or its prefix plus the provider's
    26-hex-digit suffix (a longer pool name with the same start has more characters before the suffix). Of
    two (a replacement half done), the newest name (the suffix starts with a timestamp)."""
    if "node_group_name" in name_args:
        return name_args["node_group_name"] if name_args["node_group_name"] in names else None
    prefix = name_args["node_group_name_prefix"]
    ours = [n for n in names if n.startswith(prefix) and _SUFFIX.fullmatch(n[len(prefix) :])]
    return max(ours) if ours else None


def clamp(current: int | None, low: int, high: int) -> int:
    """The desired size to send: the current one within `[low, high]`, or `low` for a new group."""
    return low if current is None else min(max(current, low), high)


@dataclass(frozen=True)
class LiveGroup:
    """What EKS reports for an existing node group (DescribeNodegroup)."""

    desired: int | None
    version: str | None
    launch_template_version: str | None
    launch_template_id: str | None = None


def _listing(cluster_name: pulumi.Input[str], parent: pulumi.Resource, opts: pulumi.InvokeOutputOptions) -> Any:
    """One `eks.getNodeGroups` per cluster and component: its groups share the listing (kept on the component,
    matched by the very same `cluster_name` object)."""
    kept: list[tuple[Any, Any]] = parent.__dict__.setdefault("_gpuplane_node_group_listings", [])
    for name, listed in kept:
        if name is cluster_name:
            return listed
    listed = aws.eks.get_node_groups_output(cluster_name=cluster_name, opts=opts)
    kept.append((cluster_name, listed))
    return listed


def live_group(
    cluster_name: pulumi.Input[str],
    name_args: Mapping[str, str],
    parent: pulumi.Resource,
    depends_on: Any = None,
) -> pulumi.Output[LiveGroup | None]:
    """The node group named by `name_args` (`node_group_name` or `node_group_name_prefix`) as EKS reports it
    now, or None before it exists. An invoke waits only for the resources in its inputs and its own
    `depends_on` (pulumi/runtime/invoke.py), not its parent's: `depends_on` carries the component's, so a
    cluster named by a plain string exists before it is listed."""
    opts = pulumi.InvokeOutputOptions(parent=parent, depends_on=depends_on)
    listed = _listing(cluster_name, parent, opts)

    def read(found: list[Any]) -> pulumi.Output[LiveGroup | None] | None:
        cluster, names = str(found[0]), [str(n) for n in found[1] or []]
        name = own_group(names, name_args)
        if name is None:
            return None
        group = aws.eks.get_node_group_output(cluster_name=cluster, node_group_name=name, opts=opts)

        def record(g: Any) -> LiveGroup:
            sc, lts = g.scaling_configs or [], g.launch_templates or []
            return LiveGroup(
                int(sc[0].desired_size) if sc else None,
                g.version,
                str(lts[0].version) if lts else None,
                str(lts[0].id) if lts else None,
            )

        return group.apply(record)

    return pulumi.Output.all(listed.cluster_name, listed.names).apply(read)


def held_while_busy(
    live: pulumi.Output[LiveGroup | None], field: str, wanted: pulumi.Input[str], template_id: pulumi.Input[str] = ""
) -> pulumi.Output[str]:
    """A Capacity Block group's `version` or launch template version: the new one once the group is empty
    (or new), else the one it runs. AWS updates such groups only at desired size 0 (EKS user guide
    capacity-blocks-mng): the block has no spare instances to surge into. The group reaches 0 before the
    block ends (EC2 ends the block's instances; AWS's guide has you schedule the scale-in), so the roll
    comes on the first `up` after that. A launch template version is held only while the group runs the
    same template (`template_id`): a new template (a replaced group) starts at its own version."""

    def pick(args: list[Any]) -> str:
        group, new, tid = args
        running = getattr(group, field) if group is not None else None
        busy = group is not None and (group.desired or 0) > 0
        same = not tid or (group is not None and group.launch_template_id == str(tid))
        return str(running) if busy and same and running is not None else str(new)

    return pulumi.Output.all(live, wanted, template_id).apply(pick)


def with_live_size(
    group_args: Mapping[str, Any],
    cluster_name: pulumi.Input[str],
    parent: pulumi.Resource,
    wiring: Mapping[str, Any] | None = None,
    depends_on: Any = None,
) -> dict[str, Any]:
    """A node group's arguments (`render.gpu_node_group_args`, plus the component's `wiring`) with the desired
    size read from EKS, and for a Capacity Block group the version and launch template it runs while busy.
    `depends_on`: what the read must wait for beyond `cluster_name` (the component's own `depends_on`)."""
    sc = dict(group_args["scaling_config"])
    name_args = {k: str(v) for k, v in group_args.items() if k in ("node_group_name", "node_group_name_prefix")}
    live = live_group(cluster_name, name_args, parent, depends_on)
    low, high = int(sc["min_size"]), int(sc["max_size"])
    sc["desired_size"] = live.apply(lambda g: clamp(None if g is None else g.desired, low, high))
    out = {**(wiring or {}), **group_args, "scaling_config": sc}
    if group_args.get("capacity_type") == "CAPACITY_BLOCK":
        if out.get("version") is not None:
            out["version"] = held_while_busy(live, "version", out["version"])
        if out.get("launch_template") is not None:
            lt = dict(out["launch_template"])
            lt["version"] = held_while_busy(live, "launch_template_version", lt["version"], lt.get("id", ""))
            out["launch_template"] = lt
    return out
