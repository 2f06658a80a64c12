"""Every shipped stack plans cleanly; the CLI's formats follow the JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest
import yaml

from gpuplane.cli import main as cli_main
from gpuplane.plan import Plan, load, plan_stack

from .conftest import ROOT, STACKS


def test_there_are_stacks() -> None:
    assert "gcp-standard" in STACKS


@pytest.mark.parametrize("stack", STACKS)
def test_stack_plans_cleanly(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    urns = [r.urn for r in plan.resources]
    assert len(urns) == len(set(urns)), "duplicate URNs"
    for r in plan.resources:
        assert r.parent is None or r.parent in urns, f"{r.urn}: parent {r.parent} was never registered"
    assert plan.outputs["scrapeConfig"] and plan.outputs["capacity"]["rows"]
    assert plan.outputs.get("kubeconfig", plan.outputs.get("kubeconfigs")) == "[secret]"


def test_plan_is_deterministic() -> None:
    """Two runs under fresh mocks (not the session's cached plan, which would compare a plan with itself)."""
    first, second = (plan_stack(load("gcp-standard", ROOT)) for _ in range(2))
    assert first.to_json() == second.to_json() and first.resources


def test_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    """In-process (`python -m gpuplane.cli` itself is run by test_clean_exit.py and test_bad_input.py)."""
    assert cli_main(["plan", "gcp-standard", "--format", "json"]) == 0
    stdout = capsys.readouterr().out
    doc = json.loads(stdout)
    assert set(doc) == {"project", "stack", "resources", "outputs"}
    assert (doc["project"], doc["stack"]) == ("gpuplane", "gcp-standard")
    optional = {"ignoreChanges", "replaceOnChanges", "deleteBeforeReplace", "protect", "retainOnDelete", "aliases"}
    for r in doc["resources"]:
        assert set(r) - optional == {"urn", "type", "name", "parent", "custom", "inputs", "dependsOn", "provider"}
        assert isinstance(r["dependsOn"], list) and r["dependsOn"] == sorted(r["dependsOn"])
        assert r["provider"] is None or r["provider"].startswith("urn:pulumi:gcp-standard::gpuplane::")
        assert r["urn"].startswith("urn:pulumi:gcp-standard::gpuplane::") and r["urn"].endswith("::" + r["name"])
    types = {r["type"] for r in doc["resources"]}
    assert {"gcp:container/nodePool:NodePool", "kubernetes:helm.sh/v3:Release", "pulumi:pulumi:Stack"} <= types
    assert doc["outputs"]["kubeconfig"] == "[secret]"
    assert "BEGIN CERTIFICATE" not in stdout  # the kubeconfig's CA travels only inside the secret


def test_tree_and_dot_formats(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["plan", "gcp-standard"]) == 0
    tree = capsys.readouterr().out
    assert tree.splitlines()[0] == "gpuplane-gcp-standard  (pulumi:pulumi:Stack)"
    assert "ml-gke-inference  (gcp:container/nodePool:NodePool)" in tree and "Outputs:" in tree
    assert cli_main(["plan", "gcp-standard", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph plan {") and dot.rstrip().endswith("}")
    resources = tree.split("\n\n")[0].splitlines()
    parent_edges = [line for line in dot.splitlines() if "->" in line and "dashed" not in line]
    assert len(parent_edges) == len(resources) - 1  # one parent edge per resource but the root
    assert any("dashed" in line for line in dot.splitlines())  # dependency edges (see test_deploy)


def test_scrape_config_command_prints_the_stack_output(
    capsys: pytest.CaptureFixture[str], plan_of: Callable[..., Plan]
) -> None:
    expected = plan_of("gcp-standard").outputs["scrapeConfig"]
    assert cli_main(["scrape-config", "gcp-standard"]) == 0
    printed = capsys.readouterr().out
    assert yaml.safe_load(printed) == yaml.safe_load(expected)


def test_stack_by_path_and_unknown_stack(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["plan", str(ROOT / "stacks" / "Pulumi.gcp-standard.yaml"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["stack"] == "gcp-standard"
    assert cli_main(["plan", "nope"]) == 2
    err = capsys.readouterr().err
    assert f"unknown stack 'nope' (known: {', '.join(STACKS)})" in err


def test_plan_preview_shows_computed_values_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["plan", "gcp-standard", "--preview", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pools = [r for r in doc["resources"] if r["type"] == "gcp:container/nodePool:NodePool"]
    assert pools and all(p["inputs"]["cluster"] == "[unknown]" for p in pools)  # the cluster's ID, computed
    assert cli_main(["plan", "--program", str(ROOT / "examples" / "gke-your-cluster"), "--preview"]) == 0


@pytest.mark.parametrize("stack", ["gcp-standard", "aws-karpenter"])
def test_the_program_pulumi_up_runs_is_the_one_gpuplane_plan_runs(stack: str) -> None:
    """`pulumi up` runs the project's root `__main__.py`: under the mocks it registers what `gpuplane plan`
    plans (which calls `gpuplane.stack.program.main` directly)."""
    import runpy

    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    from gpuplane.plan import load, plan_stack
    from gpuplane.plan.runner import install

    file = load(stack)
    planned = [r.urn for r in plan_stack(file).resources]
    monitor = install(file)
    _sync_await(run_pulumi_func(lambda: runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")))
    assert sorted(r.urn for r in monitor.registrations) == sorted(planned)


def test_gpus_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["gpus"]) == 0
    out = capsys.readouterr().out
    assert "nvidia-l4" in out and "p4d" in out


@pytest.mark.parametrize(
    ("stack", "not_imported"),
    [("gcp-standard", ["pulumi_aws", "pulumi_eks"]), ("aws-managed", ["pulumi_gcp"])],
)
def test_stack_imports_only_its_cloud_sdks(stack: str, not_imported: list[str]) -> None:
    code = (
        f"import sys; from gpuplane.plan import load, plan_stack; plan_stack(load({stack!r}));"
        f"print([m for m in {not_imported!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


LIBRARY_SNIPPETS = {
    "eks-cluster-object": (
        {"aws:region": "us-west-2"},
        {"gpuplane:aws:EksGpuNodeGroups", "aws:eks/nodeGroup:NodeGroup", "pulumi:providers:kubernetes"},
    ),
    "gke-outputs": (
        {},
        {"gpuplane:gcp:GkeGpuNodePools", "gcp:container/nodePool:NodePool", "kubernetes:helm.sh/v3:Release"},
    ),
}


@pytest.mark.parametrize("snippet", range(len(LIBRARY_SNIPPETS)), ids=list(LIBRARY_SNIPPETS))
def test_library_python_examples_run_under_mocks_and_deploy(snippet: int) -> None:
    """docs/library.md's "use the components" snippets are real programs: run each under the plan's mocks,
    and the deploy simulator finds nothing a first `pulumi up` would trip on."""
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    from gpuplane.plan.deploy import check
    from gpuplane.plan.mocks import PlanMocks
    from gpuplane.plan.runner import install, recorded
    from gpuplane.plan.stackfile import StackFile

    doc = (ROOT / "docs" / "library.md").read_text()
    section = doc.split("# Use the components in your own program")[1].split("\n## ")[0]
    code = section.split("```python")[1 + snippet].split("```")[0]
    config, types = list(LIBRARY_SNIPPETS.values())[snippet]
    stack = StackFile(project="gpuplane", stack="readme", config=config)
    monitor = install(stack, PlanMocks())
    _sync_await(run_pulumi_func(lambda: exec(code, {"__name__": "readme"})))
    plan = recorded(stack, monitor)
    assert types <= {r.type for r in plan.resources}
    assert check(plan) == [], [str(v) for v in check(plan)]


def test_every_subpackage_is_packaged() -> None:
    """`pip install .` (not only -e) must ship every subpackage of gpuplane (components/gpuplane/)."""
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = meta["tool"]["setuptools"]["packages"]["find"]["include"]
    from setuptools import find_packages

    src = ROOT / meta["tool"]["setuptools"]["packages"]["find"]["where"][0]
    found = set(find_packages(where=str(src), include=include))
    on_disk = {".".join(p.relative_to(src).parts[:-1]) for p in src.rglob("__init__.py")}
    assert all(name.split(".")[0] == "gpuplane" for name in found), found
    assert on_disk and on_disk <= found, on_disk - found


@pytest.mark.parametrize("stack", ["gcp-standard", "aws-karpenter"])
def test_docs_pictures_are_generated_from_the_plan(stack: str, plan_of: Callable[..., Plan]) -> None:
    from gpuplane.plan.render import to_mermaid

    readme = (ROOT / "docs" / "offline-plan.md").read_text()
    block = readme.split(f"<!-- picture:{stack}:start -->")[1].split(f"<!-- picture:{stack}:end -->")[0]
    assert block.strip() == f"```mermaid\n{to_mermaid(plan_of(stack))}\n```", "run scripts/render_pictures.py"
    assert (ROOT / "docs" / "pictures" / f"{stack}.mmd").read_text().strip() == to_mermaid(plan_of(stack))


def test_workflows_run_the_tests_and_diff_every_stack() -> None:
    wf = ROOT / ".github" / "workflows"
    ci = yaml.safe_load((wf / "ci.yml").read_text())
    assert any(step.get("run") == "./.ci/run" for step in ci["jobs"]["test"]["steps"])
    diff = (wf / "plan-diff.yml").read_text()
    assert "gpuplane stacks" in diff and "gpuplane diff --git" in diff and "PULUMI_ACCESS_TOKEN" not in diff
    preview = yaml.safe_load((wf / "preview.yml").read_text())
    job = preview["jobs"]["preview"]
    assert sorted(job["strategy"]["matrix"]["stack"]) == STACKS
    assert any(str(s.get("uses", "")).startswith("pulumi/actions@") for s in job["steps"])
