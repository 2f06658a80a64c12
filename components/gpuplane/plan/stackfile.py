"""Find and read a stack's `Pulumi.<stack>.yaml` the way the Pulumi CLI hands it to a program."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..config import ConfigError
from ..config.base import suggest
from ..errors import InputError

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


class _UniqueKeys:
    """A safe loader that records keys a mapping repeats. YAML 1.2 forbids them; PyYAML keeps the last one
    silently (yaml/pyyaml#165: merge keys make a fix there hard), so a second `gpuplane:gpuPools` would
    hide the first without a word. Merge keys (`<<`) are left to PyYAML.

    Mixed into a parser: libyaml's where PyYAML has it (`_FastLoader`, several times faster), PyYAML's own
    (`_UniqueKeyLoader`) otherwise and for every document libyaml rejects, so that error messages are
    PyYAML's words. Both build the same nodes, with the same marks, for the one constructor and resolver.
    One difference: libyaml takes a tab after `key:` as a separator, as YAML 1.2 does (spec 6.2,
    `s-separate-in-line`), where PyYAML's scanner refuses it."""

    repeats: list[tuple[yaml.Mark, yaml.Mark, object]]

    def __init__(self, stream: str) -> None:
        super().__init__(stream)  # type: ignore[call-arg]
        self.repeats: list[tuple[yaml.Mark, yaml.Mark, object]] = []
        """(where a key repeats, where it first appeared, the key)"""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = self.construct_object(key_node)  # type: ignore[attr-defined]
            if key in first:
                self.repeats.append((key_node.start_mark, first[key], key))
            else:
                first[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc,no-any-return]

    def repeated(self) -> list[str]:
        """`'key' at line 7 (first at line 3)`, in file order (columns when both are on one line)."""
        out = []
        for at, was, key in sorted(self.repeats, key=lambda r: (r[0].line, r[0].column)):
            if at.line == was.line:
                out.append(f"{key!r} at line {at.line + 1}, column {at.column + 1} (first at column {was.column + 1})")
            else:
                out.append(f"{key!r} at line {at.line + 1} (first at line {was.line + 1})")
        return out


class _UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    pass


_FastLoader: type[_UniqueKeys] = (
    type("_FastLoader", (_UniqueKeys, yaml.CSafeLoader), {}) if hasattr(yaml, "CSafeLoader") else _UniqueKeyLoader
)


def read_text(path: Path) -> str:
    """A file's text, or a `ConfigError` naming the file when it is not UTF-8 (as Pulumi requires)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            [(str(path), f"is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8")]
        ) from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """`expected ',' or ']', but got '<stream end>' at line 3, column 1 (while parsing a flow sequence
    from line 2, column 22)`: PyYAML's message on one line, with 1-based positions and no source excerpt."""
    if not isinstance(exc, yaml.MarkedYAMLError):
        return str(exc)

    def at(mark: yaml.Mark | None) -> str:
        return f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""

    where = f" at {at(exc.problem_mark)}" if exc.problem_mark else ""
    context = f" ({exc.context} from {at(exc.context_mark)})" if exc.context and exc.context_mark else ""
    return f"{exc.problem}{where}{context}"


def read_yaml(path: Path) -> Any:
    """Parse a YAML file; bad YAML, non-UTF-8 text and repeated keys are one `ConfigError` naming the file."""
    text = read_text(path)
    loader = _FastLoader(text)
    try:
        doc = loader.get_single_data()  # type: ignore[attr-defined]
    except yaml.YAMLError:
        loader = _UniqueKeyLoader(text)
        try:
            doc = loader.get_single_data()
        except yaml.YAMLError as exc:
            raise ConfigError([(str(path), f"not valid YAML: {_yaml_problem(exc)}")]) from None
    finally:
        loader.dispose()  # type: ignore[attr-defined]
    if loader.repeats:
        raise ConfigError([(str(path), f"repeated key {'; '.join(loader.repeated())}: keys must be unique")])
    return doc


def _project_meta(project_dir: Path) -> dict[str, Any]:
    meta = read_yaml(project_dir / "Pulumi.yaml") or {}
    return meta if isinstance(meta, dict) else {}


def _stack_dir(project_dir: Path) -> Path:
    return project_dir / str(_project_meta(project_dir).get("stackConfigDir", "."))


def _project_name(project_dir: Path | None) -> str:
    if project_dir is None:
        return DEFAULT_PROJECT
    return str(_project_meta(project_dir).get("name", DEFAULT_PROJECT))


def stack_names(cwd: Path | None = None) -> list[str]:
    """Stacks in the project's stack config directory, sorted (none outside a project)."""
    project_dir = find_project_dir((cwd or Path.cwd()).resolve())
    if project_dir is None:
        return []
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in _stack_dir(project_dir).glob("Pulumi.*.yaml"))


def project_stacks(cwd: Path | None = None) -> list[str]:
    """`stack_names`, or an `InputError` when `cwd` is not inside a Pulumi project."""
    here = (cwd or Path.cwd()).resolve()
    if find_project_dir(here) is None:
        raise InputError(f"no Pulumi.yaml in {here} or above: run this inside a Pulumi project")
    return stack_names(here)


def resolve(ref: str, cwd: Path | None = None) -> Path:
    """STACK is a path to a stack YAML, or a stack name looked up in the project's `stacks/`."""
    here = (cwd or Path.cwd()).resolve()
    as_path = Path(ref)
    if as_path.suffix in (".yaml", ".yml") or as_path.is_file():
        if not as_path.is_absolute():
            as_path = here / as_path
        if not as_path.is_file():
            raise InputError(f"no stack file at {as_path}", "STACK")
        return as_path
    project_dir = find_project_dir(here)
    if project_dir is None:
        raise InputError(f"{ref!r} is not a file and no Pulumi.yaml was found in {here} or above", "STACK")
    candidate = _stack_dir(project_dir) / f"Pulumi.{ref}.yaml"
    if not candidate.is_file():
        names = stack_names(project_dir)
        raise InputError(f"unknown stack {ref!r}{suggest(ref, names)} (known: {', '.join(names) or 'none'})", "STACK")
    return candidate


def load(ref: str, cwd: Path | None = None) -> StackFile:
    """Read a stack by name or path. The stack name is taken from `Pulumi.<stack>.yaml`."""
    path = resolve(ref, cwd)
    doc = read_yaml(path) or {}
    config = doc.get("config") if isinstance(doc, dict) else None
    if not isinstance(config, dict):
        raise ConfigError([(str(path), "has no `config:` map")])
    name = path.name
    stack = name[len("Pulumi.") : name.rindex(".")] if name.startswith("Pulumi.") else path.stem
    project_dir = find_project_dir(path.parent)
    return StackFile(project=_project_name(project_dir), stack=stack, config=config, path=path)
