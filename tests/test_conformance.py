"""`gpuplane conformance`: every CNCF Kubernetes AI Conformance v1.36 requirement for every shipped stack, with
the resources of the plan that meet it; the checklist held against the published one when it is present."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import yaml

from gpuplane.catalog.conformance import CHECKLIST
from gpuplane.cli import main as cli_main
from gpuplane.config import parse_flat
from gpuplane.health.conformance import report
from gpuplane.plan import Plan, load

from .conftest import ROOT, STACKS, need_reference, stack_with

MUST = {
    "ai_inference",
    "gang_scheduling",
    "cluster_autoscaling",
    "pod_autoscaling",
    "accelerator_metrics",
    "ai_service_metrics",
    "secure_accelerator_access",
    "robust_controller",
}
"""The v1.36 MUST requirements (cncf/k8s-ai-conformance docs/AIConformance-1.36.yaml), written out here."""


def test_the_checklist_is_the_published_one() -> None:
    doc = yaml.safe_load((need_reference() / "docs" / "AIConformance-1.36.yaml").read_text())
    published = [(section, item["id"], item["level"]) for section, items in doc["spec"].items() for item in items]
    assert [(r.section, r.id, r.level) for r in CHECKLIST] == published
    assert doc["metadata"]["kubernetesVersion"] == "v1.36"


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_answers_every_requirement(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    rows = report(parse_flat(load(stack, ROOT).flat_config()), plan.resources)
    assert {r["id"] for r in rows if r["level"] == "MUST"} == MUST
    urns = {f"{r.type} {r.name}" for r in plan.resources}
    for row in rows:
        assert row["status"] in ("met", "manual", "not met") and row["how"], row
        assert set(row["evidence"]) <= urns  # evidence is the plan's own resources
        assert row["status"] != "met" or row["evidence"], row


def test_what_the_plan_provides_is_met(plan_of: Callable[..., Plan]) -> None:
    """Kueue meets gang scheduling; without queues it is not met and the report says what would meet it."""
    rows = {r["id"]: r for r in report(parse_flat(load("gcp-dws", ROOT).flat_config()), plan_of("gcp-dws").resources)}
    assert rows["gang_scheduling"]["status"] == "met" and any("kueue" in e for e in rows["gang_scheduling"]["evidence"])
    plain = stack_with("gcp-dws", queues=None)
    rows = {r["id"]: r for r in report(parse_flat(plain.flat_config()), plan_of(plain).resources)}
    assert rows["gang_scheduling"]["status"] == "not met" and "gpuplane:queues" in rows["gang_scheduling"]["how"]


def test_conformance_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["conformance", "aws-multinode", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["checklist"] == "v1.36" and len(doc["requirements"]) == len(CHECKLIST)
    rows = {r["id"]: r for r in doc["requirements"]}
    assert rows["high_performance_networking"]["status"] == "met"  # EFA on the training pool
    assert rows["driver_runtime_management"]["status"] == "met"  # gpuplane:validation's Jobs
    assert cli_main(["conformance", "aws-multinode"]) == 0
    assert "| `gang_scheduling` | MUST |" in capsys.readouterr().out


def test_readme_table_is_generated_from_the_command() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("conformance_table", ROOT / "scripts" / "conformance_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "README.md").read_text()
    assert text.split(module.START, 1)[1].split(module.END, 1)[0] == module.table(), (
        "regenerate: python scripts/conformance_table.py"
    )
