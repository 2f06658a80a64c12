"""Run the real stack program under Pulumi mocks and record what the engine would receive.

`plan_stack` is the offline plan: the same `gpuplane.stack.program.main` that `pulumi up` runs, with the
engine swapped for a recording `MockMonitor`. Config is validated before the mocks are installed, so a
bad stack registers nothing.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar, TypeVarTuple, Unpack

import pulumi
from pulumi import _types as ptypes
from pulumi.runtime import mocks as pm
from pulumi.runtime import resource as presource
from pulumi.runtime import settings as ps
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from ..config import parse_flat
from .cloud import Cloud
from .mocks import PlanMocks
from .monitor import SECRET, engine_view
from .monitor import PlannedResource as PlannedResource  # re-exported: the plan's record of a registration
from .monitor import RecordingMonitor as RecordingMonitor
from .stackfile import StackFile

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")


@dataclass
class Plan:
    """The resource graph of one stack and its outputs."""

    project: str
    stack: str
    resources: list[PlannedResource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    registered_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """URN -> the outputs that resource registered (`register_outputs`: components and the stack), as the
    engine sees them (not part of the JSON contract)."""
    live_reads: tuple[str, ...] = ()
    """Invokes the program made whose answers depend on what exists (`cloud.LIVE_READS`): its next `up`
    may send other inputs, so the simulator runs it again (`replan`) against the state this plan leaves."""
    existing_crds: frozenset[str] = frozenset()
    """API groups the plan's stack file states its cluster already has (`gpuplane:existingCrds`)."""
    replan: Callable[[Cloud], Plan] | None = field(default=None, repr=False, compare=False)
    """The same program under fresh mocks of the same kind, against the given live state (None: a plan
    that cannot be re-run, such as a `gpuplane.testing.offline` block)."""

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without `replan` (a closure over the program); an unpickled plan cannot be re-run."""
        return {**self.__dict__, "replan": None}

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "stack": self.stack,
            "resources": [r.to_json() for r in self.resources],
            "outputs": self.outputs,
        }

    def by_type(self, type_: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_]

    def get(self, urn: str) -> PlannedResource:
        for r in self.resources:
            if r.urn == urn:
                return r
        raise KeyError(urn)


async def _resolve(value: Any) -> Any:
    out = pulumi.Output.from_input(value)
    if await out.is_secret():
        return SECRET
    resolved = await out.future()
    return engine_view(resolved)


def install(stack: StackFile, mocks: pulumi.runtime.Mocks | None = None) -> RecordingMonitor:
    """Install fresh mocks and the stack's config for one program run (mocks are process-wide).

    Outside `program_run` the SDK's process-wide event loop is used (created here if a run unset it)."""
    _ensure_event_loop()  # type: ignore[no-untyped-call]
    monitor = RecordingMonitor(mocks or PlanMocks())
    if isinstance(monitor.mocks, PlanMocks):
        monitor.mocks.monitor = monitor
    set_all_config(stack.flat_config(), stack.secret_keys())
    ps.ROOT.set(None)
    preview = bool(getattr(monitor.mocks, "preview", False))  # `mocks_preview.PreviewMocks`: a dry run
    pm.set_mocks(monitor.mocks, project=stack.project, stack=stack.stack, preview=preview, monitor=monitor)
    # Nothing of an earlier run is waited for: its RPCs and outputs may belong to a loop closed since.
    ps.SETTINGS.rpc_manager.clear()
    ps.SETTINGS.outputs.clear()
    return monitor


def _no_stack_trace() -> Any:
    return source_pb2.StackTrace()


PER_CLASS = ("resource_types", "resource_pulumi_to_py_names", "input_type_py_to_pulumi_names")
"""pulumi/_types.py functions of a provider class that the SDK re-derives for every registration or value."""

_UNWRAPPED: dict[Any, Any] = {}
_PER_CLASS: dict[tuple[str, type], dict[str, Any]] = {}


@contextmanager
def memoised_type_metadata() -> Iterator[None]:
    """Within the block, the SDK's type introspection runs once per type instead of once per property.

    For every registration and property the SDK re-derives a provider class's annotations and name tables
    (pulumi/_types.py `resource_types`, `resource_pulumi_to_py_names`, `input_type_py_to_pulumi_names`,
    called from pulumi/runtime/rpc.py) and unwraps each `Optional[Input[T]]` hint through `typing`
    (`unwrap_type`, from rpc.py `serialize_property`): pure functions of a class or hint, which is as fixed
    as the module that defines it, so the answers are kept for the process. Callers get their own dicts,
    as from the SDK. (One difference: `typing` treats `Union[None, str]` and `Optional[str]` as the same
    key, so the SDK's assertion against the former is not repeated once the latter is cached.)"""
    saved = {name: getattr(ptypes, name) for name in ("unwrap_type", *PER_CLASS)}
    unwrap = saved["unwrap_type"]

    def unwrap_type(val: Any) -> Any:
        try:
            return _UNWRAPPED[val]
        except KeyError:
            out = _UNWRAPPED[val] = unwrap(val)
            return out
        except TypeError:  # an unhashable hint
            return unwrap(val)

    def per_class(name: str) -> Callable[[type], dict[str, Any]]:
        derive = saved[name]

        def memoised(cls: type) -> dict[str, Any]:
            key = (name, cls)
            if key not in _PER_CLASS:
                _PER_CLASS[key] = derive(cls)
            return dict(_PER_CLASS[key])

        return memoised

    ptypes.unwrap_type = unwrap_type
    for name in PER_CLASS:
        setattr(ptypes, name, per_class(name))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(ptypes, name, fn)


_SDK_CONTEXT = "pulumi.runtime._context"
"""The module of `wrap_with_context`, which wraps every engine call the SDK hands to `run_in_executor`."""


class InlineExecutorLoop(asyncio.SelectorEventLoop):
    """An event loop whose `run_in_executor` calls the function at once, on the loop's thread, as if on a
    worker thread of its own.

    The SDK sends every engine call (RegisterResource, Invoke, RegisterResourceOutputs, ...) through
    `loop.run_in_executor(None, ...)` (pulumi/runtime/resource.py `do_register`, invoke.py, settings.py,
    stack.py) because a real monitor is a gRPC server in another process. Under the mocks the monitor is
    an in-process object that answers at once, so each call only paid a hop to a worker thread and back:
    a thread switch, a lock and a selector wake-up per call, about a fifth of a plan.

    On a worker thread the mock monitor found no running loop: its `_sync_await` calls
    (pulumi/runtime/mocks.py `RegisterResource`, which serialises the mocked state) ran on that thread's
    own loop. Here the call runs with this loop marked not running and a side loop current, so they run
    on the side loop as before; pumping this loop re-entrantly from inside one of its callbacks would run
    other registrations nested in this one (and, with a few hundred ready at once, exhaust the stack).

    Only the SDK's engine calls run inline (no executor given, the function wrapped by the SDK's
    pulumi/runtime/_context.py `wrap_with_context`, during this loop's own run, which `program_run` makes
    the current loop); anything else a program hands to `run_in_executor` (`asyncio.to_thread`, a blocking
    wait for another task) goes to the default executor as on any loop."""

    def __init__(self) -> None:
        super().__init__()
        self._side: asyncio.AbstractEventLoop | None = None

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[Unpack[_Ts]], _T], *args: *_Ts
    ) -> asyncio.Future[_T]:
        engine_call = executor is None and getattr(func, "__module__", None) == _SDK_CONTEXT
        if not engine_call or asyncio.events._get_running_loop() is not self:  # anything else: as any loop does
            return super().run_in_executor(executor, func, *args)
        future: asyncio.Future[_T] = self.create_future()
        if self._side is None:
            self._side = asyncio.new_event_loop()
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(self._side)
        try:
            future.set_result(func(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine, as the executor does
            future.set_exception(exc)
        finally:
            asyncio.set_event_loop(self)
            asyncio.events._set_running_loop(self)
        return future

    def close(self) -> None:
        if self._side is not None:
            self._side.close()
            self._side = None
        super().close()


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC paused within the block (nested blocks leave it to the outermost): a plan allocates
    hundreds of thousands of short-lived objects (Outputs, futures, tasks, rendered values), and collections
    triggered during it traverse them and the imported provider SDKs' objects again and again; afterwards
    one collection frees the plan's cycles. `program_run` holds it over each run."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


@contextmanager
def program_run() -> Iterator[asyncio.AbstractEventLoop]:
    """One program run on its own event loop, closed in order afterwards, with the cyclic GC paused.

    - The loop: the Pulumi SDK (pulumi/runtime/sync_await.py `_ensure_event_loop`) otherwise leaves one
      global loop open for the life of the process; it is then closed by `BaseEventLoop.__del__` at
      interpreter exit, where its self-pipe socket may already be finalised and CPython prints
      `Exception ignored in: <function BaseEventLoop.__del__ ...> ValueError: Invalid file descriptor: -1`
      (asyncio/selector_events.py `_close_self_pipe`). Here leftover tasks are cancelled, async generators
      and the default executor shut down, then the loop is closed and unset. The mocks open no gRPC
      channel (pulumi/runtime/mocks.py passes a `MockMonitor` object, not an address, to `Settings`).
    - The GC: paused during the run (`gc_paused`).
    - Type metadata: memoised for the process (`memoised_type_metadata`).
    - Engine calls run inline on the loop's thread (`InlineExecutorLoop`).
    - Source positions: the SDK walks and formats the whole Python stack for every registration
      (pulumi/runtime/resource.py `_get_stack_trace`, `traceback.extract_stack`) so that the engine can
      point at user code; the recording monitor keeps none, so the run registers empty stack traces.
    """
    loop = InlineExecutorLoop()
    asyncio.set_event_loop(loop)
    stack_trace = presource._get_stack_trace
    presource._get_stack_trace = _no_stack_trace
    try:
        with gc_paused(), memoised_type_metadata():
            yield loop
    finally:
        presource._get_stack_trace = stack_trace
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def run_program(stack: StackFile, program: Callable[[], object], mocks: pulumi.runtime.Mocks | None = None) -> Plan:
    """Run `program` under fresh mocks with the stack's config and return what it registered and exported."""

    def run() -> None:
        program()  # its return value (runpy's globals, say) is not the engine's business

    with program_run():
        monitor = install(stack, mocks)
        _sync_await(run_pulumi_func(run))
        plan = recorded(stack, monitor)
    used = monitor.mocks
    if isinstance(used, PlanMocks):
        plan.live_reads = tuple(used.live_reads)
        plan.replan = lambda cloud: run_program(stack, program, used.again(cloud))
    return plan


def plan_stack(stack: StackFile, mocks: pulumi.runtime.Mocks | None = None) -> Plan:
    """Validate the stack's config, then run the program under mocks and return the recorded graph.

    Raises `ConfigError` (before anything is registered) when the config is bad.
    """
    from ..stack.program import main
    from .project import stack_references

    parse_flat(stack.flat_config())
    return run_program(stack, main, mocks or PlanMocks(stack_references(stack)))


def recorded(stack: StackFile, monitor: RecordingMonitor) -> Plan:
    """The plan of a finished run (in `program_run`, or outside it in `gpuplane.testing`'s sessions): the
    monitor's registrations in tree order, the resolved stack outputs and what components registered."""
    root = ps.get_root_resource()
    stack_outputs: dict[str, Any] = dict(getattr(root, "outputs", {}))
    loop = asyncio.get_event_loop()
    outputs = {k: loop.run_until_complete(_resolve(v)) for k, v in stack_outputs.items()}
    filled = getattr(monitor.mocks, "filled", {})
    for r in monitor.registrations:
        r.filled = dict(filled.get((r.type, r.name), {}))
    return Plan(
        project=stack.project,
        stack=stack.stack,
        resources=tree_order(monitor.registrations),
        outputs=outputs,
        registered_outputs=dict(monitor.registered_outputs),
    )


def tree_order(resources: list[PlannedResource]) -> list[PlannedResource]:
    """Parents before children, siblings by name then type: the same order on every run, whatever
    order the asynchronous registrations arrived in."""
    kids: dict[str | None, list[PlannedResource]] = {}
    for r in resources:
        kids.setdefault(r.parent, []).append(r)
    out: list[PlannedResource] = []

    def walk(parent: str | None) -> None:
        for r in sorted(kids.get(parent, []), key=lambda r: (r.name, r.type)):
            out.append(r)
            walk(r.urn)

    walk(None)
    return out
