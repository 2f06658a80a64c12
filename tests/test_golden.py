"""Golden files for rendered artefacts: a diff shows what a change would do to a live cluster.

Regenerate with `GPUPLANE_UPDATE_GOLDEN=1 pytest tests/test_golden.py` and review the diff.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gpuplane.plan import Plan

from .conftest import SINGLE as STACKS
from .conftest import golden, to_yaml
from .graph import RELEASE, kube_objects


@pytest.mark.parametrize("stack", STACKS)
def test_helm_values(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    for release in plan.by_type(RELEASE):
        source = release.inputs.get("repositoryOpts", {}).get("repo", "its OCI registry")
        header = f"# {release.inputs['chart']} {release.inputs['version']} from {source}\n"
        golden(f"{stack}/{release.inputs['name']}-values.yaml", header + to_yaml(release.inputs["values"]))


@pytest.mark.parametrize("stack", STACKS)
def test_scrape_config(stack: str, plan_of: Callable[..., Plan]) -> None:
    golden(f"{stack}/scrape-config.yaml", plan_of(stack).outputs["scrapeConfig"])


@pytest.mark.parametrize("stack", STACKS)
def test_manifests(stack: str, plan_of: Callable[..., Plan]) -> None:
    docs = [to_yaml(r.inputs) for r in kube_objects(plan_of(stack))]
    golden(f"{stack}/manifests.yaml", "---\n".join(docs))


@pytest.mark.parametrize("stack", STACKS)
def test_prometheus_rules(stack: str, plan_of: Callable[..., Plan]) -> None:
    golden(f"{stack}/prometheus-rules.yaml", plan_of(stack).outputs["prometheusRules"])
