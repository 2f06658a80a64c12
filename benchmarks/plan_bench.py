"""Benchmark: `gpuplane plan` of every shipped stack (and a generated 50-pool stack) against a floor
program, the bare Pulumi SDK under the same mocks registering the same number of resources of the
same types. Prints wall time, the ratio to the floor, and peak memory. Not a test; run it:

    .venv/bin/python benchmarks/plan_bench.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "components"))

import pulumi  # noqa: E402
from pulumi.runtime.stack import run_pulumi_func  # noqa: E402
from pulumi.runtime.sync_await import _sync_await  # noqa: E402

from gpuplane.plan import load, plan_stack, stack_names  # noqa: E402
from gpuplane.plan.mocks import PlanMocks  # noqa: E402
from gpuplane.plan.runner import install  # noqa: E402
from gpuplane.plan.stackfile import StackFile  # noqa: E402


class Bare(pulumi.CustomResource):
    def __init__(self, name: str, type_: str) -> None:
        super().__init__(type_, name, {"n": 1})


def floor(types: Counter[str]) -> None:
    """Register the same number of resources of the same types, with no gpuplane logic."""
    for type_, n in types.items():
        if type_.startswith("pulumi:"):
            continue
        for i in range(n):
            Bare(f"{type_.replace(':', '-').replace('/', '-')}-{i}", type_)


def time_it(fn, repeat: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    walls, peaks = [], []
    for _ in range(repeat):
        tracemalloc.start()
        start = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - start)
        peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
        tracemalloc.stop()
    return statistics.median(walls), max(peaks)


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    stacks = [(name, load(name, ROOT)) for name in stack_names(ROOT)] + [("generated-50-pools", generated_stack(50))]
    print(f"{'stack':<22} {'resources':>9} {'plan s':>8} {'floor s':>8} {'ratio':>6} {'peak MiB':>9}")
    for name, stack in stacks:
        plan = plan_stack(stack)
        types = Counter(r.type for r in plan.resources)
        wall, peak = time_it(lambda stack=stack: plan_stack(stack), args.repeat)

        def run_floor(types: Counter[str] = types) -> None:
            install(StackFile(project="gpuplane", stack="floor", config={}), PlanMocks())
            _sync_await(run_pulumi_func(lambda: floor(types)))

        floor_wall, _ = time_it(run_floor, args.repeat)
        print(
            f"{name:<22} {len(plan.resources):>9} {wall:>8.3f} {floor_wall:>8.3f} "
            f"{wall / floor_wall:>6.2f} {peak:>9.1f}"
        )


if __name__ == "__main__":
    main()
