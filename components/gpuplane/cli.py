"""`gpuplane` command line: offline plan, scrape config, catalog."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .config import ConfigError


def _plan(ref: str):  # type: ignore[no-untyped-def]
    from .plan import load, plan_stack

    return plan_stack(load(ref))


def cmd_plan(args: argparse.Namespace) -> int:
    from .config import parse_flat
    from .plan import deploy, load, plan_stack
    from .plan.render import FORMATS

    if args.program:  # any Pulumi Python program, its stack's `gpuplane:existingCrds` stating the cluster's CRDs
        from .plan.project import plan_program

        plan, crds = plan_program(args.program, args.stack_file or args.stack)
    else:
        if not args.stack:
            raise ConfigError([("stack", "give a STACK, or --program DIR")])
        stack = load(args.stack)
        plan, crds = plan_stack(stack), deploy.stated_crds(parse_flat(stack.flat_config()))
    violations = [] if args.no_check else deploy.check(plan, crds)
    if not args.check:
        text = FORMATS[args.format](plan)
        if args.output:
            Path(args.output).write_text(text + "\n")
        else:
            print(text)
    if violations:
        print(f"deploy check: {len(violations)} problem(s) a real `pulumi up` would hit:", file=sys.stderr)
        for v in violations:
            print(str(v), file=sys.stderr)
        return 1
    if args.check:
        print(f"deploy check passed for {len(plan.resources)} resources:")
        for name, what in deploy.RULES.items():
            print(f"  {name}: {what}")
    return 0


def cmd_scrape_config(args: argparse.Namespace) -> int:
    plan = _plan(args.stack)
    print(str(plan.outputs["scrapeConfig"]).rstrip("\n"))
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    plan = _plan(args.stack)
    print(str(plan.outputs["prometheusRules"]).rstrip("\n"))
    return 0


def cmd_placement(args: argparse.Namespace) -> int:
    import yaml

    from .config import parse_flat
    from .placement import placement
    from .plan import load

    cfg = parse_flat(load(args.stack).flat_config())
    if args.queue:
        from .kueue.placement import queued_placement

        fragment = queued_placement(cfg, args.pool, args.gpus, args.queue, args.pod_group, args.group_size)
        print(yaml.safe_dump(fragment, sort_keys=False).rstrip())
        return 0
    print(yaml.safe_dump(placement(cfg, args.pool, args.gpus), sort_keys=False).rstrip())
    return 0


def cmd_capacity(args: argparse.Namespace) -> int:
    import json

    from .capacity import summary, table
    from .config import parse_flat
    from .plan import load

    cfg = parse_flat(load(args.stack).flat_config())
    print(json.dumps(summary(cfg), indent=2) if args.json else table(summary(cfg)))
    if cfg.queues is not None and not args.json:
        from .kueue.stack import quota_table

        print("\n" + quota_table(cfg))
    return 0


def _plan_at(rev: str, stack: str) -> dict[str, object]:
    """Plan a stack with the code and stacks of a git revision (checked out in a temporary folder)."""
    import json
    import os
    import subprocess
    import tempfile

    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", top, "archive", rev], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": tmp}
        out = subprocess.run(
            [sys.executable, "-m", "gpuplane.cli", "plan", stack, "--format", "json"],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise ConfigError([("diff", f"planning {stack} at {rev} failed: {out.stderr.strip()}")])
        doc: dict[str, object] = json.loads(out.stdout)
        return doc


def cmd_diff(args: argparse.Namespace) -> int:
    import json

    from .plan.diff import diff, load_plan, to_text

    if args.git:
        rev, stack = args.git
        from .plan import load, plan_stack

        base, head = _plan_at(rev, stack), plan_stack(load(stack)).to_json()
    else:
        if not (args.base and args.head):
            raise ConfigError([("diff", "give BASE.json HEAD.json, or --git REV STACK")])
        base, head = load_plan(args.base), load_plan(args.head)
    d = diff(base, head)
    print(json.dumps(d.to_json(), indent=2) if args.format == "json" else to_text(d))
    return 3 if args.fail_on_disruptive and d.disruptive else 0


def cmd_gpus(args: argparse.Namespace) -> int:
    from .catalog import GPUS

    print(f"{'gpu':<10} {'GiB':>4}  {'MIG':<4} {'GCP accelerator':<20} AWS families")
    for g in GPUS.values():
        gcp = g.gcp.accelerator if g.gcp else "-"
        aws = ", ".join(g.aws.families) if g.aws else "-"
        print(f"{g.name:<10} {g.memory_gib:>4}  {'yes' if g.mig_capable else 'no':<4} {gcp:<20} {aws}")
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    from .catalog.platforms import matrix_markdown
    from .config import parse_flat

    if args.stack:
        from .plan import load

        cfg = parse_flat(load(args.stack).flat_config())
        print(matrix_markdown((cfg.platform,)))
        print(f"\n{cfg.platform_spec.description}")
    else:
        print(matrix_markdown())
    return 0


def cmd_stacks(args: argparse.Namespace) -> int:
    from .plan import stack_names

    print("\n".join(stack_names()))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpuplane", description="GPU-ready Kubernetes as code (offline tools).")
    sub = p.add_subparsers(dest="command", required=True)
    pl = sub.add_parser("plan", help="run a stack's program under mocks and show the resource graph")
    pl.add_argument("stack", nargs="?", help="stack name in stacks/ or path to a Pulumi.<stack>.yaml")
    pl.add_argument("--program", metavar="DIR", help="plan your own Pulumi Python program (DIR with Pulumi.yaml)")
    pl.add_argument("--stack", dest="stack_file", metavar="FILE", help="with --program: its stack file or name")
    pl.add_argument("--format", choices=["tree", "json", "dot", "mermaid"], default="tree")
    pl.add_argument("--output", "-o", help="write to this file instead of stdout")
    chk = pl.add_mutually_exclusive_group()
    chk.add_argument("--check", action="store_true", help="only run the deploy simulator (exit 1 on a problem)")
    chk.add_argument("--no-check", action="store_true", help="skip the deploy simulator (it runs by default)")
    pl.set_defaults(func=cmd_plan)
    sc = sub.add_parser("scrape-config", help="print the stack's Prometheus `gpu-metrics` scrape job")
    sc.add_argument("stack")
    sc.set_defaults(func=cmd_scrape_config)
    ru = sub.add_parser("rules", help="print the stack's GPU alerting and recording rules (a Prometheus rules file)")
    ru.add_argument("stack")
    ru.set_defaults(func=cmd_rules)
    pc = sub.add_parser("placement", help="pod spec fragments (resources, affinity, tolerations) for a pool")
    pc.add_argument("stack")
    pc.add_argument("pool")
    pc.add_argument("--gpus", type=int, default=1, help="GPUs (or MIG slices / shared GPUs) to request")
    pc.add_argument("--queue", metavar="TEAM", help="submit through TEAM's Kueue queue (gpuplane:queues)")
    pc.add_argument("--pod-group", metavar="NAME", help="with --queue: plain pods admitted together as gang NAME")
    pc.add_argument("--group-size", type=int, metavar="N", help="with --pod-group: the gang's number of pods")
    pc.set_defaults(func=cmd_placement)
    cp = sub.add_parser("capacity", help="GPUs, slots, idle floor and estimated $/h per region and pool")
    cp.add_argument("stack")
    cp.add_argument("--json", action="store_true", help="the `capacity` stack output as JSON")
    cp.set_defaults(func=cmd_capacity)
    df = sub.add_parser("diff", help="offline plan diff: added/removed/changed resources, disruptive changes flagged")
    df.add_argument("base", nargs="?", help="plan JSON of the base (gpuplane plan STACK --format json)")
    df.add_argument("head", nargs="?", help="plan JSON of the change")
    df.add_argument("--git", nargs=2, metavar=("REV", "STACK"), help="plan STACK at git REV and in the working tree")
    df.add_argument("--format", choices=["text", "json"], default="text")
    df.add_argument("--fail-on-disruptive", action="store_true", help="exit 3 when a change is disruptive")
    df.set_defaults(func=cmd_diff)
    sub.add_parser("gpus", help="list the GPU catalog").set_defaults(func=cmd_gpus)
    sub.add_parser("stacks", help="list the project's stacks").set_defaults(func=cmd_stacks)
    mx = sub.add_parser("matrix", help="what each platform ships and what gpuplane installs (for one stack or all)")
    mx.add_argument("stack", nargs="?")
    mx.set_defaults(func=cmd_matrix)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `gpuplane plan X | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
