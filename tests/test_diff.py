"""Offline plan diff: a pool's max is a harmless change, its GPU count replaces it; ignoreChanges is honoured."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplane.cli import main as cli_main
from gpuplane.plan import Plan
from gpuplane.plan.diff import changed_paths, diff
from gpuplane.plan.replacement import Effect

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


def test_gpu_count_change_replaces_the_pool(plan_of: Callable[..., Plan]) -> None:
    """8 -> 4 A100s: the machine type changes in place (nodes recreated), the accelerator count is ForceNew."""
    d = diff(*plans(plan_of, gpusPerNode=4))
    (pool,) = [c for c in d.changed if c.urn.endswith("::ml-gke-training")]
    assert pool.findings["nodeConfig.machineType"].effect is Effect.DISRUPTS
    accel = [f for p, f in pool.findings.items() if p.startswith("nodeConfig.guestAccelerators")]
    assert accel and all(f.effect is Effect.REPLACES for f in accel)
    assert "node_config.guest_accelerator` ForceNew" in accel[0].source
    assert pool.replaces and d.disruptive


def test_disk_size_change_disrupts_nodes_without_replacing(plan_of: Callable[..., Plan]) -> None:
    d = diff(*plans(plan_of, diskSizeGb=600))
    (pool,) = [c for c in d.changed if c.urn.endswith("::ml-gke-training")]
    assert pool.paths == ["nodeConfig.diskSizeGb"] and not pool.replaces
    assert pool.disruptive["nodeConfig.diskSizeGb"].startswith("disrupts nodes: ")


def test_ignore_changes_never_count(plan_of: Callable[..., Plan]) -> None:
    """A path the resource lists in ignoreChanges is not a change (the engine keeps the old value)."""
    base, head = plans(plan_of, gpusPerNode=4)
    for r in head["resources"]:  # type: ignore[attr-defined]
        if r["urn"].endswith("::ml-gke-training"):
            r["ignoreChanges"] = ["nodeConfig.guestAccelerators"]
    d = diff(base, head)
    (pool,) = [c for c in d.changed if c.urn.endswith("::ml-gke-training")]
    assert not pool.replaces and "nodeConfig.machineType" in pool.paths
    assert pool.ignored and all(p.startswith("nodeConfig.guestAccelerators") for p in pool.ignored)
    assert not any(p.startswith("nodeConfig.guestAccelerators") for p in pool.paths)


def test_removed_pool_is_disruptive(plan_of: Callable[..., Plan]) -> None:
    base = plan_of(stack_with("gcp-standard")).to_json()
    head = plan_of(stack_with("gcp-standard", gpuPools=pools_with()[:1])).to_json()
    d = diff(base, head)
    assert any(u.endswith("::ml-gke-training") for u in d.removed) and d.disruptive


def test_changed_paths() -> None:
    assert list(changed_paths({"a": {"b": 1, "c": [1, 2]}}, {"a": {"b": 2, "c": [1, 3]}})) == ["a.b", "a.c[1]"]
    assert list(changed_paths({"a": 1}, {"a": 1, "b": 2})) == ["b"]


def test_cli_diff_files_and_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plan_of: Callable[..., Plan]
) -> None:
    base, head = plans(plan_of, gpusPerNode=4)
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    assert cli_main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json")]) == 0
    out = capsys.readouterr().out
    assert "[REPLACED]" in out and "DISRUPTIVE: disrupts nodes: " in out and "DISRUPTIVE: replaces: " in out
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
    doc = json.loads(capsys.readouterr().out)
    assert doc["disruptive"] is True
    (pool,) = [c for c in doc["changed"] if c["urn"].endswith("::ml-gke-training")]
    assert pool["replaces"] is True and pool["effects"]["nodeConfig.machineType"] == "disrupts nodes"


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


def test_changes_show_old_and_new_values(plan_of: Callable[..., Plan]) -> None:
    from gpuplane.plan.diff import to_text

    base, head = plans(plan_of, maxNodes=5)
    d = diff(base, head)
    (pool,) = [c for c in d.changed if c.urn.endswith("::ml-gke-training")]
    (path,) = [p for p in pool.paths if p.endswith("MaxNodeCount")]
    old, new = pool.values[path]
    assert new == 5 and old != new
    assert f"    {path}: {old} → 5" in to_text(d).splitlines()
    assert d.to_json()["changed"][0]["values"][path] == {"old": old, "new": 5}


def test_match_names_compares_two_stacks(plan_of: Callable[..., Plan]) -> None:
    """URNs carry the stack name; `--match-names` pairs resources by type and name instead."""
    base = plan_of(stack_with("gcp-standard")).to_json()
    renamed = json.loads(json.dumps(base).replace("urn:pulumi:gcp-standard-test::", "urn:pulumi:gcp-standard-v2::"))
    n = len(base["resources"])  # type: ignore[arg-type]
    plain = diff(base, renamed)
    assert (len(plain.added), len(plain.removed)) == (n, n)
    matched = diff(base, renamed, match_names=True)
    assert (matched.added, matched.removed, matched.changed) == ([], [], [])


def test_git_diff_of_a_stack_new_since_rev_is_all_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "Pulumi.yaml"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "project without stacks"], cwd=tmp_path, check=True)
    shutil.copy(ROOT / "stacks" / "Pulumi.gcp-autopilot.yaml", tmp_path / "stacks" / "Pulumi.new.yaml")
    monkeypatch.chdir(tmp_path)
    assert cli_main(["diff", "--git", "HEAD", "new", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["removed"] == doc["changed"] == [] and len(doc["added"]) >= 5
    assert all(urn.startswith("urn:pulumi:new::gpuplane::") for urn in doc["added"])
