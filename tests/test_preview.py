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

from .conftest import ROOT
from .test_examples import EXAMPLES

DECLARES_ITS_CLUSTER = {"gke-your-cluster", "eks-your-cluster"}
STACKS = sorted(p.name.split(".")[1] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


def unknown_inputs(resources: list[Any]) -> int:
    return sum(1 for r in resources for v in r.inputs.values() if v == "[unknown]")


@pytest.mark.parametrize("stack", STACKS)
def test_a_stacks_preview_registers_what_its_plan_does(stack: str) -> None:
    file = load(str(ROOT / "stacks" / f"Pulumi.{stack}.yaml"))
    full = plan_stack(file)
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
