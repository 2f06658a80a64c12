"""Benchmark: the offline plan of every shipped stack (and a generated 50-pool stack) against a floor.

- plan: what `gpuplane plan STACK --format json` does in-process (cli/commands.py `cmd_plan`): read the
  stack file, validate the config, run the program under the mocks, run the deploy simulator, render the
  JSON.
- floor: a replay of the same registrations through the Pulumi SDK with no gpuplane code in between
  (`replay` with what `registrations` recorded at `pulumi.runtime.resource.register_resource`): each custom
  resource an instance of the provider class that registered it, with the same property names in the same
  input type (a provider class registers every input and output property, so the SDK makes the same
  Outputs and applies the same type and name metadata), the same values (secrets as secrets), and the
  options the SDK received (the class's version, aliases and secret outputs, gpuplane's ignoreChanges and
  protect) with the same parent, provider(s) and dependencies; each component registers the outputs it
  registered; the same stack outputs. Before timing, `same_registrations` checks that the engine receives
  what it received from the plan. It runs under the same mocks and the same runner
  (`gpuplane.plan.runner.run_program`: its own event loop and GC policy), in the same process right after
  the plan, so the same provider modules are imported; neither side's timing includes imports (one
  warm-up run each first), and the replay is prepared before the timing. What it leaves out is gpuplane:
  config, components, the Output plumbing between resources (values arrive as plain data, so the engine
  gets no per-property dependencies; `depends_on` carries the same edges), rendering, the deploy check.
- inputs floor (reported, not the target): the same resources registered as plain `CustomResource`s with
  only their inputs, no dependencies and no component outputs. It skips what the provider classes
  themselves cost (an Output for every property: 402 Outputs for gcp-autopilot's 10 resources against
  36), which any program using the provider SDKs pays.

The ratio plan/floor is gpuplane's own cost (config parsing, components, the Output plumbing between
resources, value rendering, capacity summary, deploy simulator, output formatting) on top of what any
program registering the same resources through the same provider classes pays. Times are this process's
CPU seconds (`time.process_time`: the machine is shared, and wall time mostly measured the other load),
the minimum of `--repeat` rounds (up to five times as many for a stack that plans in under 0.1 s, where a
round is cheap and the machine's noise is relatively larger), plan and floors taking turns. Peak MiB is
Python's allocations during one plan (tracemalloc), not the process's memory. Not a test; run it:

    .venv/bin/python benchmarks/plan_bench.py [--repeat 25] [--json benchmarks/results/plan.json]
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "components"))

import pulumi  # noqa: E402
import pulumi.resource as presource  # noqa: E402
from pulumi import _types as ptypes  # noqa: E402

from gpuplane.config import parse_flat  # noqa: E402
from gpuplane.plan import Plan, deploy, load, plan_stack, stack_names  # noqa: E402
from gpuplane.plan.deploy.graph import provider_urn  # noqa: E402
from gpuplane.plan.monitor import SECRET  # noqa: E402
from gpuplane.plan.render import to_json  # noqa: E402
from gpuplane.plan.runner import run_program  # noqa: E402
from gpuplane.plan.stackfile import StackFile  # noqa: E402


def cli_plan(ref: str | StackFile) -> tuple[Plan, str]:
    """`gpuplane plan STACK --format json`, in-process (cli/commands.py `cmd_plan`: the same steps)."""
    stack = load(ref, ROOT) if isinstance(ref, str) else ref
    plan = plan_stack(stack)
    violations = deploy.check(plan, deploy.stated_crds(parse_flat(stack.flat_config())), rerun=False)
    assert not violations, violations
    return plan, to_json(plan)


@dataclass(frozen=True)
class Registered:
    """How the plan's program registered one resource: the Python class, whether it is a remote component,
    the property names it passed to the SDK and the input type they came in (a provider class passes an
    instance of its `...Args` type holding every input and output property by Python name, unset ones as
    None; the SDK translates the names with that type's metadata)."""

    cls: type[Any]
    remote: bool
    keys: tuple[str, ...]
    args_type: type[Any] | None
    opts: pulumi.ResourceOptions | None = None
    """The options the SDK received (a provider class merges its own: version, aliases, secret outputs)."""


def registrations(stack: str | StackFile) -> dict[tuple[str, str], Registered]:
    """(type, name) -> how each resource was registered in a plan of `stack` (recorded at the SDK's
    `pulumi.runtime.resource.register_resource`)."""
    seen: dict[tuple[str, str], Registered] = {}
    register = presource.register_resource  # type: ignore[attr-defined]

    def recording(res: Any, ty: str, name: str, custom: bool, *args: Any, **kwargs: Any) -> Any:
        remote = bool(args[0] if args else kwargs.get("remote"))
        props = args[2] if len(args) > 2 else kwargs.get("props")
        typ = args[4] if len(args) > 4 else kwargs.get("typ")
        opts = args[3] if len(args) > 3 else kwargs.get("opts")
        seen[(ty, name)] = Registered(type(res), remote, tuple(props or {}), typ, copy.copy(opts))
        return register(res, ty, name, custom, *args, **kwargs)

    presource.register_resource = recording  # type: ignore[attr-defined]
    try:
        cli_plan(stack)
    finally:
        presource.register_resource = register  # type: ignore[attr-defined]
    return seen


def _props(r: Any, how: Registered | None) -> dict[str, Any]:
    """The resource's inputs (plain data) under the property names its class registered (a provider class
    registers every input and output property by its Python name, unset ones as None; the SDK translates
    the names with the class's metadata): each engine (camelCase) value is given under the Python name the
    class has for it, the other registered names as None, and any input no registered name covers under
    its engine name."""
    if how is None:
        return dict(r.inputs)
    inputs = r.inputs
    to_engine = ptypes.resource_py_to_pulumi_names(how.cls) if issubclass(how.cls, pulumi.CustomResource) else {}
    if how.args_type is not None:
        to_engine = {**to_engine, **ptypes.input_type_py_to_pulumi_names(how.args_type)}
    props = {key: inputs.get(to_engine.get(key, _camel(key))) for key in how.keys}
    covered = {to_engine.get(key, _camel(key)) for key in how.keys}
    props.update({k: v for k, v in inputs.items() if k not in covered and k not in props})
    return props


def secret_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where `value` holds a masked secret ("[secret]" in the plan's engine view)."""
    if value == SECRET:
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in secret_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in secret_paths(v, (*path, i))]
    return []


def with_secrets(props: dict[str, Any], paths: tuple[tuple[Any, ...], ...]) -> dict[str, Any]:
    """`props` with the value at each path passed as a secret again (copied along the paths; made at replay
    time, as an Output needs the running loop)."""
    if not paths:
        return props
    out: Any = dict(props)
    for path in paths:
        node = out
        for key in path[:-1]:
            node[key] = copy.copy(node[key])
            node = node[key]
        node[path[-1]] = pulumi.Output.secret(SECRET)
    return dict(out)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class Step:
    """One registration of a replay, prepared before it runs."""

    urn: str
    token: str
    name: str
    kind: str
    """provider, custom, remote (a multi-language component) or component"""
    cls: type[Any]
    props: Any
    args_type: type[Any] | None
    parent: str | None
    depends_on: tuple[str, ...]
    provider: str | None
    providers: tuple[str, ...]
    opts: pulumi.ResourceOptions | None
    """The recorded options (their resource references replaced at replay)."""
    secrets: tuple[tuple[Any, ...], ...] = ()
    """Paths in `props` whose values the plan registered as secrets."""


def steps(plan: Plan, classes: dict[tuple[str, str], Registered] | None) -> list[Step]:
    """`plan`'s resources in an order where each comes after its parent, provider and dependencies, with
    everything a replay needs worked out beforehand (so the replay's own cost is only the SDK's)."""
    todo = [r for r in plan.resources if r.type != "pulumi:pulumi:Stack"]
    known = {r.urn for r in todo}
    out: list[Step] = []
    done: set[str] = set()
    while todo:
        waiting = []
        for r in todo:
            how = (classes or {}).get((r.type, r.name))
            deps = tuple(d for d in r.dependencies if d in known) if classes else ()
            refs = dict(r.providers) | ({"": r.provider} if r.provider else {}) if classes else {}
            uses = {pkg: provider_urn(ref) or "" for pkg, ref in refs.items()}
            if any(d not in done for d in [*deps, *uses.values(), *([r.parent] if r.parent in known else [])]):
                waiting.append(r)
                continue
            kind = (
                "provider"
                if r.type.startswith("pulumi:providers:")
                else "custom"
                if r.custom
                else "remote"
                if how is not None and how.remote
                else "component"
            )
            default = {"provider": pulumi.ProviderResource, "custom": pulumi.CustomResource}.get(kind)
            props = _props(r, how)
            args_type = how.args_type if how is not None else None
            out.append(
                Step(
                    r.urn,
                    r.type,
                    r.name,
                    kind,
                    how.cls if how is not None else default or pulumi.ComponentResource,
                    props,
                    args_type,
                    r.parent,
                    deps,
                    uses.pop("", None),
                    tuple(uses.values()),
                    how.opts if how is not None else None,
                    tuple(secret_paths(props)) if how is not None else (),
                )
            )
            done.add(r.urn)
        assert len(waiting) < len(todo), f"dependency cycle among {[r.urn for r in waiting][:3]}"
        todo = waiting
    return out


def replay(plan: Plan, classes: dict[tuple[str, str], Registered] | None = None) -> Callable[[], None]:
    """A program registering `plan`'s resources and outputs with no gpuplane code in between.

    Without `classes` (the inputs floor): each resource with its type, name, parent and inputs (plain data)
    as a plain `CustomResource`, `ProviderResource` (`pulumi:providers:*`) or `ComponentResource`.

    With `classes` (the floor): each custom resource is an instance of the provider class that registered
    it in the plan (e.g. `pulumi_gcp.container.NodePool`, made with `__new__` and initialised by the SDK's
    `CustomResource`/`ProviderResource.__init__`, so the SDK applies that class's type and name metadata
    exactly as in the plan) with the property names the class registered, in the input type it registered
    them in, and the plan's values; each resource has the plan's parent, provider(s) and dependencies
    (`depends_on`), resources are registered dependencies first, and each component registers the outputs
    it registered in the plan. `same_registrations` checks the engine receives the same. What the floor
    leaves out is gpuplane: config, components, rendering, the Output plumbing between resources."""
    prepared = steps(plan, classes)
    outputs = plan.registered_outputs if classes else {}

    def program() -> None:
        made: dict[str, pulumi.Resource] = {}
        for step in prepared:
            opts = copy.copy(step.opts) if step.opts is not None else pulumi.ResourceOptions()
            opts.parent = made.get(step.parent or "")
            opts.depends_on = [made[d] for d in step.depends_on]
            opts.provider = made[step.provider] if step.provider else None  # type: ignore[assignment]
            opts.providers = [made[p] for p in step.providers] or None  # type: ignore[misc]
            props = with_secrets(step.props, step.secrets)
            if step.args_type is not None:  # a fresh bag, as the class's `__props__`: the SDK reads its type
                props = object.__new__(step.args_type)
                props.__dict__.update(step.props)
            res: pulumi.Resource
            if step.kind == "component":
                res = pulumi.ComponentResource(step.token, step.name, None, opts)
            else:
                res = object.__new__(step.cls)
                if step.kind == "provider":
                    pulumi.ProviderResource.__init__(res, step.token.split(":")[2], step.name, props, opts)  # type: ignore[arg-type]
                elif step.kind == "custom":
                    pulumi.CustomResource.__init__(res, step.token, step.name, props, opts)  # type: ignore[arg-type]
                else:
                    pulumi.ComponentResource.__init__(res, step.token, step.name, props, opts, remote=True)  # type: ignore[arg-type]
            made[step.urn] = res
        for urn, registered in outputs.items():
            component = made.get(urn)
            if isinstance(component, pulumi.ComponentResource):
                component.register_outputs(registered)
        for key, value in plan.outputs.items():
            pulumi.export(key, value)

    return program


def best(fns: list[Callable[[], Any]], repeat: int) -> list[float]:
    """The least CPU time of each function over `repeat` rounds, the functions taking turns in each round
    (so a change in the machine's load hits all of them alike), after one warm-up round.

    Each timing includes a young-generation collection right after the call, which frees that call's own
    cycles: the runner pauses the cyclic GC during a plan, so otherwise the collection of one call's garbage
    fell into the next call's timing (the floor paid for the plan's)."""
    for fn in fns:
        fn()
    gc.collect()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, spent in zip(fns, times, strict=True):
            start = time.process_time()
            fn()
            gc.collect(0)
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


def same_registrations(plan: Plan, floor: Plan) -> list[str]:
    """Where the floor did not register what the plan registered: per URN, the inputs (as the engine sees
    them: secrets masked), custom flag, parent, provider(s), protect/retainOnDelete, ignore/replace-on
    changes, deleteBeforeReplace and dependencies (on resources the plan registered: a remote component's
    children are not registered under the mocks, though its outputs name them), the number of resources,
    the stack outputs and what each component registered as outputs."""
    known = {r.urn for r in plan.resources}
    theirs = {r.urn: r for r in floor.resources}
    problems = []
    for r in plan.resources:
        f = theirs.get(r.urn)
        if f is None:
            problems.append(f"{r.urn}: not registered")
            continue
        for what in ("inputs", "custom", "parent", "provider", "providers", "protect", "retain_on_delete"):
            if getattr(r, what) != getattr(f, what):
                problems.append(f"{r.urn}: {what} differ")
        for what in ("ignore_changes", "replace_on_changes", "delete_before_replace"):
            if getattr(r, what) != getattr(f, what):
                problems.append(f"{r.urn}: {what} differ")
        if sorted(set(r.dependencies) & known) != sorted(set(f.dependencies) & known):
            problems.append(f"{r.urn}: dependencies differ")
    if len(floor.resources) != len(plan.resources):
        problems.append(f"{len(floor.resources)} resources registered, not {len(plan.resources)}")
    if floor.outputs != plan.outputs:
        problems.append("stack outputs differ")
    stack = {r.urn for r in plan.resources if r.type == "pulumi:pulumi:Stack"}
    for urn, outputs in plan.registered_outputs.items():
        if urn not in stack and floor.registered_outputs.get(urn) != outputs:
            problems.append(f"{urn}: registered outputs differ")
    return problems


def measure(name: str, ref: str | StackFile, repeat: int) -> dict[str, Any]:
    """`ref`: a shipped stack's name (each plan run then reads its file, as the CLI does) or a StackFile."""
    stack = load(ref, ROOT) if isinstance(ref, str) else ref
    plan, _ = cli_plan(ref)
    classes = registrations(ref)
    floor_stack = StackFile(project=stack.project, stack=stack.stack, config={})
    floor_program, inputs_program = replay(plan, classes), replay(plan)  # prepared once, outside the timing
    problems = same_registrations(plan, run_program(floor_stack, floor_program))
    assert not problems, f"{name}: the floor registers something else: {problems[:5]}"
    gc.collect()
    start = time.process_time()
    cli_plan(ref)
    once = time.process_time() - start
    rounds = repeat * min(5, max(1, int(0.1 / max(once, 1e-3))))  # small stacks: more rounds, as cheap
    full, program_only, floor, inputs_floor = best(
        [
            lambda: cli_plan(ref),
            lambda: plan_stack(stack),
            lambda: run_program(floor_stack, floor_program),
            lambda: run_program(floor_stack, inputs_program),
        ],
        rounds,
    )
    tracemalloc.start()
    plan_stack(stack)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return {
        "stack": name,
        "resources": len(plan.resources),
        "rounds": rounds,
        "plan_s": round(full, 4),
        "program_s": round(program_only, 4),
        "floor_s": round(floor, 4),
        "inputs_floor_s": round(inputs_floor, 4),
        "ratio": round(full / floor, 3),
        "program_ratio": round(program_only / floor, 3),
        "inputs_ratio": round(full / inputs_floor, 3),
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
        f"{'stack':<20} {'resources':>9} {'plan s':>7} {'program s':>9} {'floor s':>7} {'ratio':>6} "
        f"{'prog/floor':>10} {'inputs floor s':>14} {'inputs ratio':>12} {'peak MiB':>8}"
    )
    for name in names:
        row = measure(name, generated_stack(50) if name == "generated-50-pools" else name, args.repeat)
        rows.append(row)
        print(
            f"{name:<20} {row['resources']:>9} {row['plan_s']:>7.3f} {row['program_s']:>9.3f} {row['floor_s']:>7.3f} "
            f"{row['ratio']:>6.2f} {row['program_ratio']:>10.2f} {row['inputs_floor_s']:>14.3f} "
            f"{row['inputs_ratio']:>12.2f} {row['peak_python_mib']:>8.1f}"
        )
    worst = max(rows, key=lambda r: r["ratio"])
    print(f"worst plan/floor ratio: {worst['ratio']:.2f} ({worst['stack']})")
    inputs = max(rows, key=lambda r: r["inputs_ratio"])
    print(f"worst plan/inputs-floor ratio: {inputs['inputs_ratio']:.2f} ({inputs['stack']})")
    print(f"load average before/after: {load_before} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        load = {"before": load_before, "after": " ".join(f"{x:.2f}" for x in os.getloadavg())}
        args.json.write_text(json.dumps({"repeat": args.repeat, "load_average": load, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
