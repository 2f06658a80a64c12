"""Benchmark: planning a generated 20-region fleet as a stack per region plus a central stack (`gpuplane fleet
plan`, `gpuplane.fleet.stacks.plan_fleet`) against its floor, the same 20 regions planned as 20 ordinary
single-region stacks in parallel on the same number of processes.

The fleet is `gcp-fleet`'s settings over the first 20 GCP regions (alphabetically) that offer RTX PRO 6000s or L4s
(the GPU catalog), 8 of each per region, the totals spread over all of them. Both sides run the deploy simulator on
every stack and
skip the lifecycle checks (`--lifecycle` adds them to the fleet side only). Wall seconds (the point is concurrency),
the minimum of `--repeat` rounds, the two sides taking turns. Not a test; run it:

    .venv/bin/python benchmarks/fleet_bench.py [--regions 20] [--jobs 2] [--repeat 3] \
        [--json benchmarks/results/fleet.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "components"))

from gpuplane.catalog.availability import GCP_ZONES  # noqa: E402
from gpuplane.fleet.stacks import PartReport, expand, plan_fleet, plan_part, processes  # noqa: E402
from gpuplane.plan import load  # noqa: E402
from gpuplane.plan.stackfile import StackFile  # noqa: E402

POOLS = {"inference": ("rtx-pro-6000", "nvidia-rtx-pro-6000"), "small": ("l4", "nvidia-l4")}
"""Pool -> (GPU, GCP accelerator): together they are offered in more regions than either (the GPU catalog)."""
QUOTA = 8
"""GPUs of each type per region."""


def generated_fleet(regions: int) -> StackFile:
    """`gcp-fleet`'s settings over the first `regions` GCP regions (alphabetically) where one of `POOLS`' GPUs is
    offered, `QUOTA` of each per region, the totals spreading everything the regions offer."""
    base = load("gcp-fleet", ROOT)
    offered = sorted(set().union(*(GCP_ZONES[acc] for _, acc in POOLS.values())))[:regions]
    if len(offered) < regions:
        raise SystemExit(f"the catalog lists {len(offered)} regions with {', '.join(POOLS)}'s GPUs, not {regions}")
    config = dict(base.config)
    config["gpuplane:fleet"] = {
        "regions": [{"region": r, "quota": {gpu: QUOTA for gpu, _ in POOLS.values()}} for r in offered],
        "totals": {pool: QUOTA * sum(1 for r in offered if r in GCP_ZONES[acc]) for pool, (_, acc) in POOLS.items()},
    }
    config["gpuplane:gpuPools"] = [
        {"name": pool, "gpu": gpu, "spot": True, "maxNodes": 1} for pool, (gpu, _) in POOLS.items()
    ]
    config["gpuplane:cluster"] = {"name": "fl", "releaseChannel": "REGULAR"}
    return StackFile(project=base.project, stack=f"fleet{regions}", config=config)


def single_region_stacks(fleet: StackFile) -> list[StackFile]:
    """Each region as an ordinary stack: its own region, zones and share, no fleet."""
    from gpuplane.config import parse_flat
    from gpuplane.stack.fleet import region_configs

    cfg = parse_flat(fleet.flat_config())
    out = []
    for region, rcfg in region_configs(cfg):
        config = {k: v for k, v in fleet.config.items() if k != "gpuplane:fleet"}
        config["gpuplane:cluster"] = {**fleet.config["gpuplane:cluster"], "name": rcfg.cluster.name}
        assert rcfg.gcp is not None
        config["gpuplane:gcp"] = {**fleet.config["gpuplane:gcp"], "region": region, "zones": list(rcfg.gcp.zones)}
        config["gpuplane:gpuPools"] = [
            {"name": p.name, "gpu": p.gpu, "spot": p.spot, "maxNodes": p.maxNodes} for p in rcfg.gpuPools
        ]
        out.append(StackFile(project=fleet.project, stack=f"{fleet.stack}-single-{region}", config=config))
    return out


def _plan_single(sf: StackFile) -> PartReport:
    from gpuplane.fleet.stacks import FleetStack

    return plan_part(sf.project, FleetStack(sf.stack, "single", sf.config), lifecycle=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--regions", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lifecycle", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    fleet = generated_fleet(args.regions)
    singles = single_region_stacks(fleet)
    fleet_s, single_s = [], []
    reports: list[PartReport] = []
    with processes(args.jobs) as pool:
        list(pool.map(_plan_single, singles[: args.jobs]))  # warm the workers' imports
        for _ in range(args.repeat):
            t = time.perf_counter()
            reports = plan_fleet(fleet, lifecycle=args.lifecycle, executor=pool)
            fleet_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            done = list(pool.map(_plan_single, singles))
            single_s.append(time.perf_counter() - t)
            assert all(r.ok for r in done), [r.to_json() for r in done if not r.ok]
    assert all(r.ok for r in reports), [r.to_json() for r in reports if not r.ok]
    result: dict[str, Any] = {
        "regions": args.regions,
        "stacks": len(expand(fleet)),
        "jobs": args.jobs,
        "lifecycle": args.lifecycle,
        "resources": sum(r.resources for r in reports),
        "fleet_plan_s": round(min(fleet_s), 2),
        "single_region_plans_s": round(min(single_s), 2),
        "ratio": round(min(fleet_s) / min(single_s), 2),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
