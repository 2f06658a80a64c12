"""A local stand-in for the Pulumi Automation API workspace (there is no Pulumi CLI where the tests run).

`FakeWorkspace` is a `gpuplane.fleet.run.WorkspaceFactory`: it records every call (sequence number,
monotonic time, thread) and answers with the SDK's own result classes (`UpResult`, `PreviewResult`,
`UpdateSummary`, `OutputValue`, `OpType` keys), so the runner reads what the real API would return.
Per stack: a failure (raised as a `CommandError` from the operation), a delay, and a gate, an event the
operation waits for, so that tests hold stacks running and release them in the order they choose. It is
thread-safe: the runner calls it from its worker threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pulumi import automation as auto
from pulumi.automation._cmd import CommandResult

from gpuplane.fleet.run import RunnableStack

WAIT = 5.0
"""Longest a test waits for anything (a gate, a start): a hang fails the test instead of the suite."""


@dataclass(frozen=True)
class Stack:
    """The shape of `gpuplane.fleet.stacks.FleetStack`, built here so these tests do not depend on it."""

    name: str
    region: str | None
    config: dict[str, Any]
    reads: tuple[str, ...] = ()


@dataclass(frozen=True)
class Call:
    seq: int
    at: float
    stack: str
    method: str  # select, set_config, up, up:end, preview, preview:end, outputs
    args: tuple[Any, ...] = ()
    thread: str = ""


class FakeWorkspace:
    def __init__(
        self,
        *,
        fail: Mapping[str, str] | None = None,
        delay: Mapping[str, float] | None = None,
        gated: tuple[str, ...] | bool = (),
        changes: Mapping[str, Mapping[str, int]] | None = None,
        outputs: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.fail = dict(fail or {})
        self.delay = dict(delay or {})
        self.changes = dict(changes or {})
        self.outputs = dict(outputs or {})
        self.calls: list[Call] = []
        self.running: set[str] = set()
        self.max_running = 0
        self._lock = threading.Lock()
        self._gated = gated
        self._gates: dict[str, threading.Event] = {}
        self._started: dict[str, threading.Event] = {}
        self._ended: dict[str, threading.Event] = {}

    # -- what tests use --------------------------------------------------------------------------------
    def _event(self, table: dict[str, threading.Event], name: str) -> threading.Event:
        with self._lock:
            return table.setdefault(name, threading.Event())

    def release(self, *names: str) -> None:
        """Let these gated stacks' operations finish."""
        for n in names:
            self._event(self._gates, n).set()

    def wait_started(self, *names: str) -> None:
        for n in names:
            assert self._event(self._started, n).wait(WAIT), f"{n} did not start"

    def wait_ended(self, *names: str) -> None:
        for n in names:
            assert self._event(self._ended, n).wait(WAIT), f"{n} did not end"

    def started(self) -> list[str]:
        """Stacks in the order their operation (up or preview) began."""
        return [c.stack for c in self.calls if c.method in ("up", "preview")]

    def ended(self) -> list[str]:
        return [c.stack for c in self.calls if c.method.endswith(":end")]

    def of(self, stack: str, method: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.stack == stack and (method is None or c.method == method)]

    # -- the factory and its handles -------------------------------------------------------------------
    def record(self, stack: str, method: str, *args: Any) -> None:
        with self._lock:
            call = Call(len(self.calls), time.monotonic(), stack, method, args, threading.current_thread().name)
            self.calls.append(call)

    def __call__(self, stack: RunnableStack) -> FakeStack:
        self.record(stack.name, "select")
        return FakeStack(self, stack.name)

    def operate(self, name: str, method: str) -> dict[auto.OpType, int]:
        with self._lock:
            self.running.add(name)
            self.max_running = max(self.max_running, len(self.running))
        self.record(name, method)
        self._event(self._started, name).set()
        try:
            if self._gated is True or name in (self._gated or ()):
                assert self._event(self._gates, name).wait(WAIT), f"{name} was never released"
            if self.delay.get(name):
                time.sleep(self.delay[name])
            if name in self.fail:
                result = CommandResult(stdout="", stderr=f"error: {self.fail[name]}\n", code=255)
                raise auto.CommandError(result)
            return {auto.OpType(k): v for k, v in self.changes.get(name, {"create": 1}).items()}
        finally:
            self.record(name, f"{method}:end")
            with self._lock:
                self.running.discard(name)
            self._event(self._ended, name).set()


class FakeStack:
    def __init__(self, ws: FakeWorkspace, name: str) -> None:
        self.ws = ws
        self.name = name

    def set_config(self, key: str, value: str, secret: bool) -> None:
        self.ws.record(self.name, "set_config", key, value, secret)

    def up(self, on_output: Any) -> auto.UpResult:
        ops = self.ws.operate(self.name, "up")
        on_output(f"Updating ({self.name})\n")
        now = datetime.now()
        summary = auto.UpdateSummary("update", now, "", {}, {}, "succeeded", now, resource_changes=ops)
        return auto.UpResult("", "", summary, self._outputs())

    def preview(self, on_output: Any) -> auto.PreviewResult:
        ops = self.ws.operate(self.name, "preview")
        on_output(f"Previewing update ({self.name})\n")
        return auto.PreviewResult("", "", ops)

    def _outputs(self) -> dict[str, auto.OutputValue]:
        given = self.ws.outputs.get(self.name, {})
        return {k: auto.OutputValue(v, secret=k.startswith("secret")) for k, v in given.items()}

    def outputs(self) -> dict[str, auto.OutputValue]:
        self.ws.record(self.name, "outputs")
        return self._outputs()
