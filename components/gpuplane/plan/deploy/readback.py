"""Day two: what each provider reads back after a create, and so what a second `pulumi up` would change.

After a create, and on every `pulumi refresh`, a provider's Read stores what the cloud API returns, not
what the program sent. A bridged provider's Diff then compares the program's inputs with that state
(pulumi/pulumi-terraform-bridge pkg/tfbridge/provider.go Diff: the prior state is the refreshed one),
honouring `ignoreChanges` (the engine substitutes the old inputs for ignored paths). So every field that
the API fills, rewrites or hands to another controller shows up as a diff on the next `up` unless the
program ignores it or does not set it; a ForceNew field then replaces the resource.

`READ_BACK` is that model as data: per resource type, the input paths whose read-back differs from what
was sent, each with the reason, the upstream source and the fix. `second_up` applies it to a plan.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from ..cloud import LIVE_READS, Cloud
from ..mocks_aws import physical_node_group_name
from ..paths import changed_paths
from ..replacement import classify, covers, ignored_paths
from ..runner import Plan, PlannedResource
from .graph import at_path

CLEARED = object()
"""A read-back value: the API returns nothing for the path, so the state loses it."""


class Kind(StrEnum):
    REWRITTEN = "rewritten by the API"
    """The API returns another value than the one sent (normalised, or filled from elsewhere)."""
    OWNED = "owned by another controller"
    """Something other than Pulumi changes it after create (an autoscaler, auto-upgrade)."""


@dataclass(frozen=True)
class ReadBack:
    """One field whose stored value after create is not what the program sent."""

    path: str
    """Pulumi input path (camelCase, dot separated), as in the plan JSON."""
    kind: Kind
    value: Callable[[PlannedResource, Plan], Any]
    """What Read stores for the path, from the resource and the rest of the plan (`CLEARED` for nothing)."""
    why: str
    source: str
    fix: str
    when: Callable[[PlannedResource, Plan], bool] = lambda r, plan: True
    """Only resources for which this holds (given the whole plan) read the field back differently."""
    followed_by: frozenset[str] = frozenset()
    """Invokes with which a program reads the field's live value and sends it back: a plan that made one
    but cannot be run again (`Plan.replan` is None) is taken to send what is stored."""


def _first_pool_node_config(r: PlannedResource, plan: Plan) -> Any:
    """GKE's `Cluster.nodeConfig` read-back: a node pool's config (the API's first; here the first the plan
    registers, as the API's order is not known offline), or nothing once the default pool is gone and
    before another exists. Any pool's config differs from the default pool's, so the drift is the same."""
    for p in plan.resources:
        if p.type == "gcp:container/nodePool:NodePool" and str(p.inputs.get("cluster", "")).endswith(
            f"/clusters/{r.inputs.get('name', r.name)}"
        ):
            return copy.deepcopy(p.inputs.get("nodeConfig", CLEARED))
    return CLEARED


def _changed(to: Callable[[Any], Any]) -> Callable[[PlannedResource, Plan], Any]:
    return lambda r, plan: to(r.inputs)


def _autoscaled(r: PlannedResource, plan: Plan) -> bool:
    return bool(r.inputs.get("autoscaling"))


def _autoscaler_runs(r: PlannedResource, plan: Plan) -> bool:
    """cluster-autoscaler is installed by the plan and may resize the group (a min..max range to work in)."""
    sc = r.inputs.get("scalingConfig") or {}
    ranged = sc.get("minSize") != sc.get("maxSize")
    return ranged and any(
        p.type == "kubernetes:helm.sh/v3:Release" and str(p.inputs.get("chart", "")).endswith("cluster-autoscaler")
        for p in plan.resources
    )


def _auto_upgraded(r: PlannedResource, plan: Plan) -> bool:
    return (r.inputs.get("management") or {}).get("autoUpgrade", True) is not False


def _bumped(version: Any) -> Any:
    """A GKE version after an auto-upgrade: another patch than the one sent."""
    return f"{version}-upgraded"


def _desired_size(source: str, fix: str) -> ReadBack:
    """An EKS node group's desired size, which cluster-autoscaler moves (same rule on pulumi-eks's component
    and on the aws.eks.NodeGroup itself; only the fix's spelling differs)."""
    return ReadBack(
        "scalingConfig.desiredSize",
        Kind.OWNED,
        _changed(lambda i: (i.get("scalingConfig") or {}).get("desiredSize", 0) + 1),
        "cluster-autoscaler sets the node group's desired size",
        "hashicorp/terraform-provider-aws internal/service/eks/node_group.go resourceNodeGroupRead "
        "(scaling_config from the API)" + source,
        fix,
        when=_autoscaler_runs,
        followed_by=LIVE_READS,
    )


TPG = "hashicorp/terraform-provider-google google/services/container/"
READ_BACK: Mapping[str, tuple[ReadBack, ...]] = MappingProxyType(
    {
        "gcp:container/cluster:Cluster": (
            ReadBack(
                "nodeConfig",
                Kind.REWRITTEN,
                _first_pool_node_config,
                "with removeDefaultNodePool the default pool's config is gone after create; the API's deprecated "
                "Cluster.nodeConfig is then the first node pool's config (or empty), and node_config is ForceNew",
                f'{TPG}resource_container_cluster.go resourceContainerClusterRead (d.Set("node_config", '
                'flattenNodeConfig(cluster.NodeConfig))); GKE API v1 Cluster.nodeConfig ("populated with the node '
                'configuration of the first node pool"); GoogleCloudPlatform/cluster-toolkit modules/scheduler/'
                "gke-cluster/main.tf lifecycle ignore_changes [node_config]; GoogleCloudPlatform/k8s-config-connector "
                "#8125",
                'ignoreChanges: ["nodeConfig"] on the cluster (the default pool only lives during create)',
                when=lambda r, plan: r.inputs.get("removeDefaultNodePool") is True,
            ),
            ReadBack(
                "nodeVersion",
                Kind.OWNED,
                _changed(lambda i: _bumped(i.get("nodeVersion"))),
                "GKE auto-upgrades the default pool's nodes on the release channel",
                f"{TPG}resource_container_cluster.go (node_version is read from cluster.CurrentNodeVersion)",
                "do not set nodeVersion on a cluster with a release channel",
                # terraform-provider-google refuses node_version with remove_default_node_pool at plan time
                # (containerClusterNodeVersionRemoveDefaultCustomizeDiff): no stored value to drift.
                when=lambda r, plan: r.inputs.get("removeDefaultNodePool") is not True,
            ),
        ),
        "gcp:container/nodePool:NodePool": (
            ReadBack(
                "nodeCount",
                Kind.OWNED,
                _changed(lambda i: int(i.get("nodeCount", 0)) + 1),
                "the cluster autoscaler resizes an autoscaled pool",
                f"{TPG}resource_container_node_pool.go flattenNodePool (node_count from the instance groups' "
                "target size)",
                "set initialNodeCount (ignored after create), not nodeCount, on an autoscaled pool",
                when=_autoscaled,
            ),
            ReadBack(
                "version",
                Kind.OWNED,
                _changed(lambda i: _bumped(i.get("version"))),
                "GKE auto-upgrades the pool's nodes (management.autoUpgrade, required on release channels)",
                f"{TPG}resource_container_node_pool.go flattenNodePool (version from np.Version)",
                "leave version unset on auto-upgraded pools (GKE follows the cluster), or ignoreChanges it",
                when=_auto_upgraded,
            ),
        ),
        "eks:index:ManagedNodeGroup": (
            _desired_size(
                "; pulumi/pulumi-eks #1770",
                "send the group's current desired size, read with eks.getNodeGroup (gpuplane.aws.live_size), or "
                "ignoreScalingChanges: true (then EKS refuses a minSize raised above the stored size)",
            ),
        ),
        "aws:eks/nodeGroup:NodeGroup": (
            _desired_size(
                "",
                "send the group's current desired size, read with eks.getNodeGroup (gpuplane.aws.live_size), or "
                'ignoreChanges: ["scalingConfig.desiredSize"] (then EKS refuses a minSize raised above it)',
            ),
        ),
    }
)
"""Resource type -> the fields whose read-back differs from the inputs sent. A type absent here reads back
what it was sent (or only outputs the program never sets)."""


def _get(tree: Any, path: str) -> Any:
    return at_path(tree, path, CLEARED)


def _put(tree: dict[str, Any], path: str, value: Any) -> None:
    *heads, last = path.split(".")
    for key in heads:
        nxt = tree.get(key)
        if not isinstance(nxt, dict):
            return
        tree = nxt
    if value is CLEARED:
        tree.pop(last, None)
    else:
        tree[last] = value


def refreshed(r: PlannedResource, plan: Plan) -> tuple[dict[str, Any], list[ReadBack]]:
    """The resource's stored inputs after create and refresh, and the rules that changed them."""
    if r.type not in READ_BACK:
        return r.inputs, []  # reads back what it was sent: nothing to copy or compare
    state = copy.deepcopy(r.inputs)
    hit = []
    for rule in READ_BACK.get(r.type, ()):
        sent = _get(r.inputs, rule.path)
        if sent is CLEARED or not rule.when(r, plan):
            continue  # the program does not set it: nothing to compare on the next up
        after = rule.value(r, plan)
        if after != sent:
            _put(state, rule.path, after)
            hit.append(rule)
    return state, hit


@dataclass(frozen=True)
class Drift:
    """A field the second `up` would change, and what that change does."""

    urn: str
    type: str
    rule: ReadBack
    effect: str
    """"replaces", "disrupts nodes" or "updates in place"."""
    paths: tuple[str, ...] = ()
    """The input paths under the rule's path that differ."""

    def message(self) -> str:
        return (
            f"{self.type} `{self.rule.path}` is {self.rule.kind.value}: {self.rule.why} ({self.rule.source}); "
            f"the second `pulumi up` {self.effect} it"
        )


NODE_GROUPS = ("eks:index:ManagedNodeGroup", "aws:eks/nodeGroup:NodeGroup")


def _eks_cluster_name(r: PlannedResource, plan: Plan) -> str:
    """The cluster a node group is in: `clusterName`, or the name of the `eks.Cluster` it references."""
    if r.inputs.get("clusterName"):
        return str(r.inputs["clusterName"])
    ref = str(r.inputs.get("cluster", ""))
    try:
        cluster = plan.get(ref)
    except KeyError:
        return ref
    return str(cluster.inputs.get("name", cluster.name))


def cloud_after(plan: Plan) -> Cloud:
    """What the plan leaves in the cloud once created and refreshed, as the invokes of the next `up` see it."""
    groups: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in plan.resources:
        if r.type in NODE_GROUPS:
            state, _ = refreshed(r, plan)
            name = physical_node_group_name(r.inputs, r.name)
            kept: dict[str, Any] = {k: state[k] for k in ("scalingConfig", "version", "launchTemplate") if k in state}
            groups.setdefault(_eks_cluster_name(r, plan), {})[name] = kept
    return Cloud(node_groups=groups)


def stored(plan: Plan) -> dict[str, Any]:
    """The plan's JSON as the state holds it after create and refresh: each resource's inputs as read back."""
    doc = plan.to_json()
    for r, entry in zip(plan.resources, doc["resources"], strict=True):
        entry["inputs"] = refreshed(r, plan)[0]
    return doc


def next_up(plan: Plan) -> Plan:
    """The plan of the program's next `up`: itself, unless it read live state and can be run again."""
    if plan.live_reads and plan.replan is not None:
        return plan.replan(cloud_after(plan))
    return plan


def second_up(plan: Plan, again: Plan | None = None) -> Iterator[Drift]:
    """Every field a second `up` of the same program would change after a refresh, with its effect.
    `again` is the program's plan against the refreshed state (default: `next_up(plan)`)."""
    again = next_up(plan) if again is None else again
    sends = {r.urn: r.inputs for r in again.resources}
    for r in plan.resources:
        state, hits = refreshed(r, plan)
        if not hits:
            continue
        inputs = sends.get(r.urn, r.inputs)
        ignore = ignored_paths(r.type, inputs, r.ignore_changes)
        for rule in hits:
            if any(covers(i, rule.path) for i in ignore) or (again is plan and rule.followed_by & set(plan.live_reads)):
                continue
            before, after = _get(state, rule.path), _get(inputs, rule.path)
            if before is CLEARED or after is CLEARED:
                paths = [rule.path]
            else:
                paths = [p for p in changed_paths(before, after, rule.path) if not any(covers(i, p) for i in ignore)]
            found = classify(r.type, paths, state, inputs, r.replace_on_changes).values()
            effect = (
                "replaces"
                if any(f.replaces_self for f in found)
                else next((f.effect.value for f in found), "updates in place")
            )
            if paths:
                yield Drift(r.urn, r.type, rule, effect, tuple(paths))
