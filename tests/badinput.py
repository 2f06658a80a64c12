"""Run a stack the way `pulumi up` does (program under mocks) and report how it failed, if it did.

Shared by the hand-written catalogue (tests/bad_configs.yaml) and the Hypothesis property.
"""

from __future__ import annotations

import copy
import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.config import ConfigError
from gpuplane.config.base import models_in
from gpuplane.config.model import StackConfig
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.runner import RecordingMonitor, install, program_run
from gpuplane.plan.stackfile import StackFile, load

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def steps(path: str) -> list[str | int]:
    """`gpuPools[1].taints[0].key` -> `['gpuPools', 1, 'taints', 0, 'key']`."""
    return [int(i) if i else name for name, i in _STEP.findall(path)]


def set_path(config: dict[str, Any], path: str, value: Any) -> None:
    """Set a `gpuplane:` key path in a raw Pulumi config map, creating mappings on the way."""
    first, *rest = steps(path)
    key = f"gpuplane:{first}"
    if not rest:
        config[key] = copy.deepcopy(value)
        return
    node: Any = config.setdefault(key, {})
    for step, nxt in zip(rest, [*rest[1:], None], strict=True):
        if nxt is None:
            node[step] = copy.deepcopy(value)
        else:
            if isinstance(step, str) and not isinstance(node.get(step), dict | list):
                node[step] = {}
            node = node[step]


def unset_path(config: dict[str, Any], path: str) -> None:
    """Remove a `gpuplane:` key path (`cluster.kubernetesVersion`, `gpuPools[0].sharing`) from a raw config map."""
    first, *rest = steps(path)
    if not rest:
        config.pop(f"gpuplane:{first}")
        return
    node: Any = config[f"gpuplane:{first}"]
    for step in rest[:-1]:
        node = node[step]
    del node[rest[-1]]


@dataclass
class Outcome:
    """What running the program did: its config problems (None if it planned) and what it registered."""

    problems: list[tuple[str, str]] | None
    registered: list[str]


_PLANNED: dict[str, Outcome] = {}
"""Outcomes of configs that planned, by config: the program is deterministic (the golden tests hold it to
that), so an identical config (the property draws many shipped stacks unchanged) is run once a session."""


def run_program(stack: StackFile) -> Outcome:
    """Install fresh mocks, run `gpuplane.stack.program.main` and collect a ConfigError's problems.
    Any other exception propagates (and fails the calling test)."""
    from gpuplane.stack.program import main

    key = json.dumps([stack.project, stack.stack, stack.config], sort_keys=True, default=repr)
    if key in _PLANNED:
        return copy.deepcopy(_PLANNED[key])
    with program_run():  # the plan's own loop and GC policy
        monitor: RecordingMonitor = install(stack, PlanMocks())
        try:
            _sync_await(run_pulumi_func(main))
        except ConfigError as exc:
            return Outcome(problems=exc.problems, registered=[r.type for r in monitor.registrations])
    _PLANNED[key] = Outcome(problems=None, registered=[r.type for r in monitor.registrations])
    return copy.deepcopy(_PLANNED[key])


def stack_of(entry: dict[str, Any], root: Path, tmp: Path) -> StackFile | ConfigError:
    """The broken stack an entry describes, or the ConfigError that reading its file raised."""
    if "text" in entry:
        path = tmp / f"Pulumi.{entry['id']}.yaml"
        path.write_text(entry["text"], encoding=entry.get("encoding", "utf-8"))
        try:
            return load(str(path), root)
        except ConfigError as exc:
            return exc
    base = load(entry["base"], root)
    config = copy.deepcopy(base.config)
    for key in entry.get("unset", []):
        unset_path(config, key)
    for path, value in entry.get("set", {}).items():
        set_path(config, path, value)
    config.update(copy.deepcopy(entry.get("set_raw", {})))
    return StackFile(project=base.project, stack=entry["id"], config=config)


def model_keys() -> list[str]:
    """Every key of the stack config model, lists as `[*]` (`gpuPools[*].taints[*].effect`)."""

    def walk(model: Any, prefix: str) -> list[str]:
        out: list[str] = []
        for name, field in model.model_fields.items():
            path = f"{prefix}.{name}" if prefix else name
            out.append(path)
            for inner in models_in(field.annotation):
                listed = any(
                    typing.get_origin(a) is list for a in (field.annotation, *typing.get_args(field.annotation))
                )
                out += walk(inner, path + ("[*]" if listed else ""))
        return out

    return walk(StackConfig, "")


def pattern_of(key_path: str) -> str:
    """`gpuplane:gpuPools[1].taints[0].key` -> `gpuPools[*].taints[*].key`."""
    return re.sub(r"\[\d+\]", "[*]", key_path.removeprefix("gpuplane:"))
