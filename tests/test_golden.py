"""Golden files for rendered artefacts: a diff shows what a change would do to a live cluster.

Regenerate with `GPUPLANE_UPDATE_GOLDEN=1 pytest tests/test_golden.py` and review the diff.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gpuplane.plan import Plan

from .conftest import FLEETS, GOLDEN, SINGLE, STACKS, golden, to_yaml
from .graph import RELEASE, kube_objects

NO_RELEASES = {"gcp-autopilot"}
"""Stacks that install no chart (Autopilot's GPU stack is GKE's own): their values goldens are none."""


def values_artefacts(stack: str, plan: Plan) -> dict[str, str]:
    """Each Helm release's values, with its chart, version and repository in a header. A fleet has one
    release of a chart per region, so its files are named by the release's resource name."""
    out = {}
    for release in plan.by_type(RELEASE):
        source = release.inputs.get("repositoryOpts", {}).get("repo", "its OCI registry")
        header = f"# {release.inputs['chart']} {release.inputs['version']} from {source}\n"
        name = release.name if stack in FLEETS else release.inputs["name"]
        out[f"{stack}/{name}-values.yaml"] = header + to_yaml(release.inputs["values"])
    return out


CLOUD_TYPES = (
    "gcp:container/cluster:Cluster",
    "gcp:container/nodePool:NodePool",
    "eks:index:Cluster",
    "eks:index:ManagedNodeGroup",
    "aws:ec2/launchTemplate:LaunchTemplate",
    "aws:iam/role:Role",
    "aws:iam/rolePolicy:RolePolicy",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "gcp:projects/iAMMember:IAMMember",
)
"""The cloud resources whose inputs are golden too: clusters, pools and node groups, launch templates, IAM."""


def cloud_resources(plan: Plan) -> str:
    """The inputs of CLOUD_TYPES, by resource name (a fleet's are per region: the names say which)."""
    found = {f"{r.type} {r.name}": r.inputs for r in plan.resources if r.type in CLOUD_TYPES}
    return to_yaml(dict(sorted(found.items())))


def artefacts(stack: str, plan: Plan) -> dict[str, str]:
    """Every golden file of a stack (besides `urns.txt`, test_upgrade_safety's): values, manifests, and a
    single-cluster stack's scrape config and rules (a fleet's are per region, in test_fleet.py)."""
    docs = [to_yaml(r.inputs) for r in kube_objects(plan)]
    out = {**values_artefacts(stack, plan), f"{stack}/manifests.yaml": "---\n".join(docs)}
    out[f"{stack}/cloud-resources.yaml"] = cloud_resources(plan)
    if stack not in FLEETS:
        out[f"{stack}/scrape-config.yaml"] = plan.outputs["scrapeConfig"]
        out[f"{stack}/prometheus-rules.yaml"] = plan.outputs["prometheusRules"]
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_helm_values(stack: str, plan_of: Callable[..., Plan]) -> None:
    found = values_artefacts(stack, plan_of(stack))
    assert bool(found) == (stack not in NO_RELEASES), sorted(found)
    for name, text in found.items():
        golden(name, text)


@pytest.mark.parametrize("stack", SINGLE)
def test_scrape_config(stack: str, plan_of: Callable[..., Plan]) -> None:
    golden(f"{stack}/scrape-config.yaml", plan_of(stack).outputs["scrapeConfig"])


@pytest.mark.parametrize("stack", STACKS)
def test_manifests(stack: str, plan_of: Callable[..., Plan]) -> None:
    name = f"{stack}/manifests.yaml"
    golden(name, artefacts(stack, plan_of(stack))[name])


@pytest.mark.parametrize("stack", STACKS)
def test_cloud_resources(stack: str, plan_of: Callable[..., Plan]) -> None:
    golden(f"{stack}/cloud-resources.yaml", cloud_resources(plan_of(stack)))


@pytest.mark.parametrize("stack", SINGLE)
def test_prometheus_rules(stack: str, plan_of: Callable[..., Plan]) -> None:
    golden(f"{stack}/prometheus-rules.yaml", plan_of(stack).outputs["prometheusRules"])


def test_every_golden_file_is_compared(plan_of: Callable[..., Plan]) -> None:
    """A golden file no test compares is a stale snapshot that looks like a check."""
    expected = {name for stack in STACKS for name in artefacts(stack, plan_of(stack))}
    expected |= {f"{stack}/urns.txt" for stack in STACKS}
    present = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*") if p.is_file()}
    assert present - expected == set(), "unused golden files: delete them"
    assert expected - present == set(), "missing golden files: run with GPUPLANE_UPDATE_GOLDEN=1 and review"


def test_a_golden_failure_shows_the_diff_and_asks_for_a_review() -> None:
    from .conftest import golden_diff

    message = golden_diff("s/values.yaml", "a: 1\nb: 2\n", "a: 1\nb: 3\n")
    assert "-b: 2\n+b: 3\n" in message and "review it as a change to the product" in message
    assert "GPUPLANE_UPDATE_GOLDEN" not in message
