"""Benchmark: the test suite's wall time and per-test durations, as the README's test command runs it.

Runs `python -m pytest -q` (pyproject's addopts: two pytest-xdist workers) once, with a JUnit XML report
for the per-test durations, and records the wall time, CPU seconds of pytest and its workers, the load
average before and after (the machine may be shared), the counts, and the slowest tests in
benchmarks/results/suite.json; prints a table. Not a test; run it from the repository root with the
test environment installed (the README's test command), and run it twice to see the warm figure (the
first run in a new clone also fills mypy's cache):

    .venv/bin/python benchmarks/suite_bench.py [--top 25] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "suite.json"


def durations(junit: Path) -> list[dict[str, object]]:
    rows = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
        rows.append(
            {
                "test": f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}",
                "seconds": round(float(case.get("time", 0)), 3),
                "outcome": outcome,
            }
        )
    return sorted(rows, key=lambda r: -float(str(r["seconds"])))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=25, help="how many of the slowest tests to print")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        load_before = os.getloadavg()
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *args.pytest_args],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        wall = time.monotonic() - start
        load_after = os.getloadavg()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = durations(junit) if junit.is_file() else []
    summary = next((line for line in reversed(proc.stdout.splitlines()) if " in " in line and "passed" in line), "")
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row["outcome"])] = counts.get(str(row["outcome"]), 0) + 1
    doc = {
        "command": "python -m pytest -q (addopts: -n auto --dist loadfile)",
        "pytest_args": args.pytest_args,
        "exit_code": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "python": platform.python_version(),
        "checkov": bool(os.environ.get("GPUPLANE_CHECKOV")),
        "published_reference": (ROOT.parent / "shared" / "reference").is_dir()
        or bool(os.environ.get("GPUPLANE_REFERENCE")),
        "pytest_summary": summary.strip("= "),
        "counts": counts,
        "sum_of_test_seconds": round(sum(float(str(r["seconds"])) for r in rows), 1),
        "slowest": rows[: args.top],
        "tests": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"suite: {wall:.1f} s wall, {doc['cpu_s']} s CPU on {os.cpu_count()} cores ({summary.strip('= ')})")
    print(f"load average before {doc['load_average_before'][0]}, after {doc['load_average_after'][0]}")
    print(f"{'seconds':>8}  test (slowest {args.top} of {len(rows)})")
    for row in rows[: args.top]:
        print(f"{float(str(row['seconds'])):>8.2f}  {row['test']}")
    print(f"written to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    if proc.returncode not in (0, 5):
        print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
