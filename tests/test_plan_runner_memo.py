"""The plan runner: its per-run memo of the SDK's type introspection is scoped to one run; engine calls run inline."""

from __future__ import annotations

import pytest
from pulumi import _types as ptypes

from gpuplane.plan.runner import PER_CLASS, memoised_type_metadata


def test_memo_restores_the_sdk_functions_even_after_an_error() -> None:
    names = ("unwrap_type", *PER_CLASS)
    before = [getattr(ptypes, n) for n in names]
    with pytest.raises(RuntimeError), memoised_type_metadata():
        assert all(getattr(ptypes, n) is not fn for n, fn in zip(names, before, strict=True))
        raise RuntimeError("boom")
    assert [getattr(ptypes, n) for n in names] == before


def test_memo_answers_as_the_sdk_does() -> None:
    import pulumi
    import pulumi_gcp

    hints = [pulumi.Input[str], pulumi.Output[int] | None, dict[str, pulumi.Input[str]] | None, list]  # type: ignore[misc]
    expected = [ptypes.unwrap_type(h) for h in hints]
    classes = {
        "resource_types": pulumi_gcp.container.Cluster,
        "resource_pulumi_to_py_names": pulumi_gcp.container.Cluster,
        "input_type_py_to_pulumi_names": pulumi_gcp.container.ClusterNodeConfigArgs,
    }
    assert set(classes) == set(PER_CLASS)
    sdk = {name: getattr(ptypes, name)(cls) for name, cls in classes.items()}
    assert all(sdk.values())
    with memoised_type_metadata():
        assert [ptypes.unwrap_type(h) for h in hints * 2] == expected * 2
        for name, cls in classes.items():
            first = getattr(ptypes, name)(cls)
            first.clear()  # a caller's own copy
            assert getattr(ptypes, name)(cls) == sdk[name]


def test_engine_calls_run_on_the_plan_thread_and_many_at_once_plan() -> None:
    """`InlineExecutorLoop`: the mocks answer on the plan's own thread (no executor hop), and a program that
    registers hundreds of resources at once plans. The mock monitor's `_sync_await` once pumped the plan's
    own loop from inside a registration, which ran the other registrations nested in it until the stack
    ran out (a RecursionError at a few hundred)."""
    import threading

    import pulumi

    from gpuplane.plan.mocks import PlanMocks
    from gpuplane.plan.runner import run_program
    from gpuplane.plan.stackfile import StackFile

    threads: set[int] = set()

    class Mocks(PlanMocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, object]]:
            threads.add(threading.get_ident())
            return f"{args.name}-id", dict(args.inputs)

    def program() -> None:
        for i in range(600):
            pulumi.CustomResource("test:index:Thing", f"thing-{i}", {"index": i, "nested": {"list": [i, i + 1]}})

    plan = run_program(StackFile(project="p", stack="s", config={}), program, Mocks())
    things = plan.by_type("test:index:Thing")
    assert len(things) == 600 and things[0].inputs["nested"] == {"list": [0, 1]}
    assert threads == {threading.get_ident()}


def test_a_fresh_install_waits_for_nothing_of_an_earlier_run() -> None:
    """`install` drops what the SDK waits for at the end of a program (its RPCs and outputs): left by an earlier
    run, they belong to a loop closed since, and waiting for them failed the next program with
    `RuntimeError: Event loop is closed` (seen when tests/test_library.py ran after tests/test_testing.py in one
    process)."""
    import asyncio

    import pulumi
    from pulumi.runtime import settings as ps
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    from gpuplane.plan.runner import install
    from gpuplane.plan.stackfile import StackFile

    earlier = asyncio.new_event_loop()
    left = earlier.create_future()
    left.set_result(None)  # done: waiting for it schedules a callback on its loop
    earlier.close()
    ps.SETTINGS.outputs.add(left)
    monitor = install(StackFile(project="p", stack="s", config={}))
    _sync_await(run_pulumi_func(lambda: pulumi.CustomResource("test:index:Thing", "thing", {})))
    assert [r.type for r in monitor.registrations] == ["pulumi:pulumi:Stack", "test:index:Thing"]


def test_only_engine_calls_run_inline() -> None:
    """What a program itself hands to `run_in_executor` (here `asyncio.to_thread`, waiting for another task)
    runs on a worker thread as on any loop; inlined, it would block the loop and wait in vain."""
    import asyncio
    import threading

    from gpuplane.plan.runner import InlineExecutorLoop

    async def main() -> bool:
        ready = threading.Event()

        async def other_task() -> None:
            ready.set()

        asyncio.get_running_loop().create_task(other_task())
        return await asyncio.to_thread(ready.wait, 5.0)

    loop = InlineExecutorLoop()
    try:
        assert loop.run_until_complete(asyncio.wait_for(main(), 3.0)) is True
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def test_plain_state_is_encoded_as_the_sdk_encodes_it() -> None:
    """`plain_struct` writes the bytes the SDK's serialiser writes (pulumi/runtime/rpc.py
    `serialize_properties`): top-level None left out, nested None kept, numbers, bools, unicode, the unknown
    sentinel; anything not plain is left to the SDK."""
    import asyncio

    from pulumi.runtime import rpc

    from gpuplane.plan.monitor import UNKNOWN, plain_struct

    state = {
        "gone": None,
        "list": [1, None, 2.5, True, "x", {"k": None}],
        "nested": {"none": None, "empty": {}, "big": 2**60, "neg": -0.0, "text": "grüße", "": "empty key"},
        "unknown": UNKNOWN,
        "flag": False,
    }
    loop = asyncio.new_event_loop()
    try:
        sdk = loop.run_until_complete(rpc.serialize_properties(state, {}))
    finally:
        loop.close()
    ours = plain_struct(state)
    assert ours is not None and ours.SerializeToString(deterministic=True) == sdk.SerializeToString(deterministic=True)
    assert plain_struct({"t": (1, 2)}) is None and plain_struct({"r": object()}) is None


def test_the_monitor_answers_as_the_stock_mock_monitor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole plan comes out the same when the stock `MockMonitor.RegisterResource` answers instead."""
    from pulumi.runtime import mocks as pm

    from gpuplane.plan import load, plan_stack, runner
    from gpuplane.plan.monitor import RecordingMonitor

    from .conftest import ROOT

    class Stock(RecordingMonitor):
        def _answer(self, request: object, urn: str, transforms: list[object]) -> object:
            return pm.MockMonitor.RegisterResource(self, request)  # type: ignore[no-untyped-call]

    ours = plan_stack(load("aws-karpenter", ROOT))
    monkeypatch.setattr(runner, "RecordingMonitor", Stock)
    stock = plan_stack(load("aws-karpenter", ROOT))
    assert stock.to_json() == ours.to_json()
    assert (stock.outputs, stock.registered_outputs) == (ours.outputs, ours.registered_outputs)
