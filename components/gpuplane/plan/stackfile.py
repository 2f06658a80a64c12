"""Find and read a stack's `Pulumi.<stack>.yaml` the way the Pulumi CLI hands it to a program."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..config import ConfigError

DEFAULT_PROJECT = "gpuplane"


@dataclass(frozen=True)
class StackFile:
    """One stack: project and stack names and its raw `config:` map."""

    project: str
    stack: str
    config: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def flat_config(self) -> dict[str, str]:
        """Config as the engine passes it: strings, with structured values as JSON.

        Encrypted values (`secure:`) cannot be read offline; they become the text `[secret]`.
        """
        return {k: _engine_string(v) for k, v in self.config.items()}

    def secret_keys(self) -> list[str]:
        return sorted(k for k, v in self.config.items() if isinstance(v, dict) and set(v) == {"secure"})


def _engine_string(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"secure"}:
        return "[secret]"
    if isinstance(value, str):
        return value
    return json.dumps(value)


def find_project_dir(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a `Pulumi.yaml`."""
    for d in (start, *start.parents):
        if (d / "Pulumi.yaml").is_file():
            return d
    return None


def _stack_dir(project_dir: Path) -> Path:
    meta = yaml.safe_load((project_dir / "Pulumi.yaml").read_text()) or {}
    return project_dir / str(meta.get("stackConfigDir", "."))


def _project_name(project_dir: Path | None) -> str:
    if project_dir is None:
        return DEFAULT_PROJECT
    meta = yaml.safe_load((project_dir / "Pulumi.yaml").read_text()) or {}
    return str(meta.get("name", DEFAULT_PROJECT))


def stack_names(cwd: Path | None = None) -> list[str]:
    """Stacks in the project's stack config directory, sorted."""
    project_dir = find_project_dir((cwd or Path.cwd()).resolve())
    if project_dir is None:
        return []
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in _stack_dir(project_dir).glob("Pulumi.*.yaml"))


def resolve(ref: str, cwd: Path | None = None) -> Path:
    """STACK is a path to a stack YAML, or a stack name looked up in the project's `stacks/`."""
    here = (cwd or Path.cwd()).resolve()
    as_path = Path(ref)
    if as_path.suffix in (".yaml", ".yml") or as_path.is_file():
        if not as_path.is_absolute():
            as_path = here / as_path
        if not as_path.is_file():
            raise ConfigError([("stack", f"no stack file at {as_path}")])
        return as_path
    project_dir = find_project_dir(here)
    if project_dir is None:
        raise ConfigError([("stack", f"{ref!r} is not a file and no Pulumi.yaml was found above {here}")])
    candidate = _stack_dir(project_dir) / f"Pulumi.{ref}.yaml"
    if not candidate.is_file():
        known = ", ".join(stack_names(project_dir)) or "none"
        raise ConfigError([("stack", f"unknown stack {ref!r} (known: {known})")])
    return candidate


def load(ref: str, cwd: Path | None = None) -> StackFile:
    """Read a stack by name or path. The stack name is taken from `Pulumi.<stack>.yaml`."""
    path = resolve(ref, cwd)
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError([(str(path), f"not valid YAML: {exc}")]) from None
    config = doc.get("config") if isinstance(doc, dict) else None
    if not isinstance(config, dict):
        raise ConfigError([(str(path), "has no `config:` map")])
    name = path.name
    stack = name[len("Pulumi.") : name.rindex(".")] if name.startswith("Pulumi.") else path.stem
    project_dir = find_project_dir(path.parent)
    return StackFile(project=_project_name(project_dir), stack=stack, config=config, path=path)
