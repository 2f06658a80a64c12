"""The bad-input catalogue (tests/bad_configs.yaml): each broken stack fails with one ConfigError that
names exactly its bad keys, registers nothing but the stack, and together they cover every config key."""

from __future__ import annotations

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


def test_catalogue_is_large_and_ids_unique() -> None:
    ids = [e["id"] for e in CATALOGUE]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("entry", CATALOGUE, ids=[e["id"] for e in CATALOGUE])
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


def test_catalogue_names_every_config_key_and_every_mode() -> None:
    """Every key of the config model (lists as `[*]`) is named by some entry's error, directly or through
    one of its children; every platform (and a fleet of each cloud) is the base of some entry."""
    named = {pattern_of(k) for e in CATALOGUE for k in e["errors"] if k.startswith("gpuplane:")}
    keys = model_keys()
    missing = [k for k in keys if not any(n == k or n.startswith(k + ".") or n.startswith(k + "[") for n in named)]
    assert not missing, f"no catalogue entry breaks: {missing}"
    bases = {e.get("base") for e in CATALOGUE}
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
        f"{len(CATALOGUE)} broken stacks over {len(platforms)} platforms + 2 fleets; they name "
        f"{len(named)} distinct keys; all {len(keys)} config keys covered ({direct} named directly)",
    )
