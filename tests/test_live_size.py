"""EKS node groups send their current desired size, read from EKS and kept within the new range, so that
raising `minNodes` or lowering `maxNodes` never meets EKS's min <= desired <= max refusal (and a stale
stored size never shrinks a busy group). The mocks answer the reads from what exists (`Cloud`)."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from gpuplane import testing
from gpuplane.aws.live_size import SUFFIX, clamp, own_group
from gpuplane.plan.cloud import Cloud
from gpuplane.plan.deploy.readback import cloud_after, next_up, second_up
from gpuplane.plan.mocks_aws import node_group_reads
from gpuplane.plan.routine import CATALOGUE
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT, cached_plan, stack_with
from .test_capacity_types import MANAGED_BLOCK

DIGITS = "1" * SUFFIX
REAL = "202612012331494567" + "0000001a"
"""A suffix as terraform-plugin-sdk makes it: an 18-digit timestamp and an 8-hex-digit counter (`%08x`)."""


def test_a_group_is_found_by_its_prefix_not_a_longer_pools() -> None:
    prefix = {"node_group_name_prefix": "ml-a-"}
    assert own_group([f"ml-a-b-{DIGITS}", f"ml-a-{DIGITS}"], prefix) == f"ml-a-{DIGITS}"
    assert own_group([f"ml-a-{REAL}"], prefix) == f"ml-a-{REAL}"  # the counter is hex: letters happen
    assert own_group([f"ml-a-b-{DIGITS}"], prefix) is None  # another pool ("a-b") only
    assert own_group(["ml-a-" + "x" * SUFFIX], prefix) is None  # not the provider's digits
    newer = "2" * SUFFIX
    assert own_group([f"ml-a-{DIGITS}", f"ml-a-{newer}"], prefix) == f"ml-a-{newer}"  # mid-replacement
    assert own_group(["ml-odcr"], {"node_group_name": "ml-odcr"}) == "ml-odcr"
    assert own_group(["ml-odcr-2"], {"node_group_name": "ml-odcr"}) is None


@pytest.mark.parametrize(
    ("current", "low", "high", "sent"),
    [(None, 2, 4, 2), (3, 0, 4, 3), (1, 2, 4, 2), (6, 0, 4, 4), (0, 0, 0, 0)],
)
def test_the_size_sent_is_the_current_one_within_the_range(current: int | None, low: int, high: int, sent: int) -> None:
    assert clamp(current, low, high) == sent


def test_the_mocks_answer_like_describe_nodegroup() -> None:
    stored = {"scalingConfig": {"minSize": 0, "desiredSize": 3, "maxSize": 4}, "version": "1.33"}
    cloud = Cloud({"c": {"c-gpu-1": {**stored, "launchTemplate": {"id": "lt-1", "version": 2}}}})
    reads = node_group_reads(lambda: cloud)
    assert reads["aws:eks/getNodeGroups:getNodeGroups"]({"clusterName": "c"})["names"] == ["c-gpu-1"]
    assert reads["aws:eks/getNodeGroups:getNodeGroups"]({"clusterName": "other"})["names"] == []
    got = reads["aws:eks/getNodeGroup:getNodeGroup"]({"clusterName": "c", "nodeGroupName": "c-gpu-1"})
    assert got["scalingConfigs"] == [{"minSize": 0, "desiredSize": 3, "maxSize": 4}] and got["version"] == "1.33"
    assert got["launchTemplates"] == [{"id": "lt-1", "name": "", "version": "2"}]
    with pytest.raises(ValueError, match="couldn't find resource"):
        reads["aws:eks/getNodeGroup:getNodeGroup"]({"clusterName": "c", "nodeGroupName": "c-gpu-2"})


def sizes(plan: Any) -> dict[str, dict[str, int]]:
    return {r.name: r.inputs["scalingConfig"] for r in plan.by_type("eks:index:ManagedNodeGroup")}


def with_inference(**keys: Any) -> Any:
    base = stack_with("aws-managed")
    pools = [dict(p) for p in base.config["gpuplane:gpuPools"]]
    for p in pools:
        if p["name"] == "inference":
            p.update(keys)
    return stack_with("aws-managed", gpuPools=pools)


def test_a_scaling_edit_sends_the_live_size_clamped_to_the_new_range() -> None:
    first = cached_plan(with_inference())
    assert sizes(first)["ml-eks-inference"]["desiredSize"] == 0  # nothing exists: the minimum
    live = cloud_after(first)
    (name,) = [n for n in live.node_groups["ml-eks"] if n.startswith("ml-eks-inference-")]
    scaled = {**live.node_groups["ml-eks"][name], "scalingConfig": {"minSize": 0, "desiredSize": 5, "maxSize": 10}}
    busy = Cloud({"ml-eks": {**live.node_groups["ml-eks"], name: scaled}})
    assert sizes(cached_plan(with_inference(), busy))["ml-eks-inference"]["desiredSize"] == 5  # left alone
    assert sizes(cached_plan(with_inference(minNodes=7), busy))["ml-eks-inference"]["desiredSize"] == 7
    assert sizes(cached_plan(with_inference(maxNodes=3), busy))["ml-eks-inference"]["desiredSize"] == 3


def test_the_second_up_reruns_a_program_that_read_live_state() -> None:
    first = cached_plan("aws-managed")
    assert "aws:eks/getNodeGroups:getNodeGroups" in first.live_reads
    again = next_up(first)
    # cluster-autoscaler moved each ranged group (the read-back rule); the program sends that back
    for name, sc in sizes(again).items():
        assert (
            sc["desiredSize"]
            == cloud_after(first).node_groups["ml-eks"][own(name, again)]["scalingConfig"]["desiredSize"]
        )
    assert list(second_up(first, again)) == []
    # The same plan, compared as if the program sent its first-create size again, would shrink the groups.
    drifts = list(second_up(first, dataclasses.replace(first)))
    assert {d.rule.path for d in drifts} == {"scalingConfig.desiredSize"}, drifts


def own(logical: str, plan: Any) -> str:
    r = next(r for r in plan.by_type("eks:index:ManagedNodeGroup") if r.name == logical)
    prefix = r.inputs["nodeGroupNamePrefix"]
    return next(
        n for n in cloud_after(plan).node_groups["ml-eks"] if n.startswith(prefix) and len(n) == len(prefix) + SUFFIX
    )


def test_a_plan_that_cannot_be_rerun_trusts_its_live_reads() -> None:
    unpickled = pickle.loads(pickle.dumps(cached_plan("aws-managed")))
    assert unpickled.replan is None and unpickled.live_reads
    assert list(second_up(unpickled)) == []


def test_a_users_node_groups_are_rerun_from_their_program_folder() -> None:
    plan = testing.plan_program(ROOT / "examples" / "eks-your-cluster")
    assert plan.live_reads and plan.replan is not None
    groups = {r.name: r.inputs["scalingConfig"] for r in next_up(plan).by_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups and all(sc["minSize"] <= sc["desiredSize"] <= sc["maxSize"] for sc in groups.values())
    assert testing.check(plan) == []


def block_group(plan: Any) -> Any:
    return next(
        r for r in plan.by_type("eks:index:ManagedNodeGroup") if r.inputs.get("capacityType") == "CAPACITY_BLOCK"
    )


def test_a_busy_capacity_block_group_keeps_its_version_until_it_is_empty() -> None:
    """AWS updates a Capacity Block group only at desired size 0: while it has nodes, a Kubernetes bump leaves
    it on the version it runs; the first `up` after it is empty (EKS empties it before the block ends) rolls."""
    base = stack_with("aws-managed", gpuPools=[MANAGED_BLOCK])
    first = cached_plan(base)
    old = block_group(first).inputs["version"]
    bump = next(c for c in CATALOGUE if c.id == "bump-kubernetes").apply(dict(base.config))
    assert bump is not None
    bumped = StackFile(base.project, base.stack, bump)
    busy = cloud_after(first)  # cluster-autoscaler has a node up (read-back rule)
    (name,) = [n for n in busy.node_groups["ml-eks"] if "training" in n]
    assert busy.node_groups["ml-eks"][name]["scalingConfig"]["desiredSize"] > 0
    assert block_group(cached_plan(bumped, busy)).inputs["version"] == old
    groups = dict(busy.node_groups["ml-eks"])
    groups[name] = {**groups[name], "scalingConfig": {**groups[name]["scalingConfig"], "desiredSize": 0}}
    empty = Cloud({"ml-eks": groups})
    assert block_group(cached_plan(bumped, empty)).inputs["version"] != old
    # Other groups follow the cluster at once.
    system = next(r for r in cached_plan(bumped, busy).by_type("eks:index:ManagedNodeGroup") if "system" in r.name)
    assert system.inputs["version"] != old


def test_the_live_read_waits_for_the_components_depends_on() -> None:
    """A cluster named by a plain string: the read must come after the cluster exists (the component's
    `depends_on`), or ListNodegroups fails on a cluster not yet created."""
    import pulumi
    import pulumi_aws as aws
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    from gpuplane import EksGpuNodeGroups, GpuType
    from gpuplane.plan.mocks import PlanMocks
    from gpuplane.plan.runner import install

    mocks = PlanMocks()

    def program() -> None:
        role = aws.iam.Role("cluster-role", assume_role_policy="{}")
        cluster = aws.eks.Cluster("c", name="c", role_arn=role.arn, vpc_config={"subnet_ids": ["subnet-1"]})
        EksGpuNodeGroups(
            "gpu",
            {
                "cluster_name": "c",
                "node_role_arn": "arn:aws:iam::123456789012:role/n",
                "subnet_ids": ["subnet-1"],
                "gpu_pools": [{"name": "a10g", "gpu": GpuType.A10G, "max_nodes": 2}],
            },
            opts=pulumi.ResourceOptions(depends_on=[cluster]),
        )

    install(StackFile("p", "s", {"aws:region": "us-east-1"}), mocks)
    _sync_await(run_pulumi_func(program))
    order = mocks.timeline
    assert order.index(("register", "aws:eks/cluster:Cluster")) < order.index(
        ("invoke", "aws:eks/getNodeGroups:getNodeGroups")
    )


def test_a_busy_capacity_block_group_keeps_its_launch_template_version_of_the_same_template() -> None:
    base = stack_with("aws-managed", gpuPools=[MANAGED_BLOCK])
    first = cached_plan(base)
    live = cloud_after(first)
    (name,) = [n for n in live.node_groups["ml-eks"] if "training" in n]
    running = live.node_groups["ml-eks"][name]
    assert running["scalingConfig"]["desiredSize"] > 0
    older = {**running, "launchTemplate": {**running["launchTemplate"], "version": "0"}}
    other = {**running, "launchTemplate": {"id": "lt-0000000000000000a", "version": "0"}}

    def sent(state: dict[str, Any]) -> Any:
        cloud = Cloud({"ml-eks": {**live.node_groups["ml-eks"], name: state}})
        return block_group(cached_plan(base, cloud)).inputs["launchTemplate"]["version"]

    assert sent(older) == "0"  # busy on version 0 of this template: held
    assert sent(other) == running["launchTemplate"]["version"]  # another template: its own version
