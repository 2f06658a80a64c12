"""Run a fleet's stacks (one per region plus a central one) through the Pulumi Automation API.

`run_fleet` starts each stack once every stack it `reads` has succeeded, at most `parallelism` at a time,
regions in the preference `order`; with `stop_on_failure` nothing new starts after the first failure (the
running ones finish), otherwise only the stacks that read a failed one (directly or not) are skipped.
Threads run the stacks: the Automation API's calls are blocking `pulumi` subprocesses.

The workspace is a factory (`WorkspaceFactory`): `automation_workspace` is the real one; the tests use a
fake that records the calls (tests/fleet_fake.py), since there is no Pulumi CLI where they run.
"""

from __future__ import annotations

import graphlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Protocol

Operation = Literal["up", "preview"]
Status = Literal["succeeded", "failed", "skipped", "not started"]
OnOutput = Callable[[str], Any]


class RunnableStack(Protocol):
    """The shape of `gpuplane.fleet.stacks.FleetStack` that running needs."""

    @property
    def name(self) -> str: ...
    @property
    def region(self) -> str | None: ...
    @property
    def config(self) -> Mapping[str, Any]: ...
    @property
    def reads(self) -> tuple[str, ...]: ...


class ChangeSummary(Protocol):
    @property
    def resource_changes(self) -> Mapping[Any, int] | None: ...


class UpOutcome(Protocol):
    """`pulumi.automation.UpResult` as far as running needs it."""

    @property
    def summary(self) -> ChangeSummary: ...


class PreviewOutcome(Protocol):
    """`pulumi.automation.PreviewResult` as far as running needs it."""

    @property
    def change_summary(self) -> Mapping[Any, int]: ...


class StackHandle(Protocol):
    """One selected stack: set its config, then preview or update it."""

    def set_config(self, key: str, value: str, secret: bool) -> None: ...
    def up(self, on_output: OnOutput) -> UpOutcome: ...
    def preview(self, on_output: OnOutput) -> PreviewOutcome: ...
    def outputs(self) -> Mapping[str, Any]: ...


class WorkspaceFactory(Protocol):
    """Selects (creating it if need be) the Pulumi stack for one fleet stack. Called in the worker thread."""

    def __call__(self, stack: RunnableStack) -> StackHandle: ...


@dataclass(frozen=True)
class FleetEvent:
    """What `on_event` hears: `start`, `output` (a line of the stack's `pulumi` output) and `finish` (the
    text is the status). Events come from the worker threads, one at a time (never two at once)."""

    stack: str
    kind: Literal["start", "output", "finish"]
    text: str = ""


@dataclass(frozen=True)
class StackRun:
    """One stack's part in a run. `changes`: resource operation -> count (`create`, `same`, ...), from the
    update's summary or the preview's change summary; `outputs` after a successful `up` (secrets hidden)."""

    name: str
    region: str | None
    status: Status
    changes: dict[str, int] = field(default_factory=dict)
    error: str = ""
    seconds: float = 0.0
    outputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FleetResult:
    """Every stack's run, in the order the stacks were given."""

    operation: Operation
    stacks: tuple[StackRun, ...]

    @property
    def ok(self) -> bool:
        return all(s.status == "succeeded" for s in self.stacks)

    def __getitem__(self, name: str) -> StackRun:
        for s in self.stacks:
            if s.name == name:
                return s
        raise KeyError(name)


SECRET = "[secret]"


def config_text(value: Any) -> str:
    """A config value as `pulumi config set` takes it: strings as they are, anything else as JSON (which is
    how `Pulumi.<stack>.yaml` structured values reach the program: `pulumi.Config().require_object`)."""
    return value if isinstance(value, str) else json.dumps(value)


def _is_encrypted(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def check_fleet(stacks: Sequence[RunnableStack], order: Sequence[str] | None = None) -> None:
    """`ValueError` for what would make a run go wrong before it starts: repeated stack names, reads of
    stacks not in the run, reads in a cycle, `order` entries that are neither a region nor a stack name, and
    encrypted (`secure:`) config values, whose ciphertext only the stack that encrypted it can read."""
    problems: list[str] = []
    names = [s.name for s in stacks]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            problems.append(f"stack {n!r} is listed twice")
        seen.add(n)
    for s in stacks:
        missing = [r for r in s.reads if r not in seen]
        if missing:
            problems.append(f"stack {s.name!r} reads {', '.join(map(repr, missing))}, which is not in the fleet")
        secure = sorted(k for k, v in s.config.items() if _is_encrypted(v))
        if secure:
            problems.append(
                f"stack {s.name!r}: {', '.join(secure)} is encrypted for another stack; give the plain value "
                "(it is set with `pulumi config set`) or set it in that stack's file with `--secret`"
            )
    if not problems:
        try:
            graphlib.TopologicalSorter({s.name: s.reads for s in stacks}).prepare()
        except graphlib.CycleError as exc:
            problems.append(f"stacks read each other in a cycle: {' -> '.join(reversed(exc.args[1]))}")
    known = seen | {s.region for s in stacks if s.region is not None}
    unknown = [o for o in order or () if o not in known]
    if unknown:
        problems.append(f"order names {', '.join(map(repr, unknown))}, neither a region nor a stack of the fleet")
    if problems:
        raise ValueError("; ".join(problems))


def start_order(stacks: Sequence[RunnableStack], order: Sequence[str] | None) -> list[str]:
    """Stack names in the order they start when they can: those `order` names (by region or stack name)
    in its order, then the rest in the order given."""
    rank = {o: i for i, o in enumerate(order or ())}
    last = len(rank)

    def key(item: tuple[int, RunnableStack]) -> tuple[int, int]:
        i, s = item
        r = min(rank.get(s.name, last), rank.get(s.region, last) if s.region is not None else last)
        return (r, i)

    return [s.name for _, s in sorted(enumerate(stacks), key=key)]


def run_fleet(
    stacks: Sequence[RunnableStack],
    operation: Operation,
    *,
    workspace: WorkspaceFactory,
    parallelism: int = 4,
    order: Sequence[str] | None = None,
    stop_on_failure: bool = True,
    on_event: Callable[[FleetEvent], None] | None = None,
) -> FleetResult:
    """Preview or update every stack of a fleet; see the module's docstring. A stack that reads others
    starts after they succeed, for a preview too (its `StackReference`s read what they last exported)."""
    if operation not in ("up", "preview"):
        raise ValueError(f"operation must be 'up' or 'preview', not {operation!r}")
    if parallelism < 1:
        raise ValueError(f"parallelism must be at least 1, not {parallelism}")
    check_fleet(stacks, order)
    by_name = {s.name: s for s in stacks}
    pending = start_order(stacks, order)
    runs: dict[str, StackRun] = {}
    emit = _serialized(on_event)
    stopping = False
    with ThreadPoolExecutor(max_workers=parallelism, thread_name_prefix="gpuplane-fleet") as pool:
        running: dict[Future[StackRun], str] = {}
        while True:
            if not stopping:
                for name in _skip_readers_of_failed(pending, by_name, runs):
                    runs[name] = StackRun(
                        name, by_name[name].region, "skipped", error=_skip_reason(name, by_name, runs)
                    )
                    pending.remove(name)
                    emit(FleetEvent(name, "finish", "skipped"))
                for name in list(pending):
                    if len(running) >= parallelism:
                        break
                    if all(runs.get(r) is not None and runs[r].status == "succeeded" for r in by_name[name].reads):
                        pending.remove(name)
                        running[pool.submit(_run_one, by_name[name], operation, workspace, emit)] = name
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: running[f]):  # several at once: by name, not by chance
                run = fut.result()
                runs[running.pop(fut)] = run
                if run.status == "failed" and stop_on_failure:
                    stopping = True
    for name in pending:
        runs[name] = StackRun(name, by_name[name].region, "not started")
        emit(FleetEvent(name, "finish", "not started"))
    return FleetResult(operation, tuple(runs[s.name] for s in stacks))


def _skip_readers_of_failed(
    pending: list[str], by_name: Mapping[str, RunnableStack], runs: Mapping[str, StackRun]
) -> list[str]:
    """The pending stacks that read (directly or through others) a stack that did not succeed."""
    bad = {n for n, r in runs.items() if r.status != "succeeded"}
    out: list[str] = []
    grew = True
    while grew:
        grew = False
        for name in pending:
            if name not in out and any(r in bad for r in by_name[name].reads):
                out.append(name)
                bad.add(name)
                grew = True
    return out


def _skip_reason(name: str, by_name: Mapping[str, RunnableStack], runs: Mapping[str, StackRun]) -> str:
    failed = [r for r in by_name[name].reads if r in runs and runs[r].status != "succeeded"]
    return f"reads {', '.join(failed)}, which did not succeed"


def _serialized(on_event: Callable[[FleetEvent], None] | None) -> Callable[[FleetEvent], None]:
    lock = threading.Lock()

    def emit(event: FleetEvent) -> None:
        if on_event is not None:
            with lock:
                on_event(event)

    return emit


def _run_one(
    stack: RunnableStack, operation: Operation, workspace: WorkspaceFactory, emit: Callable[[FleetEvent], None]
) -> StackRun:
    """Select the stack, set its config key by key, preview or update it. Any exception fails the stack."""
    t0 = time.monotonic()
    emit(FleetEvent(stack.name, "start", operation))

    def on_output(line: str) -> None:
        emit(FleetEvent(stack.name, "output", line.rstrip("\n")))

    changes: dict[str, int] = {}
    outputs: dict[str, Any] = {}
    try:
        handle = workspace(stack)
        for key, value in stack.config.items():
            handle.set_config(key, config_text(value), False)
        if operation == "up":
            changes = _changes(handle.up(on_output).summary.resource_changes)
            outputs = {k: _plain_output(v) for k, v in handle.outputs().items()}
        else:
            changes = _changes(handle.preview(on_output).change_summary)
    except Exception as exc:  # a stack's failure is reported, never raised
        run = StackRun(stack.name, stack.region, "failed", changes, _error_text(exc), time.monotonic() - t0)
    else:
        run = StackRun(stack.name, stack.region, "succeeded", changes, "", time.monotonic() - t0, outputs)
    emit(FleetEvent(stack.name, "finish", run.status))
    return run


def _changes(ops: Mapping[Any, int] | None) -> dict[str, int]:
    return {str(k.value if isinstance(k, Enum) else k): int(v) for k, v in (ops or {}).items()}


def _plain_output(value: Any) -> Any:
    """An `OutputValue` (value, secret) as its value, or `[secret]`; anything else as it is."""
    if hasattr(value, "secret") and hasattr(value, "value"):
        return SECRET if value.secret else value.value
    return value


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_OPS = ("create", "update", "replace", "delete")


def _changes_text(changes: Mapping[str, int]) -> str:
    """`create 3, update 1, same 40`: the usual operations first, then any others by name, `same` last."""
    rest = sorted(k for k in changes if k not in _OPS and k != "same")
    keys = [k for k in _OPS if k in changes] + rest + (["same"] if "same" in changes else [])
    return ", ".join(f"{k} {changes[k]}" for k in keys if changes[k]) or "-"


def _error_line(error: str) -> str:
    """The line of an error that says most: the last one with `error:` (the Pulumi CLI's diagnostics, which
    a `CommandError` wraps in its stdout and stderr), else the last one."""
    lines = [ln.strip() for ln in error.splitlines() if ln.strip()] or [""]
    said = [ln for ln in lines if "error:" in ln]
    last = (said or lines)[-1]
    return last.removeprefix("stderr: ").removeprefix("stdout: ")


def summary_table(result: FleetResult) -> str:
    """A text table (stack, region, status, changes, seconds), then each failed stack's error's last line."""
    head = ("stack", "region", "status", "changes", "seconds")
    rows = [
        (
            s.name,
            s.region or "-",
            s.status,
            _changes_text(s.changes),
            f"{s.seconds:.1f}" if s.status in ("succeeded", "failed") else "-",
        )
        for s in result.stacks
    ]
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in (head, *rows)]
    for s in result.stacks:
        if s.status in ("failed", "skipped") and s.error:
            lines.append(f"{s.name}: {_error_line(s.error)}")
    ok = sum(s.status == "succeeded" for s in result.stacks)
    lines.append(f"{result.operation}: {ok} of {len(result.stacks)} stacks succeeded")
    return "\n".join(lines)


class _AutomationHandle:
    """A `pulumi.automation.Stack` behind `StackHandle`. Config is gathered and set with one
    `pulumi config set-all` just before the preview or update (one CLI call, not one per key)."""

    def __init__(self, stack: Any) -> None:
        self._stack = stack
        self._config: dict[str, Any] = {}

    def set_config(self, key: str, value: str, secret: bool) -> None:
        from pulumi import automation as auto

        self._config[key] = auto.ConfigValue(value=value, secret=secret)

    def _flush(self) -> None:
        if self._config:
            self._stack.set_all_config(self._config)
            self._config = {}

    def up(self, on_output: OnOutput) -> UpOutcome:
        self._flush()
        result: UpOutcome = self._stack.up(on_output=on_output)
        return result

    def preview(self, on_output: OnOutput) -> PreviewOutcome:
        self._flush()
        result: PreviewOutcome = self._stack.preview(on_output=on_output)
        return result

    def outputs(self) -> Mapping[str, Any]:
        result: Mapping[str, Any] = self._stack.outputs()
        return result


def automation_workspace(project_dir: Path, project_name: str = "gpuplane") -> WorkspaceFactory:
    """The real workspace: each fleet stack is a stack of the project whose `Pulumi.yaml` is in
    `project_dir` (this project's own program), created if it does not exist. Needs the Pulumi CLI.
    `project_name` is checked against the `Pulumi.yaml`, so a stack never lands in another project."""
    import yaml

    settings = yaml.safe_load((project_dir / "Pulumi.yaml").read_text(encoding="utf-8")) or {}
    if settings.get("name") != project_name:
        raise ValueError(f"{project_dir / 'Pulumi.yaml'} is project {settings.get('name')!r}, not {project_name!r}")

    def select(stack: RunnableStack) -> StackHandle:
        from pulumi import automation as auto

        return _AutomationHandle(auto.create_or_select_stack(stack_name=stack.name, work_dir=str(project_dir)))

    return select
