"""The bad-input catalogue (tests/bad_configs.yaml): each broken stack fails with one ConfigError that
names exactly its bad keys, registers nothing but the stack, and together they cover every config key;
each bad command line (argument or named file) is one `error:` line and exit code 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.catalog import PLATFORMS
from gpuplane.config import ConfigError

from .badinput import model_keys, pattern_of, run_program, stack_of
from .conftest import ROOT
from .summary import record

CATALOGUE: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "bad_configs.yaml").read_text())
CONFIGS = [e for e in CATALOGUE if "cli" not in e]
COMMANDS = [e for e in CATALOGUE if "cli" in e]


def test_catalogue_is_large_and_ids_unique() -> None:
    ids = [e["id"] for e in CATALOGUE]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("entry", CONFIGS, ids=[e["id"] for e in CONFIGS])
def test_broken_stack_fails_with_one_error_naming_each_key(entry: dict[str, Any], tmp_path: Path) -> None:
    stack = stack_of(entry, ROOT, tmp_path)
    if isinstance(stack, ConfigError):  # the stack file itself could not be read
        problems, registered = stack.problems, []
    else:
        outcome = run_program(stack)
        assert outcome.problems is not None, f"{entry['id']} planned without an error"
        problems, registered = outcome.problems, outcome.registered
        assert registered == ["pulumi:pulumi:Stack"], "resources were registered before the config error"
    got = {("<file>" if str(tmp_path) in key else key): reason for key, reason in problems}
    assert len(got) == len(problems), f"a key is named twice: {problems}"
    assert set(got) == set(entry["errors"]), problems
    for key, fragment in entry["errors"].items():
        assert fragment in got[key], (key, got[key])
    assert "Traceback" not in str(problems)
    assert not [r for _, r in problems if "match pattern" in r or "^[" in r], "a regex leaked into a message"


def test_catalogue_names_every_config_key_and_every_mode() -> None:
    """Every key of the config model (lists as `[*]`) is named by some entry's error, directly or through
    one of its children; every platform (and a fleet of each cloud) is the base of some entry."""
    named = {pattern_of(k) for e in CONFIGS for k in e["errors"] if k.startswith("gpuplane:")}
    keys = model_keys()
    missing = [k for k in keys if not any(n == k or n.startswith(k + ".") or n.startswith(k + "[") for n in named)]
    assert not missing, f"no catalogue entry breaks: {missing}"
    bases = {e.get("base") for e in CONFIGS}
    platforms = {
        yaml.safe_load((ROOT / "stacks" / f"Pulumi.{b}.yaml").read_text())["config"]["gpuplane:platform"]
        for b in bases
        if b
    }
    assert platforms == set(PLATFORMS)
    assert {"gcp-fleet", "aws-fleet"} <= bases
    direct = sum(1 for k in keys if k in named)
    record(
        "bad-input catalogue",
        f"{len(CONFIGS)} broken stacks over {len(platforms)} platforms + 2 fleets; they name {len(named)} distinct "
        f"keys; all {len(keys)} config keys covered ({direct} named directly); {len(COMMANDS)} bad command lines",
    )


def command_of(entry: dict[str, Any], tmp: Path) -> tuple[list[str], Path, str]:
    """The entry's argv, working folder and expected error, with `<tmp>` and `<root>` filled in."""
    for name, text in entry.get("files", {}).items():
        (tmp / name).write_text(text, encoding=entry.get("encoding", "utf-8"))

    def fill(s: str) -> str:
        return s.replace("<tmp>", str(tmp)).replace("<root>", str(ROOT))

    cwd = tmp if entry.get("cwd") == "tmp" else ROOT
    return [fill(a) for a in entry["cli"]], cwd, fill(entry["error"])


@pytest.mark.parametrize("entry", COMMANDS, ids=[e["id"] for e in COMMANDS])
def test_bad_command_line_is_one_error_and_exit_2(
    entry: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplane.cli import main

    argv, cwd, error = command_of(entry, tmp_path)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # tmp is in no repository
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own argument errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    assert error in err, err
    assert err.count("error:") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("entry_id", ["cli-diff-not-json", "cli-stacks-outside-a-project"])
def test_bad_command_line_in_a_real_process(entry_id: str, tmp_path: Path) -> None:
    """The same through `python -m gpuplane.cli`: stderr holds the one error line and nothing else."""
    (entry,) = [e for e in COMMANDS if e["id"] == entry_id]
    argv, cwd, error = command_of(entry, tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "gpuplane.cli", *argv], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.strip() == error.strip() or (error in run.stderr and len(run.stderr.splitlines()) == 1)
