"""`gpuplane fleet`: a fleet stack as a stack per region plus a central one (docs/fleets.md).

- `gpuplane fleet stacks FLEET [--write DIR]`: the parts and their stack files;
- `gpuplane fleet plan FLEET`: every part planned offline (regions concurrently), each through the deploy simulator
  and the lifecycle checks, as one table (exit 1 when a part fails);
- `gpuplane fleet up|preview FLEET`: the parts run through the Pulumi Automation API (needs the Pulumi CLI).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import yaml

from ..errors import InputError
from .commands import emit, to_json


def cmd_fleet_stacks(args: argparse.Namespace) -> int:
    from ..fleet.stacks import expand
    from ..plan import load

    sf = load(args.stack)
    parts = expand(sf)
    if args.write:
        folder = Path(args.write)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for part in parts:
                path = folder / f"Pulumi.{part.name}.yaml"
                # an existing file keeps its own keys (secrets provider, salt, its secure values): config merged in
                old = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
                kept: dict[str, object] = old if isinstance(old, dict) else {}
                kept["config"] = {**(kept.get("config") or {}), **part.config}  # type: ignore[dict-item]
                text = f"# Part of the fleet {sf.stack} (gpuplane fleet stacks {sf.stack}).\n"
                path.write_text(text + yaml.safe_dump(kept, sort_keys=False), encoding="utf-8")
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"cannot write {args.write}: {exc}", "--write") from None
    listed = [{"stack": p.name, "region": p.region, "reads": list(p.reads), "secrets": list(p.secrets)} for p in parts]
    if args.format == "json":
        emit(args, to_json(listed))
    else:
        lines = [
            f"{p.name}  ({p.region or 'central'}{'; reads ' + ', '.join(p.reads) if p.reads else ''})" for p in parts
        ]
        if parts and parts[0].secrets:
            lines.append(
                f"encrypted keys to set in each part: {', '.join(parts[0].secrets)} (pulumi config set --secret)"
            )
        emit(args, "\n".join(lines))
    return 0


def cmd_fleet_plan(args: argparse.Namespace) -> int:
    from ..fleet.stacks import plan_fleet, report_table
    from ..plan import load

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"must be at least 1, not {args.jobs}", "--jobs")
    reports = plan_fleet(load(args.stack), lifecycle=not args.no_lifecycle, jobs=args.jobs)
    if args.format == "json":
        emit(args, to_json({"fleet": args.stack, "stacks": [r.to_json() for r in reports]}))
    else:
        details = [f"{r.stack}: {line}" for r in reports for line in (*r.violations, *r.lifecycle)]
        emit(args, "\n".join([report_table(reports), *details]))
    return 0 if all(r.ok for r in reports) else 1


def cmd_fleet_run(args: argparse.Namespace) -> int:
    """`up` or `preview` every part through the Automation API; exit 1 when a part fails."""
    import shutil

    from ..fleet.run import automation_workspace, run_fleet, summary_table
    from ..fleet.stacks import expand
    from ..plan import load
    from ..plan.stackfile import find_project_dir

    if args.parallelism < 1:
        raise InputError(f"must be at least 1, not {args.parallelism}", "--parallelism")
    sf = load(args.stack)
    parts = expand(sf)
    regions = [p.region for p in parts if p.region]
    order = [r for r in (args.order or "").split(",") if r]
    bad = [r for r in order if r not in regions]
    if bad:
        raise InputError(f"not regions of the fleet: {', '.join(bad)} (regions: {', '.join(regions)})", "--order")
    if shutil.which("pulumi") is None:
        raise InputError(
            "needs the Pulumi CLI (the Automation API runs it); `gpuplane fleet plan` plans the parts offline",
            args.fleet_command,
        )
    project = find_project_dir(sf.path.parent if sf.path else Path.cwd()) or Path.cwd()
    try:
        workspace = automation_workspace(project, sf.project)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot use the project in {project}: {exc}", args.fleet_command) from None
    try:
        result = run_fleet(
            parts,
            args.fleet_command,
            workspace=workspace,
            parallelism=args.parallelism,
            order=order or None,
            stop_on_failure=not args.keep_going,
            on_event=lambda e: print(f"[{e.stack}] {e.text}") if e.kind == "output" and args.verbose else None,
        )
    except ValueError as exc:
        raise InputError(str(exc), args.fleet_command) from None
    emit(args, summary_table(result))
    return 0 if result.ok else 1


def cmd_fleet_migrate(args: argparse.Namespace) -> int:
    """Split a fleet stack's `pulumi stack export` into one state file per region stack (`pulumi stack import`)."""
    import json

    from ..fleet.migrate import dangling, left_behind, split
    from ..fleet.stacks import expand
    from ..plan import load

    sf = load(args.stack)
    regions = [p for p in expand(sf) if p.region]
    try:
        exported = json.loads(Path(args.state).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {args.state} as `pulumi stack export` JSON: {exc}", "--state") from None
    if not isinstance(exported, dict) or not isinstance(exported.get("deployment"), dict):
        raise InputError(f"{args.state} has no `deployment`: give `pulumi stack export` output", "--state")
    cluster_cfg = sf.config.get("gpuplane:cluster")
    cluster = str(cluster_cfg.get("name", "")) if isinstance(cluster_cfg, dict) else ""
    deployment = exported["deployment"]
    try:
        parts = split(
            deployment,
            sf.stack,
            {p.region: f"{cluster}-{p.region}" for p in regions if p.region},
            {p.region: p.name for p in regions if p.region},
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"cannot split {args.state}: {exc}", "--state") from None
    problems = [f"{r}: refers before or without {ref}" for r, d in parts.items() for ref in dangling(d)]
    problems += [f"no region takes {u}" for u in left_behind(deployment, parts)]
    if problems:  # nothing written: a partial migration would leave resources behind
        raise InputError(
            "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""), "--state"
        )
    folder = Path(args.write)
    lines = []
    for part in regions:
        assert part.region is not None
        doc = {**exported, "deployment": parts[part.region]}
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{part.name}.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {args.write}: {exc.strerror or exc}", "--write") from None
        count = len(parts[part.region]["resources"]) - 1
        lines.append(f"{part.name}: {count} resources -> {folder / (part.name + '.json')}")
    emit(args, "\n".join(lines))
    return 0


def add_fleet(sub: argparse._SubParsersAction, command: Callable[..., argparse.ArgumentParser]) -> None:  # type: ignore[type-arg]
    """The `fleet` command and its subcommands (`command`: the CLI's shared-argument helper)."""
    fleet = sub.add_parser("fleet", help="a fleet as a stack per region plus a central stack (docs/fleets.md)")
    inner = fleet.add_subparsers(dest="fleet_command", required=True, metavar="SUBCOMMAND")
    st = command(
        inner,
        "stacks",
        cmd_fleet_stacks,
        "the fleet's parts: a stack per region, then the central one",
        ("text", "json"),
    )
    st.add_argument("--write", metavar="DIR", help="write each part's Pulumi.<stack>.yaml into DIR")
    pl = command(
        inner,
        "plan",
        cmd_fleet_plan,
        "plan every part offline (regions concurrently) with the deploy simulator and lifecycle checks",
        ("table", "json"),
    )
    pl.add_argument("--no-lifecycle", action="store_true", help="skip the lifecycle checks (much faster)")
    pl.add_argument("--jobs", type=int, metavar="N", help="processes for the regions (default: the CPU count)")
    mg = command(
        inner,
        "migrate",
        cmd_fleet_migrate,
        "split the fleet stack's `pulumi stack export` into a state file per region stack (docs/fleets.md)",
    )
    mg.add_argument("--state", required=True, metavar="FILE", help="`pulumi stack export` of the fleet stack")
    mg.add_argument("--write", required=True, metavar="DIR", help="where to write <fleet>-<region>.json")
    for op, what in (("preview", "preview"), ("up", "update")):
        run = command(inner, op, cmd_fleet_run, f"{what} every part through the Pulumi Automation API (regions first)")
        run.add_argument("--parallelism", type=int, default=4, metavar="N", help="stacks at once (default 4)")
        run.add_argument(
            "--order", metavar="REGION,...", help="regions in the order to start them (default: the fleet's)"
        )
        run.add_argument(
            "--keep-going", action="store_true", help="after a failure, go on with the stacks that don't read it"
        )
        run.add_argument("-v", "--verbose", action="store_true", help="print every stack's pulumi output")
