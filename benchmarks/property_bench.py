"""The suite's Hypothesis properties randomized, with many times their examples: the suite runs them
derandomized (the same examples every run, hypothesis profile "suite" in tests/conftest.py); this runs them
under profile "explore" (`GPUPLANE_RANDOMIZE=1`) with `GPUPLANE_EXAMPLES_SCALE` times each one's count.

    .venv/bin/python benchmarks/property_bench.py [--scale 10] [--json benchmarks/results/properties.json]
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
PROPERTIES = [
    "tests/test_config_space_clouds.py",
    "tests/test_config_space.py::test_valid_pools_plan_into_matching_node_pools",
    "tests/test_upgrade_safety.py::test_a_change_touches_only_what_it_is_about",
    "tests/test_bad_input_property.py",
    "tests/test_component_args_property.py",
    "tests/test_deploy.py::test_global_names_are_valid_and_unique_for_any_cluster_name",
    "tests/test_fleet.py",
    "tests/test_gke_network.py",
    "tests/test_jsontext.py",
    "tests/test_yamltext.py",
    "tests/test_aws_render.py",
    "tests/test_autoscaling.py::test_any_valid_arguments_render_a_query_the_integration_can_answer",
]
"""Every module or test with a Hypothesis property (a test keeps each list current)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=10, help="times each property's example count")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    env = {**os.environ, "GPUPLANE_EXAMPLES_SCALE": str(args.scale), "GPUPLANE_RANDOMIZE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-n0", "--hypothesis-show-statistics", *PROPERTIES]
    started = time.monotonic()
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = round(time.monotonic() - started, 1)
    counts = re.findall(r"(\d+) passing, (\d+) failing, and (\d+) invalid", run.stdout)
    result = {
        "scale": args.scale,
        "properties": PROPERTIES,
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
