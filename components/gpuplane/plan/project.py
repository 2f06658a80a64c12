"""Plan any Pulumi Python program offline: its `Pulumi.yaml`, a stack file's config, gpuplane's mocks.

`gpuplane plan --program DIR` and `gpuplane.testing.plan_program` run the program's `__main__.py` the way
the Pulumi CLI's Python language host does (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec: the
program folder is the working directory and on `sys.path`, and the program runs via `runpy.run_path(...,
run_name="__main__")`; `main:` in Pulumi.yaml may point elsewhere), with the engine replaced by the recording
mocks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import runpy
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import yaml

from ..config import ConfigError
from ..resources.extras import hint
from .mocks import STACK_REFERENCES_KEY, PlanMocks
from .runner import Plan, run_program
from .stackfile import StackFile, load

EXISTING_CRDS_KEY = "gpuplane:existingCrds"
"""Stack config key (a list of API groups) stating the CRDs the program's cluster already has, for the
deploy simulator; e.g. `[monitoring.coreos.com]` for a cluster that runs Prometheus Operator."""


@dataclass(frozen=True)
class Project:
    """A Pulumi Python project: its name, folder, program file and stack config folder."""

    name: str
    folder: Path
    main: Path
    stack_dir: Path


def load_project(folder: str | Path) -> Project:
    """Read `DIR/Pulumi.yaml` (name, `runtime: python`, optional `main:` and `stackConfigDir:`)."""
    root = Path(folder).resolve()
    meta_path = root / "Pulumi.yaml"
    if not meta_path.is_file():
        raise ConfigError([("program", f"no Pulumi.yaml in {root}")])
    try:
        meta = yaml.safe_load(meta_path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError([(str(meta_path), f"not valid YAML: {exc}")]) from None
    runtime = meta.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    problems = []
    if not meta.get("name"):
        problems.append((f"{meta_path}: name", "missing (the project name)"))
    if runtime_name != "python":
        problems.append((f"{meta_path}: runtime", f"{runtime_name!r}: only Python programs can be planned offline"))
    main = root / str(meta.get("main", "."))
    if main.is_dir():
        main = main / "__main__.py"
    if not main.is_file():
        problems.append((f"{meta_path}: main", f"no program at {main}"))
    if problems:
        raise ConfigError(problems)
    return Project(str(meta["name"]), root, main, root / str(meta.get("stackConfigDir", ".")))


def stack_for(project: Project, ref: str | None = None, config: Mapping[str, Any] | None = None) -> StackFile:
    """The stack to plan: `ref` (a stack file path, or a stack name in the project's stack folder), else the
    project's only `Pulumi.<stack>.yaml`, else an empty stack `dev`. `config` adds or overrides keys; keys
    without a namespace belong to the project (as `pulumi config set KEY` would store them)."""
    if ref is not None:
        by_path = Path(ref).suffix in (".yaml", ".yml")
        stack = load(ref, cwd=Path.cwd() if by_path else project.folder)
    else:
        files = sorted(project.stack_dir.glob("Pulumi.*.yaml"))
        if len(files) > 1:
            names = ", ".join(f.name for f in files)
            raise ConfigError([("stack", f"{project.folder} has several stacks ({names}): name one")])
        stack = load(str(files[0])) if files else StackFile(project=project.name, stack="dev")
    extra = {(k if ":" in k else f"{project.name}:{k}"): v for k, v in (config or {}).items()}
    return dataclasses.replace(stack, project=project.name, config={**stack.config, **extra})


def existing_crds(stack: StackFile) -> frozenset[str]:
    """API groups the stack states its cluster already has (`gpuplane:existingCrds`)."""
    value = stack.config.get(EXISTING_CRDS_KEY, [])
    if isinstance(value, str):
        value = json.loads(value) if value.startswith("[") else [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError([(EXISTING_CRDS_KEY, f"must be a list of API groups, got {value!r}")])
    return frozenset(value)


def _forget_modules_in(folder: Path) -> None:
    """Drop the program's own modules from `sys.modules`, so each run imports (and registers) them afresh,
    as each `pulumi up` does in a new process."""
    root = folder.resolve()
    installed = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if not where:
            continue
        path = Path(where).resolve()
        # A virtualenv inside the program folder (`pulumi new`'s layout) holds pulumi, grpc and protobuf:
        # dropping those would break the running SDK.
        if any(path.is_relative_to(p) for p in installed) or {"site-packages", "dist-packages"} & set(path.parts):
            continue
        if path.is_relative_to(root):
            del sys.modules[name]


@contextlib.contextmanager
def _as_language_host(folder: Path) -> Iterator[None]:
    """The program's folder as working directory and first on `sys.path`, its modules not yet imported;
    restored afterwards."""
    cwd = os.getcwd()
    _forget_modules_in(folder)
    sys.path.insert(0, str(folder))
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)
        with contextlib.suppress(ValueError):
            sys.path.remove(str(folder))
        _forget_modules_in(folder)


def stack_references(stack: StackFile) -> dict[str, dict[str, Any]]:
    """Outputs the stack file gives for the stacks the program references (`gpuplane:stackReferences`)."""
    value = stack.config.get(STACK_REFERENCES_KEY, {})
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise ConfigError([(STACK_REFERENCES_KEY, f"must map stack names to their outputs, got {value!r}")])
    return {str(k): dict(v) for k, v in value.items()}


def run(project: Project, stack: StackFile, mocks: pulumi.runtime.Mocks | None = None) -> Plan:
    """Run the project's program under fresh mocks (by default gpuplane's, answering stack references from
    the stack file). A missing cloud SDK or a missing required config value is a `ConfigError`, not a
    traceback."""
    mocks = mocks or PlanMocks(stack_references(stack))
    with _as_language_host(project.main.parent):
        try:
            plan = run_program(stack, lambda: runpy.run_path(str(project.main), run_name="__main__"), mocks)
            if isinstance(mocks, PlanMocks):  # run again as a program from its own folder
                plan.replan = lambda cloud: run(project, stack, mocks.again(cloud))
            plan.existing_crds = existing_crds(stack)
        except ModuleNotFoundError as exc:
            advice = hint(exc)
            if advice is None:
                raise
            raise ConfigError([(f"{project.name} program", advice)]) from None
        except pulumi.ConfigMissingError as exc:
            where = stack.path or "no stack file given"
            raise ConfigError([(exc.key, f"missing: set it in the stack file ({where})")]) from None
    if not plan.outputs and not [r for r in plan.resources if r.type != "pulumi:pulumi:Stack"]:
        raise ConfigError(
            [
                (
                    f"{project.name} program",
                    f"registered no resources and exported nothing ({project.main}): an empty plan proves nothing",
                )
            ]
        )
    return plan


def plan_program(folder: str | Path, ref: str | None = None, preview: bool = False) -> tuple[Plan, frozenset[str]]:
    """`gpuplane plan --program DIR [--stack FILE] [--preview]`: the plan and the CRD groups its stack states."""
    from .mocks_preview import PreviewMocks

    project = load_project(folder)
    stack = stack_for(project, ref)
    crds = existing_crds(stack)
    return run(project, stack, PreviewMocks(stack_references(stack)) if preview else None), crds
