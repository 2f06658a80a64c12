"""Benchmark: the offline plan of every shipped stack (and a generated 50-pool stack) against a floor.

- plan: what `gpuplane plan STACK --format json` does in-process: read the stack file, validate the
  config, run the program under the mocks, run the deploy simulator, render the JSON.
- floor: a bare replay of the same registrations through the Pulumi SDK: every recorded resource with
  its type, name, parent, custom flag and inputs (as plain data) as a plain `CustomResource` or
  `ComponentResource`, plus the same stack outputs, under the same mocks and the same runner
  (`gpuplane.plan.runner.run_program`: its own event loop and GC policy). It runs in the same process right
  after the plan, so the same provider modules are imported; neither side's timing includes imports
  (one warm-up run each first).
- typed floor: the same replay, but each resource registers the property names its provider class
  registers (every input and output property of e.g. `pulumi_gcp.container.Cluster`, unset ones as
  `None`; captured from the plan run at `pulumi.resource.register_resource`), with the same values. The
  typed classes' property sets are most of the gap between plan and floor: any Python program that uses
  the provider SDKs' classes pays them, so `typed_ratio` is gpuplane's own cost on top of such a program.
  It leaves out the typed classes' type translation (`pulumi._types`), which plan pays and it does not.

The ratio plan/floor is gpuplane's own cost (config parsing, components, value rendering, capacity
summary, deploy simulator, output formatting) on top of what any program registering the same graph
pays. Times are this process's CPU seconds (`time.process_time`: the machine is shared, and wall time
mostly measured the other load), the minimum of `--repeat` runs, plan and floors taking turns. Peak
MiB is Python's allocations during one plan (tracemalloc), not the process's memory. Not a test; run it:

    .venv/bin/python benchmarks/plan_bench.py [--repeat 5] [--json benchmarks/results/plan.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "components"))

import pulumi  # noqa: E402
import pulumi.resource as presource  # noqa: E402

from gpuplane.config import parse_flat  # noqa: E402
from gpuplane.plan import Plan, deploy, load, plan_stack, stack_names  # noqa: E402
from gpuplane.plan.render import to_json  # noqa: E402
from gpuplane.plan.runner import run_program  # noqa: E402
from gpuplane.plan.stackfile import StackFile  # noqa: E402


def cli_plan(ref: str | StackFile) -> tuple[Plan, str]:
    """`gpuplane plan STACK --format json`, in-process (cli.py `cmd_plan`)."""
    stack = load(ref, ROOT) if isinstance(ref, str) else ref
    plan = plan_stack(stack)
    violations = deploy.check(plan, deploy.stated_crds(parse_flat(stack.flat_config())))
    assert not violations, violations
    return plan, to_json(plan)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def property_names(stack: str | StackFile) -> dict[tuple[str, str], list[str]]:
    """(type, name) -> the property names each resource's class registered in a plan of `stack`."""
    names: dict[tuple[str, str], list[str]] = {}
    register = presource.register_resource

    def recording(res: Any, ty: str, name: str, custom: bool, *args: Any, **kwargs: Any) -> Any:
        props = args[2] if len(args) > 2 else kwargs.get("props")
        names[(ty, name)] = [_camel(k) for k in props or {}]
        return register(res, ty, name, custom, *args, **kwargs)

    presource.register_resource = recording
    try:
        cli_plan(stack)
    finally:
        presource.register_resource = register
    return names


def replay(plan: Plan, names: dict[tuple[str, str], list[str]] | None = None) -> Callable[[], None]:
    """A program registering `plan`'s resources and outputs with the bare SDK (with `names`: each custom
    resource also registers those property names, unset ones as None)."""

    def program() -> None:
        made: dict[str, pulumi.Resource] = {}
        for r in plan.resources:
            if r.type == "pulumi:pulumi:Stack":
                continue
            opts = pulumi.ResourceOptions(parent=made.get(r.parent or ""))
            if r.custom:
                props = dict.fromkeys((names or {}).get((r.type, r.name), ()))
                made[r.urn] = pulumi.CustomResource(r.type, r.name, {**props, **r.inputs}, opts)
            else:
                made[r.urn] = pulumi.ComponentResource(r.type, r.name, None, opts)
        for key, value in plan.outputs.items():
            pulumi.export(key, value)

    return program


def best(fns: list[Callable[[], Any]], repeat: int) -> list[float]:
    """The least CPU time of each function over `repeat` rounds, the functions taking turns in each round
    (so a change in the machine's load hits all of them alike), after one warm-up round."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, spent in zip(fns, times, strict=True):
            start = time.process_time()
            fn()
            spent.append(time.process_time() - start)
    return [min(spent) for spent in times]


def generated_stack(pools: int) -> StackFile:
    config = {
        "gpuplane:platform": "gke-standard",
        "gpuplane:cluster": {"name": "bench"},
        "gpuplane:gcp": {"project": "acme-bench-01", "region": "us-central1"},
        "gpuplane:gpuPools": [
            {"name": f"pool-{i}", "gpu": "l4", "maxNodes": 4, "spot": i % 2 == 0} for i in range(pools)
        ],
    }
    return StackFile(project="gpuplane", stack=f"generated-{pools}", config=config)


def measure(name: str, ref: str | StackFile, repeat: int) -> dict[str, Any]:
    """`ref`: a shipped stack's name (each plan run then reads its file, as the CLI does) or a StackFile."""
    stack = load(ref, ROOT) if isinstance(ref, str) else ref
    plan, _ = cli_plan(ref)
    names = property_names(ref)
    floor_stack = StackFile(project=stack.project, stack=stack.stack, config={})
    full, program_only, floor, typed_floor = best(
        [
            lambda: cli_plan(ref),
            lambda: plan_stack(stack),
            lambda: run_program(floor_stack, replay(plan)),
            lambda: run_program(floor_stack, replay(plan, names)),
        ],
        repeat,
    )
    tracemalloc.start()
    plan_stack(stack)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return {
        "stack": name,
        "resources": len(plan.resources),
        "plan_s": round(full, 4),
        "program_s": round(program_only, 4),
        "floor_s": round(floor, 4),
        "typed_floor_s": round(typed_floor, 4),
        "ratio": round(full / floor, 3),
        "program_ratio": round(program_only / floor, 3),
        "typed_ratio": round(full / typed_floor, 3),
        "peak_python_mib": round(peak, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("stacks", nargs="*", help="stack names (default: every shipped stack and generated-50-pools)")
    args = parser.parse_args()
    names = args.stacks or [*stack_names(ROOT), "generated-50-pools"]
    rows = []
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{'stack':<20} {'resources':>9} {'plan s':>7} {'program s':>9} {'floor s':>7} {'typed s':>7} "
        f"{'ratio':>6} {'prog/floor':>10} {'typed ratio':>11} {'peak MiB':>8}"
    )
    for name in names:
        row = measure(name, generated_stack(50) if name == "generated-50-pools" else name, args.repeat)
        rows.append(row)
        print(
            f"{name:<20} {row['resources']:>9} {row['plan_s']:>7.3f} {row['program_s']:>9.3f} {row['floor_s']:>7.3f} "
            f"{row['typed_floor_s']:>7.3f} {row['ratio']:>6.2f} {row['program_ratio']:>10.2f} "
            f"{row['typed_ratio']:>11.2f} {row['peak_python_mib']:>8.1f}"
        )
    worst = max(rows, key=lambda r: r["ratio"])
    print(f"worst plan/floor ratio: {worst['ratio']:.2f} ({worst['stack']})")
    typed = max(rows, key=lambda r: r["typed_ratio"])
    print(f"worst plan/typed-floor ratio: {typed['typed_ratio']:.2f} ({typed['stack']})")
    print(f"load average before/after: {load_before} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        load = {"before": load_before, "after": " ".join(f"{x:.2f}" for x in os.getloadavg())}
        args.json.write_text(json.dumps({"repeat": args.repeat, "load_average": load, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
