"""The `gpuplane` subcommands. Each takes the parsed arguments and returns the exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import ConfigError
from ..errors import InputError

Command = Callable[[argparse.Namespace], int]


def emit(args: argparse.Namespace, text: str) -> None:
    """Print `text`, or write it to `-o/--output` (a bad path is an argument error, not a traceback)."""
    if not args.output:
        print(text)
        return
    try:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {args.output}: {exc.strerror or exc}", "-o/--output") from None


def to_json(doc: object) -> str:
    from ..text.jsontext import dumps

    return dumps(doc)


def _config(ref: str):  # type: ignore[no-untyped-def]
    from ..config import parse_flat
    from ..plan import load

    return parse_flat(load(ref).flat_config())


def _plan(ref: str):  # type: ignore[no-untyped-def]
    from ..plan import load, plan_stack

    return plan_stack(load(ref))


def cmd_plan(args: argparse.Namespace) -> int:
    from ..config import parse_flat
    from ..plan import deploy, load, plan_stack
    from ..plan.render import FORMATS

    if args.program:  # any Pulumi Python program, its stack's `gpuplane:existingCrds` stating the cluster's CRDs
        from ..plan.project import plan_program

        try:
            plan, crds = plan_program(args.program, args.stack_file or args.stack, args.preview)
        except ConfigError as exc:  # about --program DIR or which stack, not a config key
            if {key for key, _ in exc.problems} - {"program", "stack"}:
                raise
            ((key, reason), *_) = exc.problems
            raise InputError(reason, "--program" if key == "program" else "--stack") from None
    else:
        if not args.stack:
            raise InputError("give a STACK, or --program DIR", "STACK")
        from ..plan.mocks_preview import PreviewMocks

        stack = load(args.stack)
        mocks = PreviewMocks() if args.preview else None
        plan, crds = plan_stack(stack, mocks), deploy.stated_crds(parse_flat(stack.flat_config()))
    # `--check` also runs a program that read live state (EKS node group sizes) a second time against what
    # the first `up` left; a plain plan trusts those reads (a second run would double its time). A preview's
    # computed values are unknown, which the simulator cannot judge: it checks the full plan.
    violations = [] if args.no_check or args.preview else deploy.check(plan, crds, rerun=args.check)
    if not args.check:
        emit(args, FORMATS[args.format](plan))
    if violations:
        print(f"deploy check: {len(violations)} problem(s) a real `pulumi up` would hit:", file=sys.stderr)
        for v in violations:
            print(str(v), file=sys.stderr)
        return 1
    if args.check:
        lines = [f"deploy check passed for {len(plan.resources)} resources:"]
        lines += [f"  {name}: {what}" for name, what in deploy.RULES.items()]
        emit(args, "\n".join(lines))
    return 0


def cmd_scrape_config(args: argparse.Namespace) -> int:
    emit(args, str(_plan(args.stack).outputs["scrapeConfig"]).rstrip("\n"))
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    emit(args, str(_plan(args.stack).outputs["prometheusRules"]).rstrip("\n"))
    return 0


def cmd_placement(args: argparse.Namespace) -> int:
    import yaml

    from ..scheduling.placement import placement

    cfg = _config(args.stack)
    claims = {"job": args.job, "mig": args.mig, "selector": args.selector, "compute_domain": args.compute_domain}
    try:
        if args.queue:
            from ..kueue.placement import queued_placement

            fragment = queued_placement(
                cfg, args.pool, args.gpus, args.queue, args.pod_group, args.group_size, **claims
            )
        else:
            fragment = placement(cfg, args.pool, args.gpus, **claims)
    except ConfigError as exc:  # about an argument (POOL, --gpus, --queue, ...), not the stack's config
        which, reason = exc.problems[0]
        flags = {
            "pool": "POOL",
            "gpus": "--gpus",
            "queue": "--queue",
            "pod-group": "--pod-group",
            "mig": "--mig",
            "selector": "--selector",
            "job": "--job",
            "nodes": "--compute-domain",
        }
        raise InputError(reason, flags.get(which, which)) from None
    emit(args, to_json(fragment) if args.format == "json" else yaml.safe_dump(fragment, sort_keys=False).rstrip())
    return 0


def cmd_capacity(args: argparse.Namespace) -> int:
    from ..stack.capacity import summary, table

    cfg = _config(args.stack)
    s = summary(cfg)
    text = table(s)
    if cfg.queues is not None:  # each team's quota against each pool's ceiling
        from ..kueue.stack import quota_table

        text += "\n\n" + quota_table(cfg)
    emit(args, to_json(s) if args.format == "json" else text)
    return 0


def cmd_lifecycle(args: argparse.Namespace) -> int:
    """Exit 1 when a routine change would fail or replace a cluster."""
    from ..config.base import suggest
    from ..plan import load
    from ..plan.routine import CATALOGUE, check_stack, to_text

    ids = [ch.id for ch in CATALOGUE]
    bad = [i for i in args.change or [] if i not in ids]
    if bad:
        hints = "; ".join(f"{i!r}{suggest(i, ids)}" for i in bad)
        raise InputError(f"unknown routine change {hints} (known: {', '.join(ids)})", "--change")
    changes = tuple(ch for ch in CATALOGUE if not args.change or ch.id in args.change)
    stack = load(args.stack)
    outcomes = check_stack(stack, changes)
    if args.format == "json":
        emit(args, to_json({"stack": stack.stack, "changes": [o.to_json() for o in outcomes]}))
    else:
        emit(args, to_text(stack.stack, outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


def cmd_diff(args: argparse.Namespace) -> int:
    from ..plan.diff import diff, load_plan, to_text

    if args.git:
        if args.base or args.head:
            raise InputError("give BASE.json HEAD.json or --git REV STACK, not both", "--git")
        from .gitdiff import plans_at

        base, head = plans_at(*args.git)
    else:
        if not (args.base and args.head):
            raise InputError("give BASE.json HEAD.json, or --git REV STACK", "BASE HEAD")
        base, head = load_plan(args.base), load_plan(args.head)
    d = diff(base, head, match_names=args.match_names)
    emit(args, to_json(d.to_json()) if args.format == "json" else to_text(d))
    return 3 if args.fail_on_disruptive and d.disruptive else 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Exit 1 when a check failed or left no output."""
    from ..health.results import judge, split_log, table
    from ..health.validation import checks

    cfg = _config(args.stack)
    expected = checks(cfg)
    if not expected:
        raise InputError("the stack runs no checks: set gpuplane:validation.enabled (or smokeTest.enabled)", "STACK")
    try:
        text = sys.stdin.read() if args.log == "-" else Path(args.log).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot read {args.log}: {exc.strerror or exc}", "--from") from None
    outputs = split_log(text.splitlines(), [p.name for p in cfg.gpuPools])
    if not outputs:
        raise InputError(
            f"no check output in {args.log}: it needs `kubectl logs --prefix` lines of the checks' pods "
            "(docs/health.md)",
            "--from",
        )
    verdicts = judge(expected, outputs)
    if args.format == "json":
        emit(args, to_json({"stack": args.stack, "checks": [v.to_json() for v in verdicts]}))
    else:
        emit(args, table(verdicts))
    return 0 if all(v.ok for v in verdicts) else 1


def cmd_conformance(args: argparse.Namespace) -> int:
    from ..catalog.conformance import SOURCE, VERSION
    from ..health.conformance import report, to_text

    cfg = _config(args.stack)
    rows = report(cfg, _plan(args.stack).resources)
    if args.format == "json":
        emit(args, to_json({"stack": args.stack, "checklist": VERSION, "source": SOURCE, "requirements": rows}))
    else:
        emit(args, to_text(args.stack, rows))
    return 0


def cmd_rightsize(args: argparse.Namespace) -> int:
    import math
    import time

    from .. import rightsize

    url = rightsize.check_url(args.prometheus)
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise InputError(f"{args.timeout:g} is not a positive number of seconds", "--timeout")
    cfg = _config(args.stack)
    s = rightsize.settings(cfg, args.window, args.margin, args.interruptible, args.at, time.time())
    report = rightsize.run(args.stack, cfg, rightsize.Prometheus(url, args.timeout), s)
    emit(args, to_json(rightsize.to_json(report)) if args.format == "json" else rightsize.to_text(report))
    return 0


def cmd_gpus(args: argparse.Namespace) -> int:
    from ..catalog import GPUS

    if args.format == "json":
        rows: list[dict[str, Any]] = [
            {
                "name": g.name,
                "memoryGib": g.memory_gib,
                "migCapable": g.mig_capable,
                "gcpAccelerator": g.gcp.accelerator if g.gcp else None,
                "awsFamilies": list(g.aws.families) if g.aws else [],
            }
            for g in GPUS.values()
        ]
        emit(args, to_json(rows))
        return 0
    lines = [f"{'gpu':<10} {'GiB':>4}  {'MIG':<4} {'GCP accelerator':<20} AWS families"]
    for g in GPUS.values():
        gcp = g.gcp.accelerator if g.gcp else "-"
        aws = ", ".join(g.aws.families) if g.aws else "-"
        lines.append(f"{g.name:<10} {g.memory_gib:>4}  {'yes' if g.mig_capable else 'no':<4} {gcp:<20} {aws}")
    emit(args, "\n".join(lines))
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    from ..catalog.platforms import matrix_markdown

    if args.stack:
        cfg = _config(args.stack)
        emit(args, f"{matrix_markdown((cfg.platform,))}\n\n{cfg.platform_spec.description}")
    else:
        emit(args, matrix_markdown())
    return 0


def cmd_stacks(args: argparse.Namespace) -> int:
    from ..plan.stackfile import project_stacks

    names = project_stacks()
    emit(args, to_json(names) if args.format == "json" else "\n".join(names))
    return 0
