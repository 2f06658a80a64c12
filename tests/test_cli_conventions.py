"""One command-line convention: `--format` picks the output (camelCase keys in every JSON), `-o/--output`
writes it to a file on every command, `--version`; `capacity --json` stays as a hidden alias."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.cli import main, parser

from .conftest import STACKS

CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")


def subcommands(of: argparse.ArgumentParser | None = None, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every command that runs, by its words (`fleet plan`): a group's own subcommands in its place."""
    (sub,) = [a for a in (of or parser())._actions if isinstance(a, argparse._SubParsersAction)]
    out: dict[str, argparse.ArgumentParser] = {}
    for name, p in sub.choices.items():
        nested = any(isinstance(a, argparse._SubParsersAction) for a in p._actions)
        out.update(subcommands(p, f"{prefix}{name} ") if nested else {f"{prefix}{name}": p})
    return out


def keys(doc: Any) -> set[str]:
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in keys(v)}
    return set()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_every_command_writes_to_output_and_picks_formats_with_format() -> None:
    for name, sub in subcommands().items():
        options = {o for a in sub._actions for o in a.option_strings}
        assert {"-o", "--output"} <= options, name
        assert not {o for o in options if o.startswith("--") and o[2:] in ("json", "yaml", "text")} - {"--json"}, name
    assert "--format" in {o for a in subcommands()["capacity"]._actions for o in a.option_strings}
    assert "--json" not in subcommands()["capacity"].format_help(), "the deprecated alias is hidden"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and re.fullmatch(r"gpuplane \S+.*\n", capsys.readouterr().out)


def test_capacity_json_is_camel_case_and_json_is_an_alias(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(run(capsys, "capacity", "aws-fleet", "--format", "json"))
    assert doc["rows"] and "gpusAtMax" in doc["totals"] and "usdPerHourAtMax" in doc["rows"][0]
    assert [k for k in keys(doc) if not CAMEL.match(k)] == []
    assert json.loads(run(capsys, "capacity", "aws-fleet", "--json")) == doc
    assert run(capsys, "capacity", "aws-fleet").startswith("region")


def test_other_json_formats_are_camel_case(capsys: pytest.CaptureFixture[str]) -> None:
    gpus = json.loads(run(capsys, "gpus", "--format", "json"))
    assert {"name": "l4", "memoryGib": 24}.items() <= next(g for g in gpus if g["name"] == "l4").items()
    assert json.loads(run(capsys, "stacks", "--format", "json")) == STACKS
    fragment = json.loads(run(capsys, "placement", "aws-managed", "training", "--gpus", "8", "--format", "json"))
    assert fragment == yaml.safe_load(run(capsys, "placement", "aws-managed", "training", "--gpus", "8"))
    for doc in (gpus, fragment):
        assert [k for k in keys(doc) if not CAMEL.match(k) and "/" not in k and "." not in k] == []


def test_output_file_for_scrape_config_and_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("scrape-config", "rules"):
        out = tmp_path / f"{command}.yaml"
        assert run(capsys, command, "gcp-autopilot", "-o", str(out)) == ""
        printed = run(capsys, command, "gcp-autopilot")
        assert out.read_text() == printed and yaml.safe_load(printed)
