"""The config-space properties (tests/test_config_space_clouds.py) randomized with many more examples than
the suite's bounded, derandomized run: `GPUPLANE_EXAMPLES=N GPUPLANE_RANDOMIZE=1` under pytest.

    .venv/bin/python benchmarks/property_bench.py [--examples 300] [--json benchmarks/results/properties.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROPERTIES = ["tests/test_config_space_clouds.py"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    env = {**os.environ, "GPUPLANE_EXAMPLES": str(args.examples), "GPUPLANE_RANDOMIZE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-n0", "--hypothesis-show-statistics", *PROPERTIES]
    started = time.monotonic()
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = round(time.monotonic() - started, 1)
    counts = re.findall(r"(\d+) passing, (\d+) failing, and (\d+) invalid", run.stdout)
    result = {
        "examples": args.examples,
        "passing_failing_invalid": [list(map(int, c)) for c in counts],
        "passed": run.returncode == 0,
        "seconds": seconds,
    }
    print(json.dumps(result))
    if run.returncode:
        print(run.stdout[-4000:], file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    sys.exit(run.returncode)


if __name__ == "__main__":
    main()
