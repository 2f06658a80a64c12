"""Running a fleet's stacks through the Automation API, against a workspace fake that records the calls
(tests/fleet_fake.py; there is no Pulumi CLI here): start order, `reads`, the parallelism bound, stopping
on the first failure or keeping going, preview vs up, and the config each stack gets.

Stacks that must stay running are held by the fake's gates and released by the test, never by sleeping,
so every order asserted here is the only one the runner can produce."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from gpuplane.fleet.run import (
    FleetEvent,
    FleetResult,
    RunnableStack,
    StackRun,
    check_fleet,
    run_fleet,
    summary_table,
)

from .fleet_fake import WAIT, FakeWorkspace, Stack

REGIONS = ("us-central1", "us-east4", "europe-west4")


def fleet(central_reads: bool = True) -> list[Stack]:
    regions = [Stack(f"gcp-fleet-{r}", r, {"gpuplane:region": r}) for r in REGIONS]
    central = Stack(
        "gcp-fleet-central", None, {"gpuplane:central": True}, tuple(s.name for s in regions) if central_reads else ()
    )
    return [*regions, central]


def independent(n: int) -> list[Stack]:
    return [Stack(f"s{i}", f"r{i}", {}) for i in range(n)]


def in_background(fn: Callable[[], FleetResult]) -> Future[FleetResult]:
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(fn)
    pool.shutdown(wait=False)
    return future


@pytest.mark.parametrize("operation", ["up", "preview"])
def test_regions_start_in_preference_order_and_central_after_what_it_reads(operation: Any) -> None:
    ws = FakeWorkspace()
    result = run_fleet(fleet(), operation, workspace=ws, parallelism=1, order=["europe-west4", "us-central1"])
    assert result.ok
    assert ws.started() == [
        "gcp-fleet-europe-west4",
        "gcp-fleet-us-central1",
        "gcp-fleet-us-east4",
        "gcp-fleet-central",
    ]
    assert [s.name for s in result.stacks] == [s.name for s in fleet()]  # results in the order given
    assert {c.method for c in ws.calls} >= {operation, f"{operation}:end"}


def test_without_an_order_stacks_start_in_the_order_given() -> None:
    ws = FakeWorkspace()
    stacks = fleet(central_reads=False)
    run_fleet([stacks[3], *stacks[:3]], "up", workspace=ws, parallelism=1)
    assert ws.started() == ["gcp-fleet-central", *(f"gcp-fleet-{r}" for r in REGIONS)]


def test_central_waits_for_every_region_it_reads_even_with_free_slots() -> None:
    ws = FakeWorkspace(gated=True)
    future = in_background(lambda: run_fleet(fleet(), "up", workspace=ws, parallelism=4))
    regions = [f"gcp-fleet-{r}" for r in REGIONS]
    ws.wait_started(*regions)
    for name in regions:
        assert "gcp-fleet-central" not in ws.started()
        ws.release(name)
    ws.release("gcp-fleet-central")
    result = future.result(WAIT)
    assert result.ok
    central = ws.of("gcp-fleet-central", "up")[0].seq
    assert all(ws.of(r, "up:end")[0].seq < central for r in regions)


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_never_more_than_parallelism_stacks_at_once(parallelism: int) -> None:
    stacks = independent(6)
    names = [s.name for s in stacks]
    ws = FakeWorkspace(gated=True)
    future = in_background(lambda: run_fleet(stacks, "up", workspace=ws, parallelism=parallelism))
    ws.wait_started(*names[:parallelism])
    assert sorted(ws.started()) == names[:parallelism]  # these start together, in no set order
    for i, name in enumerate(names):
        ws.release(name)  # one slot frees up: exactly the next stack starts
        if i + parallelism < len(names):
            ws.wait_started(names[i + parallelism])
            assert sorted(ws.started()[:parallelism]) == names[:parallelism]
            assert ws.started()[parallelism:] == names[parallelism : i + parallelism + 1]
    assert future.result(WAIT).ok
    assert ws.max_running == parallelism


def test_stop_on_first_failure_starts_nothing_new_and_lets_running_stacks_finish() -> None:
    stacks = fleet()
    east, central = "gcp-fleet-us-east4", "gcp-fleet-central"
    ws = FakeWorkspace(fail={"gcp-fleet-us-central1": "quota exceeded for NVIDIA_L4_GPUS"}, gated=(east,))
    future = in_background(lambda: run_fleet(stacks, "up", workspace=ws, parallelism=2))
    ws.wait_ended("gcp-fleet-us-central1")  # failed while us-east4 runs
    ws.release(east)
    result = future.result(WAIT)
    assert sorted(ws.started()) == ["gcp-fleet-us-central1", east]  # both started at once
    assert ws.of(east, "up:end")[0].seq > ws.of("gcp-fleet-us-central1", "up:end")[0].seq
    status = {s.name: s.status for s in result.stacks}
    assert status == {
        "gcp-fleet-us-central1": "failed",
        east: "succeeded",
        "gcp-fleet-europe-west4": "not started",
        central: "not started",
    }
    assert not result.ok
    assert "quota exceeded for NVIDIA_L4_GPUS" in result["gcp-fleet-us-central1"].error
    assert ws.of("gcp-fleet-europe-west4") == []  # not even selected


def test_keep_going_runs_independent_stacks_and_skips_the_readers_of_a_failed_one() -> None:
    stacks = [*fleet(), Stack("gcp-fleet-dashboards", None, {}, ("gcp-fleet-central",))]
    ws = FakeWorkspace(fail={"gcp-fleet-us-central1": "boom"})
    result = run_fleet(stacks, "up", workspace=ws, parallelism=1, stop_on_failure=False)
    status = {s.name: s.status for s in result.stacks}
    assert status == {
        "gcp-fleet-us-central1": "failed",
        "gcp-fleet-us-east4": "succeeded",
        "gcp-fleet-europe-west4": "succeeded",
        "gcp-fleet-central": "skipped",
        "gcp-fleet-dashboards": "skipped",  # reads central, which read the failed region
    }
    assert ws.started() == ["gcp-fleet-us-central1", "gcp-fleet-us-east4", "gcp-fleet-europe-west4"]
    assert "gcp-fleet-us-central1" in result["gcp-fleet-central"].error
    assert "gcp-fleet-central" in result["gcp-fleet-dashboards"].error


def test_a_workspace_that_cannot_select_the_stack_fails_that_stack() -> None:
    def broken(stack: RunnableStack) -> Any:
        raise RuntimeError(f"no backend for {stack.name}")

    result = run_fleet(independent(2), "preview", workspace=broken, stop_on_failure=False)
    assert [s.status for s in result.stacks] == ["failed", "failed"]
    assert result["s0"].error == "RuntimeError: no backend for s0"


def test_preview_previews_and_up_updates_then_reads_outputs() -> None:
    changes = {"s0": {"create": 3, "same": 2}}
    outputs = {"s0": {"kubeconfigPath": "/k", "secretToken": "x"}}
    ws = FakeWorkspace(changes=changes, outputs=outputs)
    preview = run_fleet(independent(1), "preview", workspace=ws)
    assert [c.method for c in ws.calls] == ["select", "preview", "preview:end"]
    assert preview["s0"].changes == {"create": 3, "same": 2}
    assert preview["s0"].outputs == {}

    ws = FakeWorkspace(changes=changes, outputs=outputs)
    up = run_fleet(independent(1), "up", workspace=ws)
    assert [c.method for c in ws.calls] == ["select", "up", "up:end", "outputs"]
    assert up["s0"].changes == {"create": 3, "same": 2}
    assert up["s0"].outputs == {"kubeconfigPath": "/k", "secretToken": "[secret]"}


def test_every_config_key_is_set_before_the_operation_structured_values_as_json() -> None:
    config = {
        "gpuplane:platform": "gke",
        "gpuplane:gpuPools": [{"name": "inference", "gpu": "l4", "maxNodes": 4}],
        "gpuplane:fleet": {"regions": ["us-east4"], "totals": {"inference": 16}},
        "gpuplane:maxNodes": 3,
        "gpuplane:monitoring": True,
        "gcp:project": "p",
    }
    stacks = [Stack("a", "us-east4", config), Stack("b", "us-west1", {"gpuplane:platform": "gke"})]
    ws = FakeWorkspace()
    run_fleet(stacks, "up", workspace=ws)
    got = {c.args[0]: c.args[1:] for c in ws.of("a", "set_config")}
    assert got == {k: (v if isinstance(v, str) else json.dumps(v), False) for k, v in config.items()}
    assert json.loads(got["gpuplane:gpuPools"][0]) == config["gpuplane:gpuPools"]
    assert [c.args for c in ws.of("b", "set_config")] == [("gpuplane:platform", "gke", False)]
    for name in ("a", "b"):
        up = ws.of(name, "up")[0].seq
        assert all(c.seq < up for c in ws.of(name, "set_config"))


def test_events_tell_each_stack_start_output_and_finish() -> None:
    events: list[FleetEvent] = []
    ws = FakeWorkspace(fail={"gcp-fleet-us-central1": "boom"})
    run_fleet(fleet(), "preview", workspace=ws, parallelism=1, on_event=events.append)
    first = [e for e in events if e.stack == "gcp-fleet-us-central1"]
    assert [(e.kind, e.text) for e in first] == [("start", "preview"), ("finish", "failed")]
    east = [e for e in events if e.stack == "gcp-fleet-us-east4"]
    assert east == [FleetEvent("gcp-fleet-us-east4", "finish", "not started")]

    events.clear()
    run_fleet(independent(1), "up", workspace=FakeWorkspace(), on_event=events.append)
    assert events == [
        FleetEvent("s0", "start", "up"),
        FleetEvent("s0", "output", "Updating (s0)"),
        FleetEvent("s0", "finish", "succeeded"),
    ]


@pytest.mark.parametrize(
    ("stacks", "order", "message"),
    [
        ([Stack("a", "r", {}), Stack("a", "q", {})], None, "'a' is listed twice"),
        ([Stack("a", "r", {}, ("b",))], None, "reads 'b', which is not in the fleet"),
        ([Stack("a", "r", {}, ("b",)), Stack("b", "q", {}, ("a",))], None, "cycle: a -> b -> a"),
        ([Stack("a", "r", {})], ["r", "mars"], "'mars', neither a region nor a stack"),
        ([Stack("a", "r", {"gpuplane:token": {"secure": "v1:abc"}})], None, "gpuplane:token is encrypted"),
    ],
)
def test_a_fleet_that_cannot_run_is_refused_before_anything_starts(
    stacks: list[Stack], order: list[str] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        check_fleet(stacks, order)
    ws = FakeWorkspace()
    with pytest.raises(ValueError):
        run_fleet(stacks, "up", workspace=ws, order=order)
    assert ws.calls == []


def test_parallelism_and_operation_are_checked() -> None:
    with pytest.raises(ValueError, match="parallelism must be at least 1"):
        run_fleet(independent(1), "up", workspace=FakeWorkspace(), parallelism=0)
    with pytest.raises(ValueError, match="operation must be"):
        run_fleet(independent(1), "destroy", workspace=FakeWorkspace())  # type: ignore[arg-type]


def test_order_may_name_a_stack_as_well_as_a_region() -> None:
    ws = FakeWorkspace()
    run_fleet(fleet(central_reads=False), "preview", workspace=ws, parallelism=1, order=["gcp-fleet-central"])
    assert ws.started()[0] == "gcp-fleet-central"


def test_summary_table() -> None:
    result = FleetResult(
        "up",
        (
            StackRun("gcp-fleet-us-east4", "us-east4", "succeeded", {"same": 40, "create": 3, "update": 1}, "", 61.25),
            StackRun("gcp-fleet-us-central1", "us-central1", "failed", {}, "CommandError:\n stderr: error: quota", 2.0),
            StackRun("gcp-fleet-central", None, "not started"),
        ),
    )
    assert summary_table(result) == "\n".join(
        [
            "stack                  region       status       changes                      seconds",
            "gcp-fleet-us-east4     us-east4     succeeded    create 3, update 1, same 40  61.2",
            "gcp-fleet-us-central1  us-central1  failed       -                            2.0",
            "gcp-fleet-central      -            not started  -                            -",
            "gcp-fleet-us-central1: error: quota",
            "up: 1 of 3 stacks succeeded",
        ]
    )


def test_the_automation_workspace_checks_the_project_and_sets_config_in_one_call(tmp_path: Any) -> None:
    """The real adapter without the Pulumi CLI: the project check, and the calls it makes on an
    `automation.Stack` (here a recorder): one `set_all_config` of `ConfigValue`s, then the operation."""
    from pulumi import automation as auto

    from gpuplane.fleet.run import _AutomationHandle, automation_workspace

    (tmp_path / "Pulumi.yaml").write_text("name: other\nruntime: python\n")
    with pytest.raises(ValueError, match="is project 'other', not 'gpuplane'"):
        automation_workspace(tmp_path)
    (tmp_path / "Pulumi.yaml").write_text("name: gpuplane\nruntime: python\n")
    assert callable(automation_workspace(tmp_path))  # selecting a stack would need the CLI: not called

    calls: list[tuple[str, Any]] = []

    class Recorder:
        def set_all_config(self, config: Any) -> None:
            calls.append(("set_all_config", {k: (v.value, v.secret) for k, v in config.items()}))
            assert all(isinstance(v, auto.ConfigValue) for v in config.values())

        def preview(self, on_output: Any) -> Any:
            calls.append(("preview", on_output))
            return auto.PreviewResult("", "", {auto.OpType.SAME: 2})

    handle = _AutomationHandle(Recorder())
    result = run_fleet([Stack("a", "r", {"gpuplane:x": 1, "gpuplane:y": "v"})], "preview", workspace=lambda s: handle)
    assert result["a"].changes == {"same": 2}
    assert calls[0] == ("set_all_config", {"gpuplane:x": ("1", False), "gpuplane:y": ("v", False)})
    assert [c[0] for c in calls] == ["set_all_config", "preview"]
