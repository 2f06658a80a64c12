"""`gpuplane` command line: offline plan, diff, scrape config, rules, placement, capacity, catalog.

One convention for every command: `--format` picks the output format (the human one by default, `json`
where a machine reads it, with camelCase keys like the plan JSON), `-o/--output FILE` writes the output
to a file instead of stdout. Every mistake in an argument, a named file or the stack config is one
`error:` message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..config import ConfigError
from ..errors import InputError
from . import commands as c

HIDDEN = argparse.SUPPRESS


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuplane")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown (not installed)"


def _command(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    func: c.Command,
    help_: str,
    formats: Sequence[str] = (),
    stack: bool | str = True,
) -> argparse.ArgumentParser:
    """A subcommand with the shared arguments: STACK (`stack="?"`: optional), `--format` (the first format
    is the default), `-o`."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help_, description=help_)
    if stack:
        p.add_argument(
            "stack",
            nargs="?" if stack == "?" else None,
            metavar="STACK",
            help="stack name in the project's stacks/ or a Pulumi.<stack>.yaml",
        )
    if formats:
        p.add_argument(
            "--format", choices=list(formats), default=formats[0], help=f"output format (default {formats[0]})"
        )
    p.add_argument("-o", "--output", metavar="FILE", help="write the output to FILE instead of stdout")
    p.set_defaults(func=func)
    return p


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpuplane", description="GPU-ready Kubernetes as code (offline tools).")
    p.add_argument("--version", action="version", version=f"gpuplane {_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    pl = _command(
        sub,
        "plan",
        c.cmd_plan,
        "run a stack's program under mocks and show the resource graph",
        ("tree", "json", "dot", "mermaid"),
        stack="?",
    )
    pl.add_argument("--program", metavar="DIR", help="plan your own Pulumi Python program (DIR with Pulumi.yaml)")
    pl.add_argument("--stack", dest="stack_file", metavar="FILE", help="with --program: its stack file or name")
    chk = pl.add_mutually_exclusive_group()
    chk.add_argument("--check", action="store_true", help="only run the deploy simulator (exit 1 on a problem)")
    chk.add_argument("--no-check", action="store_true", help="skip the deploy simulator (it runs by default)")
    chk.add_argument(
        "--preview",
        action="store_true",
        help="as `pulumi preview` of a first deployment shows it: computed values unknown (no simulator)",
    )
    _command(sub, "scrape-config", c.cmd_scrape_config, "the stack's Prometheus `gpu-metrics` scrape job (YAML)")
    _command(sub, "rules", c.cmd_rules, "the stack's GPU alerting and recording rules (a Prometheus rules file)")
    pc = _command(
        sub,
        "placement",
        c.cmd_placement,
        "pod spec fragments (resources, affinity, tolerations) for a pool",
        ("yaml", "json"),
    )
    pc.add_argument("pool", metavar="POOL", help="a GPU pool of the stack (gpuplane:gpuPools[].name)")
    pc.add_argument("--gpus", type=int, default=1, help="GPUs (or MIG slices / shared GPUs) to request")
    pc.add_argument("--queue", metavar="TEAM", help="submit through TEAM's Kueue queue (gpuplane:queues)")
    pc.add_argument("--pod-group", metavar="NAME", help="with --queue: plain pods admitted together as gang NAME")
    pc.add_argument("--group-size", type=int, metavar="N", help="with --pod-group: the gang's number of pods")
    pc.add_argument("--mig", metavar="PROFILE", help="gpuAllocation: dra pools: claim MIG devices of PROFILE")
    pc.add_argument("--selector", metavar="CEL", help="gpuAllocation: dra pools: a CEL selector on device attributes")
    pc.add_argument("--job", metavar="NAME", help="label the pods as job NAME (packs them on multi-node pools)")
    pc.add_argument(
        "--compute-domain",
        type=int,
        metavar="NODES",
        help="GB200 / GB300 pools, with --job: a ComputeDomain for a job of NODES nodes in one NVLink domain",
    )
    cp = _command(
        sub,
        "capacity",
        c.cmd_capacity,
        "GPUs, slots, idle floor and estimated $/h per region and pool",
        ("table", "json"),
    )
    cp.add_argument("--json", dest="format", action="store_const", const="json", help=HIDDEN)
    df = _command(
        sub,
        "diff",
        c.cmd_diff,
        "offline plan diff: added/removed/changed resources, disruptive changes flagged",
        ("text", "json"),
        stack=False,
    )
    df.add_argument("base", nargs="?", metavar="BASE", help="plan JSON of the base (gpuplane plan STACK --format json)")
    df.add_argument("head", nargs="?", metavar="HEAD", help="plan JSON of the change")
    df.add_argument("--git", nargs=2, metavar=("REV", "STACK"), help="plan STACK at git REV and in the working tree")
    df.add_argument(
        "--match-names",
        action="store_true",
        help="match resources by type and name, ignoring the stack and project in their URNs (two stacks)",
    )
    df.add_argument("--fail-on-disruptive", action="store_true", help="exit 3 when a change is disruptive")
    lc = _command(
        sub,
        "lifecycle",
        c.cmd_lifecycle,
        "routine changes (scale, add/remove pools, version bumps, ...) run through the replacement and update rules",
        ("text", "json"),
    )
    lc.add_argument("--change", action="append", metavar="ID", help="only this routine change (repeatable)")
    va = _command(
        sub,
        "validate",
        c.cmd_validate,
        "judge the post-deploy checks' output (kubectl logs --prefix) per pool; exit 1 on a failed or missing check",
        ("table", "json"),
    )
    va.add_argument("--from", dest="log", required=True, metavar="LOGFILE", help="the checks' pods' logs (- : stdin)")
    _command(
        sub,
        "conformance",
        c.cmd_conformance,
        "CNCF Kubernetes AI Conformance v1.36: how the stack meets each requirement",
        ("table", "json"),
    )
    rs = _command(
        sub,
        "rightsize",
        c.cmd_rightsize,
        "recommend cheaper GPU shapes per workload and pool from a running Prometheus (docs/rightsizing.md)",
        ("table", "json"),
    )
    rs.add_argument(
        "--prometheus", required=True, metavar="URL", help="the Prometheus HTTP API, e.g. http://localhost:9090"
    )
    rs.add_argument("--window", default="7d", help="how far back to look (default 7d; m, h, d or w)")
    rs.add_argument("--margin", type=float, metavar="PERCENT", help="headroom over the observed peaks (default 20)")
    rs.add_argument(
        "--interruptible",
        action="append",
        default=[],
        metavar="NAMESPACE[/WORKLOAD]",
        help="workloads that tolerate interruption: may move to spot (repeatable)",
    )
    rs.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per query (default 30)")
    rs.add_argument("--at", help=HIDDEN)  # the window's end (unix seconds or ISO 8601); tests pin it
    _command(sub, "gpus", c.cmd_gpus, "list the GPU catalog", ("table", "json"), stack=False)
    _command(sub, "stacks", c.cmd_stacks, "list the project's stacks", ("text", "json"), stack=False)
    mx = _command(
        sub,
        "matrix",
        c.cmd_matrix,
        "what each platform ships and what gpuplane installs (one stack or all)",
        stack=False,
    )
    mx.add_argument("stack", nargs="?", metavar="STACK")
    from .fleet import add_fleet

    add_fleet(sub, _command)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    where = f"gpuplane {args.command}"
    try:
        return int(args.func(args))
    except InputError as exc:
        print(f"{where}: error: {exc}", file=sys.stderr)
    except ConfigError as exc:
        print(f"{where}: error: {exc}", file=sys.stderr)
    except BrokenPipeError:  # `gpuplane plan X | head`
        sys.stderr.close()
        return 0
    return 2


__all__ = ["main", "parser"]
