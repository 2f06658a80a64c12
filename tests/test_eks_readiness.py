"""EKS cluster-scoped resources wait for their cluster, and managed node groups follow its version.

The engine creates a resource only after everything in its `dependsOn` (explicit and through Output
inputs) exists, and depending on a component means depending on all of its children. A cluster name
given as a config string creates no dependency: the add-on, access entry or Pod Identity association
would be sent to EKS before the cluster exists.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gpuplane.plan import Plan, PlannedResource
from gpuplane.plan.deploy.graph import DeployGraph

from .conftest import load_stack_config, stack_with

EKS_CLUSTER = "eks:index:Cluster"
MNG = "eks:index:ManagedNodeGroup"
CLUSTER_SCOPED = (
    "aws:eks/addon:Addon",
    "aws:eks/accessEntry:AccessEntry",
    "aws:eks/podIdentityAssociation:PodIdentityAssociation",
    "aws:eks/nodeGroup:NodeGroup",
    MNG,
)
"""AWS resources that live inside an EKS cluster: EKS rejects them until the cluster exists."""
AWS_STACKS = ("aws-managed", "aws-karpenter", "aws-automode", "aws-fleet")


def transitive_dependencies(plan: Plan, resource: PlannedResource) -> frozenset[str]:
    """Every URN the engine must create before `resource` (the deploy simulator's dependency closure:
    a dependency on a component stands for all of its descendants)."""
    return DeployGraph(plan).ancestors(resource.urn)


def cluster_of(plan: Plan, resource: PlannedResource) -> PlannedResource:
    """The planned EKS cluster a cluster-scoped resource names (by `clusterName` or `cluster`)."""
    clusters = plan.by_type(EKS_CLUSTER)
    if resource.type == MNG:
        (found,) = [c for c in clusters if c.urn == resource.inputs["cluster"]]
    else:
        (found,) = [c for c in clusters if c.inputs["name"] == resource.inputs["clusterName"]]
    return found


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_cluster_scoped_resources_wait_for_their_cluster(plan_of: Callable[..., Plan], stack: str) -> None:
    plan = plan_of(stack)
    scoped = [r for r in plan.resources if r.type in CLUSTER_SCOPED]
    late = [r.urn for r in scoped if cluster_of(plan, r).urn not in transitive_dependencies(plan, r)]
    assert not late, f"created without waiting for their EKS cluster: {late}"


def test_karpenter_cluster_resources_are_checked(plan_of: Callable[..., Plan]) -> None:
    """The check above covers Karpenter's add-on, node access entry and Pod Identity association."""
    plan = plan_of("aws-karpenter")
    found = {r.type for r in plan.resources if r.type in CLUSTER_SCOPED}
    assert set(CLUSTER_SCOPED) - {"aws:eks/nodeGroup:NodeGroup"} <= found


def test_a_config_string_is_no_dependency(plan_of: Callable[..., Plan]) -> None:
    """The helper itself: a resource whose only link to the cluster is its name string fails the check."""
    plan = plan_of("aws-karpenter")
    (entry,) = plan.by_type("aws:eks/accessEntry:AccessEntry")
    cluster = cluster_of(plan, entry)
    plan.resources.append(
        PlannedResource(urn="urn:x", type=entry.type, name="x", parent=None, custom=True, inputs=dict(entry.inputs))
    )
    assert cluster.urn not in transitive_dependencies(plan, plan.resources[-1])


@pytest.mark.parametrize("stack", ["aws-managed", "aws-karpenter"])
def test_managed_node_groups_follow_the_cluster_version(plan_of: Callable[..., Plan], stack: str) -> None:
    """pulumi-eks leaves `version` unset when a launch template is given (pulumi/pulumi-eks
    nodejs/eks/nodes/nodegroup.ts), so a `kubernetesVersion` bump would upgrade only the control plane.
    Every system and GPU group must carry the bumped version, taken from the cluster."""
    cluster = load_stack_config(stack)["gpuplane:cluster"]
    bumped = stack_with(stack, cluster={**cluster, "kubernetesVersion": "1.36"})
    plan = plan_of(bumped)
    groups = plan.by_type(MNG)
    assert groups
    assert {g.name: g.inputs.get("version") for g in groups} == {g.name: "1.36" for g in groups}
    for g in groups:
        assert cluster_of(plan, g).urn in transitive_dependencies(plan, g)
