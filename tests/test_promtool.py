"""The GPU rules pass `promtool check rules`, and `promtool test rules` shows each alert firing and not."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.monitoring.labels import AUTOPILOT_DEVICE_PLUGIN
from gpuplane.monitoring.rules import RuleSettings, rule_groups, rules_file_yaml
from gpuplane.plan import Plan

from .conftest import SINGLE as STACKS
from .engines import engine
from .mutation_stats import replayed


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([engine("promtool"), *args], capture_output=True, text=True, check=False, timeout=60)


@pytest.mark.parametrize("stack", STACKS)
def test_stack_rules_pass_promtool_check(stack: str, plan_of: Callable[..., Plan], tmp_path: Path) -> None:
    engine("promtool")
    plan = plan_of(stack)
    rules = tmp_path / "gpu.rules.yml"
    rules.write_text(plan.outputs["prometheusRules"])
    out = promtool("check", "rules", str(rules))
    assert out.returncode == 0, out.stdout + out.stderr
    # kube-state-metrics' GpuNodeWithoutExporter joins the rules where gpuplane installs it (`install`).
    rules = 12 if plan.outputs["monitoringIntegration"] == "install" else 11
    # Cost: 9 rules, one pool-membership rule per pool, a price and a units series per priced pool.
    cost = plan.outputs["gpuCost"]
    priced = len(cost["usdPerGpuHour"])
    rules += 9 + priced + len(cost["unpriced"]) + len(cost["notCosted"]) + 2 * priced
    assert f"SUCCESS: {rules} rules found" in out.stdout


_RULE_TESTS: dict[Any, subprocess.CompletedProcess[str]] = {}
"""`promtool_test` results by the bytes of the folder's files. Shared by every mutant under mutation testing
(tests/mutation_stats.py): the key is everything promtool reads, so a mutant that changes a rule changes the key."""


def promtool_test(folder: Path) -> subprocess.CompletedProcess[str]:
    """`promtool test rules gpu.test.yml` in `folder` (which holds gpu.rules.yml).

    promtool's verdict depends only on the files: a folder whose files are byte for byte those of a folder
    tested before in this session gets that run's result (platforms and integrations whose collectors store the
    same labels render the same rules and series: test_alert_semantics' 19 platform x integration pairs are 7
    distinct runs)."""
    files = tuple(sorted((p.relative_to(folder).as_posix(), p.read_bytes()) for p in folder.rglob("*") if p.is_file()))
    return replayed(
        _RULE_TESTS,
        files,
        lambda: subprocess.run(
            [engine("promtool"), "test", "rules", "gpu.test.yml"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        ),
    )


def alert(name: str, labels: dict[str, str], summary: str, description: str, severity: str) -> dict[str, Any]:
    return {
        "exp_labels": {"alertname": name, "severity": severity, **labels},
        "exp_annotations": {"summary": summary, "description": description},
    }


def rule_tests() -> dict[str, Any]:
    """Series for every alert, firing for one GPU and not for another, with the default thresholds."""
    n1, n2 = 'kubernetes_node="gpu-1"', 'kubernetes_node="gpu-2"'
    series = [
        {"series": 'up{job="gpu-metrics", instance="10.0.0.1:9400"}', "values": "0x40"},
        {"series": 'up{job="gpu-metrics", instance="10.0.0.2:9400"}', "values": "1x40"},
        {"series": f'DCGM_FI_DEV_XID_ERRORS{{gpu="0", {n1}}}', "values": "0x29 79x11"},
        {"series": f'DCGM_FI_DEV_XID_ERRORS{{gpu="0", {n2}}}', "values": "0x40"},
        {"series": f'DCGM_FI_DEV_GPU_TEMP{{gpu="0", {n1}}}', "values": "91x40"},
        {"series": f'DCGM_FI_DEV_GPU_TEMP{{gpu="0", {n2}}}', "values": "70x40"},
        {"series": f'DCGM_FI_DEV_FB_USED{{gpu="0", {n1}}}', "values": "39000x40"},
        {"series": f'DCGM_FI_DEV_FB_FREE{{gpu="0", {n1}}}', "values": "1000x40"},
        {"series": f'DCGM_FI_DEV_FB_USED{{gpu="0", {n2}}}', "values": "1000x40"},
        {"series": f'DCGM_FI_DEV_FB_FREE{{gpu="0", {n2}}}', "values": "39000x40"},
        {"series": f'DCGM_FI_DEV_ROW_REMAP_FAILURE{{gpu="0", {n1}}}', "values": "1x40"},
        {"series": f'DCGM_FI_DEV_ROW_REMAP_FAILURE{{gpu="0", {n2}}}', "values": "0x40"},
        {"series": f'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{gpu="0", {n1}}}', "values": "0x20 2x20"},
        {"series": f'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{gpu="0", {n2}}}', "values": "0x40"},
        {"series": f'DCGM_FI_DEV_GPU_UTIL{{gpu="0", {n1}, namespace="ml", pod="notebook-0"}}', "values": "1x40"},
        {"series": f'DCGM_FI_DEV_GPU_UTIL{{gpu="1", {n1}, namespace="ml", pod="trainer-0"}}', "values": "95x40"},
        {"series": f'DCGM_FI_DEV_GPU_UTIL{{gpu="0", {n2}, namespace="", pod=""}}', "values": "0x40"},
    ]
    at = "35m"
    return {
        "rule_files": ["gpu.rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [
                    {
                        "eval_time": at,
                        "alertname": "GpuMetricsExporterDown",
                        "exp_alerts": [
                            alert(
                                "GpuMetricsExporterDown",
                                {"job": "gpu-metrics", "instance": "10.0.0.1:9400"},
                                "GPU metrics exporter is down",
                                "GPU metrics target 10.0.0.1:9400 of job gpu-metrics has been unreachable for 5 minutes.",
                                "warning",
                            )
                        ],
                    },
                    {
                        "eval_time": at,
                        "alertname": "GpuXidError",
                        "exp_alerts": [
                            alert(
                                "GpuXidError",
                                {"gpu": "0", "kubernetes_node": "gpu-1"},
                                "GPU reported an XID error",
                                "GPU 0 on gpu-1 reported XID 79.",
                                "critical",
                            )
                        ],
                    },
                    {
                        "eval_time": at,
                        "alertname": "GpuTemperatureHigh",
                        "exp_alerts": [
                            alert(
                                "GpuTemperatureHigh",
                                {"gpu": "0", "kubernetes_node": "gpu-1"},
                                "GPU temperature is high",
                                "GPU 0 on gpu-1 is at 91 C.",
                                "warning",
                            )
                        ],
                    },
                    {
                        "eval_time": at,
                        "alertname": "GpuMemoryNearlyFull",
                        "exp_alerts": [
                            alert(
                                "GpuMemoryNearlyFull",
                                {"gpu": "0", "kubernetes_node": "gpu-1"},
                                "GPU memory is nearly full",
                                "GPU 0 on gpu-1 has used 97.5% of its memory for 10 minutes.",
                                "warning",
                            )
                        ],
                    },
                    {
                        "eval_time": at,
                        "alertname": "GpuRowRemapFailure",
                        "exp_alerts": [
                            alert(
                                "GpuRowRemapFailure",
                                {"gpu": "0", "kubernetes_node": "gpu-1"},
                                "GPU memory row remapping failed",
                                "GPU 0 on gpu-1 could not remap a faulty memory row; drain the node.",
                                "critical",
                            )
                        ],
                    },
                    {
                        "eval_time": at,
                        "alertname": "GpuUncorrectableRemappedRows",
                        "exp_alerts": [
                            alert(
                                "GpuUncorrectableRemappedRows",
                                {"gpu": "0", "kubernetes_node": "gpu-1"},
                                "GPU remapped rows after uncorrectable memory errors",
                                "GPU 0 on gpu-1 remapped rows after uncorrectable errors; it needs a reset.",
                                "warning",
                            )
                        ],
                    },
                    {
                        "eval_time": at,
                        "alertname": "GpuAllocatedButIdle",
                        "exp_alerts": [
                            alert(
                                "GpuAllocatedButIdle",
                                {"gpu": "0", "kubernetes_node": "gpu-1", "namespace": "ml", "pod": "notebook-0"},
                                "A GPU is allocated to a pod but idle",
                                "Pod ml/notebook-0 holds GPU 0 on gpu-1 below 5% utilisation for 30m: rightsize it.",
                                "info",
                            )
                        ],
                    },
                    # Not yet idle for the whole window: nothing fires.
                    {"eval_time": "20m", "alertname": "GpuAllocatedButIdle", "exp_alerts": []},
                    # Not yet hot for 5 minutes: nothing fires.
                    {"eval_time": "3m", "alertname": "GpuTemperatureHigh", "exp_alerts": []},
                ],
                "promql_expr_test": [
                    {
                        "expr": "gpuplane:gpu_utilization:avg_by_pod",
                        "eval_time": at,
                        "exp_samples": [
                            {
                                "labels": 'gpuplane:gpu_utilization:avg_by_pod{namespace="ml", pod="notebook-0"}',
                                "value": 1,
                            },
                            {
                                "labels": 'gpuplane:gpu_utilization:avg_by_pod{namespace="ml", pod="trainer-0"}',
                                "value": 95,
                            },
                        ],
                    },
                    {
                        "expr": "gpuplane:gpu_utilization:avg_by_node",
                        "eval_time": at,
                        "exp_samples": [
                            {"labels": 'gpuplane:gpu_utilization:avg_by_node{kubernetes_node="gpu-1"}', "value": 48},
                            {"labels": 'gpuplane:gpu_utilization:avg_by_node{kubernetes_node="gpu-2"}', "value": 0},
                        ],
                    },
                    {
                        "expr": "gpuplane:gpus_allocated:count_by_namespace",
                        "eval_time": at,
                        "exp_samples": [
                            {"labels": 'gpuplane:gpus_allocated:count_by_namespace{namespace="ml"}', "value": 2}
                        ],
                    },
                ],
            }
        ],
    }


def test_every_alert_fires_and_holds_with_promtool(tmp_path: Path) -> None:
    engine("promtool")
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(RuleSettings())))
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(rule_tests(), sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    alerts = {a["alert"] for g in rule_groups(RuleSettings()) for a in g["rules"] if "alert" in a}
    tested = {t["alertname"] for t in rule_tests()["tests"][0]["alert_rule_test"]}
    assert alerts == tested, "every alert has a promtool test"


def test_promtool_test_catches_a_wrong_threshold(tmp_path: Path) -> None:
    engine("promtool")
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(RuleSettings(temperature_celsius=95))))
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(rule_tests(), sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode != 0 and "GpuTemperatureHigh" in out.stdout + out.stderr


def test_device_plugin_rules_fire_on_gke_metric_names(tmp_path: Path) -> None:
    """Autopilot without managed DCGM: rules on GKE's device-plugin metrics (duty_cycle, memory_*)."""
    engine("promtool")
    settings = RuleSettings(labels=AUTOPILOT_DEVICE_PLUGIN)
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(settings)))
    node = 'kubernetes_node="gk3-gpu-1"'
    tests = {
        "rule_files": ["gpu.rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {
                        "series": f'duty_cycle{{accelerator_id="GPU-1", {node}, namespace="ml", pod="nb-0", container="c"}}',
                        "values": "0x40",
                    },
                    {
                        "series": f'duty_cycle{{accelerator_id="GPU-2", {node}, namespace="ml", pod="tr-0", container="c"}}',
                        "values": "80x40",
                    },
                    {"series": f'memory_used_gpu_node{{accelerator_id="GPU-1", {node}}}', "values": "23000x40"},
                    {"series": f'memory_total_gpu_node{{accelerator_id="GPU-1", {node}}}', "values": "23034x40"},
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "35m",
                        "alertname": "GpuAllocatedButIdle",
                        "exp_alerts": [
                            alert(
                                "GpuAllocatedButIdle",
                                {
                                    "accelerator_id": "GPU-1",
                                    "kubernetes_node": "gk3-gpu-1",
                                    "namespace": "ml",
                                    "pod": "nb-0",
                                    "container": "c",
                                },
                                "A GPU is allocated to a pod but idle",
                                "Pod ml/nb-0 holds GPU GPU-1 on gk3-gpu-1 below 5% utilisation for 30m: rightsize it.",
                                "info",
                            )
                        ],
                    },
                    {
                        "eval_time": "35m",
                        "alertname": "GpuMemoryNearlyFull",
                        "exp_alerts": [
                            alert(
                                "GpuMemoryNearlyFull",
                                {"accelerator_id": "GPU-1", "kubernetes_node": "gk3-gpu-1"},
                                "GPU memory is nearly full",
                                "GPU GPU-1 on gk3-gpu-1 has used 99.85% of its memory for 10 minutes.",
                                "warning",
                            )
                        ],
                    },
                ],
            }
        ],
    }
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    exprs = " ".join(r["expr"] for g in rule_groups(settings) for r in g["rules"])
    assert "DCGM_" not in exprs
