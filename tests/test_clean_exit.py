"""No stray output: a successful `gpuplane` run prints nothing on stderr.

The Pulumi SDK runs programs on a process-wide asyncio loop that nothing closes; CPython then closes it in
`BaseEventLoop.__del__` at interpreter exit, where its self-pipe may already be gone, and rarely prints
`Exception ignored in: <function BaseEventLoop.__del__ ...> ValueError: Invalid file descriptor: -1`.
The plan runner closes the loop it runs on (components/gpuplane/plan/runner.py `program_run`).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gpuplane.plan import load, plan_stack

from .conftest import ROOT

RUNS = 3
"""CLI runs of the cheapest stack (each ~2 s of CPU, mostly importing the provider SDKs)."""


def test_plan_leaves_no_event_loop_open() -> None:
    """The deterministic half: after a plan, the loop it ran on is closed and no loop is left current."""
    plan = plan_stack(load("gcp-autopilot", ROOT))
    assert plan.resources
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        policy_loop = asyncio.get_event_loop_policy()._local._loop  # type: ignore[attr-defined]
    assert policy_loop is None, "plan_stack left an event loop for interpreter exit to close"


def test_cli_runs_print_nothing_on_stderr(tmp_path: Path) -> None:
    """The end-to-end half: the CLI, run several times (two at once), exits 0 with an empty stderr."""

    def run(i: int) -> subprocess.CompletedProcess[str]:
        out = tmp_path / f"plan-{i}.json"
        return subprocess.run(
            [sys.executable, "-m", "gpuplane.cli", "plan", "gcp-autopilot", "--format", "json", "-o", str(out)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, range(RUNS)))
    for r in results:
        assert r.returncode == 0, r.stderr
        assert r.stderr == "", f"stray stderr after a successful plan:\n{r.stderr}"
