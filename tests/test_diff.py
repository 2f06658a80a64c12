"""Offline plan diff: a pool's max is a harmless change, its machine type is disruptive."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from components.cli import main as cli_main
from components.plan import Plan
from components.plan.diff import DISRUPTIVE, changed_paths, diff

from .conftest import ROOT, load_stack_config, stack_with


def pools_with(**changes: object) -> list[dict[str, object]]:
    pools = [dict(p) for p in load_stack_config("gcp-standard")["gpuplane:gpuPools"]]
    pools[1].update(changes)  # the A100 training pool
    return pools


def plans(plan_of: Callable[..., Plan], **changes: object) -> tuple[dict[str, object], dict[str, object]]:
    base = plan_of(stack_with("gcp-standard")).to_json()
    head = plan_of(stack_with("gcp-standard", gpuPools=pools_with(**changes))).to_json()
    return base, head


def test_pool_max_change_is_not_disruptive(plan_of: Callable[..., Plan]) -> None:
    d = diff(*plans(plan_of, maxNodes=4))
    assert not d.added and not d.removed and not d.disruptive
    changed = {c.urn.rsplit("::", 1)[1]: c.paths for c in d.changed}
    assert changed["ml-gke-training"] == ["autoscaling.totalMaxNodeCount"]


def test_machine_type_change_is_disruptive(plan_of: Callable[..., Plan]) -> None:
    d = diff(*plans(plan_of, gpusPerNode=4))
    (pool,) = [c for c in d.changed if c.urn.endswith("::ml-gke-training")]
    assert "nodeConfig.machineType" in pool.disruptive and d.disruptive
    assert pool.disruptive["nodeConfig.machineType"] == "recreates every node"


def test_removed_pool_is_disruptive(plan_of: Callable[..., Plan]) -> None:
    base = plan_of(stack_with("gcp-standard")).to_json()
    head = plan_of(stack_with("gcp-standard", gpuPools=pools_with()[:1])).to_json()
    d = diff(base, head)
    assert any(u.endswith("::ml-gke-training") for u in d.removed) and d.disruptive


def test_changed_paths() -> None:
    assert list(changed_paths({"a": {"b": 1, "c": [1, 2]}}, {"a": {"b": 2, "c": [1, 3]}})) == ["a.b", "a.c[1]"]
    assert list(changed_paths({"a": 1}, {"a": 1, "b": 2})) == ["b"]


def input_paths(v: object, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(v, dict):
        for k, x in v.items():
            p = f"{prefix}.{k}" if prefix else k
            out |= {p, *input_paths(x, p)}
    return out


def test_disruptive_table_names_real_inputs(plan_of: Callable[..., Plan]) -> None:
    """Every table entry is an input path that gpuplane really sets (no dead entries)."""
    from .conftest import STACKS

    gcp = {**load_stack_config("gcp-standard")["gpuplane:gcp"], "network": "ml-vpc", "subnetwork": "ml-subnet"}
    plans = [plan_of(s) for s in STACKS] + [plan_of(stack_with("gcp-standard", gcp=gcp))]
    seen: dict[str, set[str]] = {}
    for plan in plans:
        for r in plan.resources:
            if r.type in DISRUPTIVE:
                seen.setdefault(r.type, set()).update(input_paths(r.inputs))
    for typ, entries in DISRUPTIVE.items():
        missing = [e for e in entries if e not in seen.get(typ, set())]
        assert not missing, (typ, missing)


def test_cli_diff_files_and_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plan_of: Callable[..., Plan]
) -> None:
    base, head = plans(plan_of, gpusPerNode=4)
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    assert cli_main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json")]) == 0
    assert "DISRUPTIVE: recreates every node" in capsys.readouterr().out
    assert (
        cli_main(
            [
                "diff",
                str(tmp_path / "base.json"),
                str(tmp_path / "head.json"),
                "--fail-on-disruptive",
                "--format",
                "json",
            ]
        )
        == 3
    )
    assert json.loads(capsys.readouterr().out)["disruptive"] is True


def test_cli_diff_against_git_head(capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "stacks", "components"], capture_output=True, text=True
    ).stdout
    assert cli_main(["diff", "--git", "HEAD", "aws-managed"]) == 0
    out = capsys.readouterr().out
    if not dirty:
        assert out.strip().endswith("0 to add, 0 to change, 0 to remove; nothing disruptive")
