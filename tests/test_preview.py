"""`pulumi preview` of a first deployment, offline (`PreviewMocks`): what providers compute is unknown.
Every shipped stack and example program registers the same resources as in the full plan, so no resource
waits on a computed value to exist (none is made inside `apply`), and the unknowns really are unknown."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.plan import load, plan_stack
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.mocks_preview import PreviewMocks
from gpuplane.plan.project import stack_references
from gpuplane.plan.runner import install

from .conftest import ROOT, cached_plan
from .test_examples import EXAMPLES

DECLARES_ITS_CLUSTER = {"gke-your-cluster", "eks-your-cluster"}
STACKS = sorted(p.name.split(".")[1] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


def unknown_inputs(resources: list[Any]) -> int:
    return sum(1 for r in resources for v in r.inputs.values() if v == "[unknown]")


@pytest.mark.parametrize("stack", STACKS)
def test_a_stacks_preview_registers_what_its_plan_does(stack: str) -> None:
    file = load(str(ROOT / "stacks" / f"Pulumi.{stack}.yaml"))
    full = cached_plan(file)  # the session's plan of the shipped stack (`plan_stack` under fresh PlanMocks)
    preview = plan_stack(file, PreviewMocks())
    assert [r.urn for r in preview.resources] == [r.urn for r in full.resources]
    assert unknown_inputs(preview.resources) > 0 and unknown_inputs(full.resources) == 0


@pytest.mark.parametrize("example", EXAMPLES)
def test_an_examples_preview_registers_what_its_plan_does(example: str) -> None:
    folder = ROOT / "examples" / example
    file = load(str(folder / "Pulumi.example.yaml"))
    project = str(yaml.safe_load((folder / "Pulumi.yaml").read_text())["name"])

    def urns(mocks: PlanMocks) -> tuple[list[str], int]:
        monitor = install(type(file)(project=project, stack="example", config=file.config), mocks)
        _sync_await(run_pulumi_func(lambda: runpy.run_path(str(Path(folder) / "__main__.py"), run_name="__main__")))
        return sorted(r.urn for r in monitor.registrations), unknown_inputs(monitor.registrations)

    (full, none), (preview, some) = urns(PlanMocks(stack_references(file))), urns(PreviewMocks(stack_references(file)))
    assert preview == full and none == 0
    # A program that declares its cluster waits on what the cloud computes; one on another stack's cluster
    # (stack references, config) knows everything at preview.
    assert (some > 0) == (example in DECLARES_ITS_CLUSTER)


def test_a_resource_made_inside_apply_is_missing_from_the_preview() -> None:
    """The model catches what it is for: a program that creates a resource once an ID is known."""
    import pulumi_gcp as gcp
    import pulumi_kubernetes as k8s

    def program() -> None:
        cluster = gcp.container.Cluster("c", location="us-central1", initial_node_count=1, project="p-123456")
        cluster.id.apply(lambda _: k8s.core.v1.Namespace("late"))

    def urns(mocks: PlanMocks) -> set[str]:
        file = load(str(ROOT / "stacks" / "Pulumi.gcp-standard.yaml"))
        monitor = install(type(file)(project="p", stack="s", config={}), mocks)
        _sync_await(run_pulumi_func(program))
        return {r.urn.rsplit("::", 1)[-1] for r in monitor.registrations}

    assert "late" in urns(PlanMocks()) and "late" not in urns(PreviewMocks())


def test_unknown_inputs_never_crash_the_preview_and_stay_unknown() -> None:
    """Inputs that are another resource's computed outputs: new subnets, a cluster's ID (a node pool's
    location then comes from the ID at create, so the preview does not ask for a zone)."""
    import pulumi
    import pulumi_aws as aws
    import pulumi_eks as eks
    import pulumi_gcp as gcp
    import pulumi_kubernetes as k8s

    def program() -> None:
        cluster = gcp.container.Cluster("c", location="us-central1", initial_node_count=1, project="p-123456")
        gcp.container.NodePool("pool", cluster=cluster.id, node_count=1)
        provider = k8s.Provider("k", kubeconfig="{}")
        ns = k8s.core.v1.Namespace("team", opts=pulumi.ResourceOptions(provider=provider))
        k8s.core.v1.ConfigMap(
            "settings", metadata={"namespace": ns.metadata.name}, opts=pulumi.ResourceOptions(provider=provider)
        )
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        subnets = [aws.ec2.Subnet(f"s{i}", vpc_id=vpc.id, cidr_block=f"10.0.{i}.0/24") for i in range(2)]
        eks.Cluster("ml", vpc_id=vpc.id, private_subnet_ids=[s.id for s in subnets], skip_default_node_group=True)
        aws.iam.Role("role", assume_role_policy="{}")

    file = load(str(ROOT / "stacks" / "Pulumi.gcp-standard.yaml"))
    monitor = install(type(file)(project="p", stack="s", config={"aws:region": "us-east-1"}), PreviewMocks())
    _sync_await(run_pulumi_func(program))
    by_name = {r.name: r for r in monitor.registrations}
    assert by_name["pool"].inputs["cluster"] == "[unknown]"
    assert by_name["settings"].inputs["metadata"]["namespace"].startswith("team-")  # named at check: known
    assert "[unknown]" in str(by_name["ml"].inputs["privateSubnetIds"])
    # Names made at check time are known in a preview: the bridge's autoname, a Kubernetes object's.
    role = monitor.resources[by_name["role"].urn].state
    assert role["name"].startswith("role-")
    assert monitor.resources[by_name["team"].urn].state["metadata"]["name"].startswith("team-")
