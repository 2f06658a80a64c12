"""A fleet stack as a stack per region plus a central stack (docs/fleets.md, "A stack per region"), and their offline
plan: every part planned in its own process, the regions concurrently, then the central one with the regions' outputs
as its stack references; each through the deploy simulator and, unless skipped, the lifecycle checks.

```python
from gpuplane.fleet.stacks import expand, plan_fleet
parts = expand(load("gcp-fleet"))        # gcp-fleet-us-central1, gcp-fleet-us-east4, ..., gcp-fleet-central
report = plan_fleet(load("gcp-fleet"))   # one row per part
```
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..config import parse_flat
from ..plan.stackfile import StackFile
from ..stack.parts import CENTRAL, part_name, references_for_central

PART_KEY = "gpuplane:fleetStack"
REFERENCES_KEY = "gpuplane:stackReferences"


@dataclass(frozen=True)
class FleetStack:
    """One part of a fleet: a Pulumi stack of its own."""

    name: str
    """The Pulumi stack name, e.g. `gcp-fleet-us-east4` or `gcp-fleet-central`."""
    region: str | None
    """None for the central stack."""
    config: dict[str, Any]
    """Its `config:` map as a `Pulumi.<stack>.yaml` holds it: the fleet's own, plus `gpuplane:fleetStack`."""
    reads: tuple[str, ...] = ()
    """Stacks whose outputs it reads through `pulumi.StackReference`: they go first."""
    secrets: tuple[str, ...] = ()
    """The fleet stack's encrypted (`secure:`) keys, left out of `config`: only the stack that encrypted a value can
    read it, so each part keeps its own (`pulumi config set --secret KEY --stack PART`)."""

    def stack_file(self, project: str) -> StackFile:
        return StackFile(project=project, stack=self.name, config=dict(self.config))


def expand(sf: StackFile) -> list[FleetStack]:
    """The parts of a fleet stack: one per region (in the fleet's order), then the central one, which reads them all.
    Raises `ConfigError` for a stack that is not a valid fleet (or already a part of one)."""
    from ..config import ConfigError

    cfg = parse_flat(sf.flat_config())
    if cfg.fleet is None or cfg.fleetStack is not None:
        why = "is a part of a fleet already" if cfg.fleetStack else "has no gpuplane:fleet"
        raise ConfigError([(sf.stack, f"{why}: nothing to split into a stack per region")])
    secrets = tuple(sf.secret_keys())
    base = {k: v for k, v in sf.config.items() if k not in (PART_KEY, REFERENCES_KEY, *secrets)}
    regions = [
        FleetStack(part_name(sf.stack, r.region), r.region, {**base, PART_KEY: r.region}, (), secrets)
        for r in cfg.fleet.regions
    ]
    central = FleetStack(
        part_name(sf.stack, CENTRAL), None, {**base, PART_KEY: CENTRAL}, tuple(s.name for s in regions), secrets
    )
    return [*regions, central]


@dataclass
class PartReport:
    """What planning one part found."""

    stack: str
    region: str | None
    resources: int = 0
    violations: list[str] = field(default_factory=list)
    """Deploy-simulator findings (`gpuplane plan --check`)."""
    lifecycle: list[str] = field(default_factory=list)
    """Routine changes that fail (`gpuplane lifecycle`); empty also when skipped."""
    lifecycle_checked: bool = False
    outputs: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str = ""

    @property
    def ok(self) -> bool:
        return not (self.violations or self.lifecycle or self.error)

    def to_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "region": self.region,
            "resources": self.resources,
            "violations": self.violations,
            "lifecycle": None if not self.lifecycle_checked else self.lifecycle,
            "seconds": round(self.seconds, 2),
            "ok": self.ok,
            **({"error": self.error} if self.error else {}),
        }


def plan_part(project: str, part: FleetStack, lifecycle: bool = True) -> PartReport:
    """Plan one part offline (in whichever process calls it): resources, deploy checks and lifecycle failures."""
    from ..config import ConfigError
    from ..config.load import parse_flat
    from ..plan import plan_stack
    from ..plan.deploy import check, stated_crds
    from ..plan.routine import check_stack

    started = time.perf_counter()
    report = PartReport(part.name, part.region)
    sf = part.stack_file(project)
    try:
        plan = plan_stack(sf)
        report.resources = sum(1 for r in plan.resources if r.custom)
        crds = stated_crds(parse_flat(sf.flat_config()))
        report.violations = [f"[{v.rule}] {v.urn}: {v.message}" for v in check(plan, crds)]
        report.outputs = dict(plan.outputs)
        if lifecycle and part.region is not None:  # the central part has no cloud resources of its own
            report.lifecycle_checked = True
            report.lifecycle = [f"{o.change}: {f}" for o in check_stack(sf) for f in o.failures]
    except ConfigError as exc:
        report.error = str(exc)
    report.seconds = time.perf_counter() - started
    return report


def plan_fleet(
    sf: StackFile, lifecycle: bool = True, jobs: int | None = None, executor: Executor | None = None
) -> list[PartReport]:
    """Every part of the fleet stack planned offline: the regions concurrently (`jobs` processes, default the CPU
    count), then the central one with their outputs as its stack references."""
    parts = expand(sf)
    regions, central = parts[:-1], parts[-1]
    own = executor is None
    pool = executor or processes(jobs)
    try:
        done = list(pool.map(plan_part, [sf.project] * len(regions), regions, [lifecycle] * len(regions)))
        outputs = {r.region: r.outputs for r in done if r.region is not None and not r.error}
        refs = references_for_central(sf.project, sf.stack, outputs)
        wired = FleetStack(central.name, None, {**central.config, REFERENCES_KEY: refs}, central.reads)
        done.append(plan_part(sf.project, wired, lifecycle=False))
    finally:
        if own:
            pool.shutdown()
    return done


def processes(jobs: int | None = None) -> ProcessPoolExecutor:
    """Worker processes for planning parts. Started by a fork server, not forked from this process: a process that
    has run a plan holds the Pulumi SDK's gRPC threads and event loop, and a child forked from it can hang."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1, mp_context=multiprocessing.get_context(method))


def report_table(reports: Sequence[PartReport]) -> str:
    """One line per part: stack, region, resources, deploy findings, lifecycle, seconds."""
    rows = [("stack", "region", "resources", "deploy check", "lifecycle", "seconds")]
    for r in reports:
        deploy = r.error.splitlines()[0] if r.error else f"{len(r.violations)} finding(s)" if r.violations else "passed"
        life = "skipped" if not r.lifecycle_checked else f"{len(r.lifecycle)} failure(s)" if r.lifecycle else "passed"
        rows.append((r.stack, r.region or CENTRAL, str(r.resources), deploy, life, f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)
