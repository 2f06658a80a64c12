"""One test per config error message, plus the all-at-once report and the no-registration guarantee."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.config import ConfigError, parse_config
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.runner import RecordingMonitor, install
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT, config_problems, with_first_pool

GOOD: dict[str, Any] = {
    "platform": "gke-standard",
    "cluster": {"name": "ml"},
    "gcp": {"project": "acme-ml-prod", "region": "us-central1", "zones": ["us-central1-a"]},
    "gpuPools": [{"name": "inference", "gpu": "l4", "maxNodes": 4}],
}


def problems(raw: dict[str, Any]) -> dict[str, str]:
    return config_problems(raw)


def with_pool(**pool: Any) -> dict[str, Any]:
    return with_first_pool(GOOD, **pool)


def test_good_config_parses() -> None:
    cfg = parse_config(GOOD)
    assert cfg.gpuPools[0].minNodes == 0 and cfg.gpuPools[0].gpusPerNode == 1


def test_unknown_gpu() -> None:
    msg = problems(with_pool(gpu="a1000"))["gpuplane:gpuPools[0].gpu"]
    assert msg.startswith("unknown GPU 'a1000' (did you mean 'a100-80gb'?) (known: t4, ")
    assert "l4" in msg and "a10g" not in msg


def test_gpu_not_on_this_cloud() -> None:
    msg = problems(with_pool(gpu="a10g"))["gpuplane:gpuPools[0].gpu"]
    assert "not offered on gcp" in msg


def test_max_below_min() -> None:
    assert problems(with_pool(minNodes=3, maxNodes=2)) == {"gpuplane:gpuPools[0].maxNodes": "must be >= minNodes (3)"}


def test_negative_count() -> None:
    msg = problems(with_pool(minNodes=-1))["gpuplane:gpuPools[0].minNodes"]
    assert "greater than or equal to 0" in msg and "-1" in msg


def test_gpus_per_node_not_offered() -> None:
    msg = problems(with_pool(gpu="t4", gpusPerNode=3))["gpuplane:gpuPools[0].gpusPerNode"]
    assert msg == "t4 comes [1, 2, 4] per node on GCP, not 3"


def test_machine_type_does_not_carry_gpu() -> None:
    msg = problems(with_pool(gpu="a100-40gb", machineType="a2-highgpu-2g"))["gpuplane:gpuPools[0].machineType"]
    assert msg.startswith("'a2-highgpu-2g' does not carry 1 x a100-40gb")


def test_unknown_key_lists_known_keys() -> None:
    msg = problems(with_pool(maxNode=3))["gpuplane:gpuPools[0].maxNode"]
    assert msg.startswith("unknown key (did you mean 'maxNodes'?) (known: name, gpu,")


def test_misspelt_namespace_is_named() -> None:
    from gpuplane.config import parse_flat

    flat = {f"gpuplane:{k}": json.dumps(v) for k, v in GOOD.items()}
    flat["gpuplan:releaseChannel"] = "RAPID"
    flat["aws:region"] = "us-east-1"  # other providers' namespaces are not ours to judge
    with pytest.raises(ConfigError) as info:
        parse_flat(flat)
    assert info.value.problems == [
        ("gpuplan:releaseChannel", "unknown config namespace 'gpuplan' (did you mean 'gpuplane:releaseChannel'?)")
    ]


def test_unknown_top_level_key() -> None:
    raw = {**GOOD, "gpupools": []}
    assert problems(raw)["gpuplane:gpupools"].startswith("unknown key (did you mean 'gpuPools'?)")


def test_unknown_platform() -> None:
    msg = problems({**GOOD, "platform": "gke-turbo"})["gpuplane:platform"]
    assert msg.startswith("unknown platform 'gke-turbo' (known: gke-standard")


def test_missing_required_key() -> None:
    raw = copy.deepcopy(GOOD)
    del raw["gpuPools"][0]["maxNodes"]
    assert problems(raw) == {"gpuplane:gpuPools[0].maxNodes": "required key is missing"}


def test_gke_needs_gcp_section() -> None:
    raw = {k: v for k, v in GOOD.items() if k != "gcp"}
    assert problems(raw) == {"gpuplane:gcp": "required for a GKE platform"}


def test_zones_outside_region() -> None:
    raw = copy.deepcopy(GOOD)
    raw["gcp"]["zones"] = ["us-east1-b"]
    assert "not zones of region 'us-central1'" in problems(raw)["gpuplane:gcp.zones"]


def test_duplicate_pool_names() -> None:
    raw = copy.deepcopy(GOOD)
    raw["gpuPools"].append(dict(raw["gpuPools"][0]))
    assert problems(raw)["gpuplane:gpuPools"] == "pool names must be unique (repeated: inference)"


def test_bad_label() -> None:
    msg = problems(with_pool(labels={"bad key!": "x"}))["gpuplane:gpuPools[0].labels"]
    assert msg == "invalid Kubernetes label(s): bad key!"


def test_bad_enum_value() -> None:
    msg = problems(with_pool(driverVersion="NEWEST"))["gpuplane:gpuPools[0].driverVersion"]
    assert msg == "'NEWEST' is not one of 'DEFAULT' or 'LATEST'"


def test_scrape_timeout_longer_than_interval() -> None:
    raw = {**GOOD, "monitoring": {"scrapeInterval": "10s", "scrapeTimeout": "1m"}}
    assert problems(raw) == {"gpuplane:monitoring.scrapeTimeout": "must not exceed scrapeInterval (10s)"}


def test_no_pools() -> None:
    assert "gpuplane:gpuPools" in problems({**GOOD, "gpuPools": []})


def test_every_problem_in_one_error() -> None:
    raw = copy.deepcopy(GOOD)
    raw["gpuPools"] = [
        {"name": "a", "gpu": "a1000", "maxNodes": 1},
        {"name": "b", "gpu": "l4", "minNodes": 5, "maxNodes": 2},
        {"name": "c", "gpu": "t4", "gpusPerNode": -2, "maxNodes": 1},
    ]
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    paths = [p for p, _ in info.value.problems]
    assert paths == ["gpuplane:gpuPools[0].gpu", "gpuplane:gpuPools[1].maxNodes", "gpuplane:gpuPools[2].gpusPerNode"]
    text = str(info.value)
    assert text.startswith("invalid gpuplane config (3 problems):") and all(p in text for p in paths)


def test_bad_program_config_registers_nothing() -> None:
    """The `pulumi up` path: main() raises before any resource registration."""
    from gpuplane.stack.program import main

    config = {f"gpuplane:{k}": v for k, v in with_pool(gpu="a1000").items()}
    monitor: RecordingMonitor = install(StackFile(project="gpuplane", stack="broken", config=config), PlanMocks())
    with pytest.raises(ConfigError):
        _sync_await(run_pulumi_func(main))
    assert [r.type for r in monitor.registrations] == ["pulumi:pulumi:Stack"]


def test_cli_broken_stack_exits_with_one_message(tmp_path: Path) -> None:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.gcp-standard.yaml").read_text())
    pools = doc["config"]["gpuplane:gpuPools"]
    pools[0]["gpu"] = "a1000"
    pools[1]["minNodes"], pools[1]["maxNodes"] = 3, 1
    pools[1]["gpusPerNode"] = -8
    broken = tmp_path / "Pulumi.broken.yaml"
    broken.write_text(yaml.safe_dump(doc))
    run = subprocess.run(
        [sys.executable, "-m", "gpuplane.cli", "plan", str(broken), "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert "Traceback" not in run.stderr
    for key in ("gpuPools[0].gpu", "gpuPools[1].maxNodes", "gpuPools[1].gpusPerNode"):
        assert f"gpuplane:{key}" in run.stderr, run.stderr
