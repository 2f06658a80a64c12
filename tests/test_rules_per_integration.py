"""`promtool test rules` per integration x platform, on series labelled exactly as the label model says.

Every path must give the same answers: `GpuAllocatedButIdle` fires only for allocated idle GPUs (a whole
GPU and a MIG slice), never for a free one; per-namespace and per-node records give the same numbers.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.monitoring.labels import PROMETHEUS_OPERATOR, all_models, label_model
from gpuplane.monitoring.rules import ExporterPods, LabelModel, RuleSettings, rule_groups, rules_file_yaml

from . import labelled_gpus as fx
from .engines import engine
from .test_promtool import promtool_test

MODELS = all_models()
AT = "35m"


def _sample(record: str, labels: dict[str, str], value: float) -> dict[str, Any]:
    return {"labels": fx.selector(record, labels), "value": value}


def rule_tests(model: LabelModel) -> dict[str, Any]:
    c = {model.cluster: fx.CLUSTER}
    idle = [
        {
            "exp_labels": {
                "alertname": "GpuAllocatedButIdle",
                "severity": "info",
                **fx.expected_idle_alert_labels(model, g),
            },
            "exp_annotations": {
                "summary": "A GPU is allocated to a pod but idle",
                "description": f"Pod {fx.workload_of(g)} holds GPU {g.gpu} on {g.node} below 5% "
                "utilisation for 30m: rightsize it.",
            },
        }
        for g in fx.IDLE_ALLOCATED
    ]
    rec = "gpuplane:gpus_allocated:count_by_namespace"
    avg = "gpuplane:gpu_utilization:avg_by_namespace"
    pod = "gpuplane:gpu_utilization:avg_by_pod"
    node = "gpuplane:gpu_utilization:avg_by_node"
    return {
        "rule_files": ["gpu.rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": f"{v:g}x40"} for s, v in fx.series(model)],
                "alert_rule_test": [{"eval_time": AT, "alertname": "GpuAllocatedButIdle", "exp_alerts": idle}],
                "promql_expr_test": [
                    {
                        "expr": rec,
                        "eval_time": AT,
                        "exp_samples": [
                            _sample(rec, {**c, "namespace": ns}, n) for ns, n in fx.COUNT_BY_NAMESPACE.items()
                        ],
                    },
                    {
                        "expr": avg,
                        "eval_time": AT,
                        "exp_samples": [
                            _sample(avg, {**c, "namespace": ns}, n) for ns, n in fx.AVG_BY_NAMESPACE.items()
                        ],
                    },
                    {
                        "expr": pod,
                        "eval_time": AT,
                        "exp_samples": [
                            _sample(pod, {**c, "namespace": ns, "pod": p}, v) for (ns, p), v in fx.AVG_BY_POD.items()
                        ],
                    },
                    {
                        "expr": node,
                        "eval_time": AT,
                        "exp_samples": [_sample(node, {**c, model.node: n}, v) for n, v in fx.AVG_BY_NODE.items()],
                    },
                ],
            }
        ],
    }


def run(tmp_path: Path, settings: RuleSettings, tests: dict[str, Any]) -> str:
    """promtool's output; empty when the test passed."""
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(settings)))
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    out = promtool_test(tmp_path)
    return "" if out.returncode == 0 else out.stdout + out.stderr


@pytest.mark.parametrize(("platform", "integration"), sorted(MODELS), ids=[f"{p}/{i}" for p, i in sorted(MODELS)])
def test_rules_give_the_same_answers_on_every_integration(platform: str, integration: str, tmp_path: Path) -> None:
    engine("promtool")
    model = label_model(platform, integration)
    assert run(tmp_path, RuleSettings(labels=model), rule_tests(model)) == ""


def test_honoured_exporter_pod_labels_would_make_free_gpus_alert(tmp_path: Path) -> None:
    """The bug the model fixes: a ServiceMonitor that keeps the operator's `pod` target label on free GPUs."""
    engine("promtool")
    naive = replace(PROMETHEUS_OPERATOR, idle=("namespace", "pod", "container"), drop_target_labels=())
    tests = rule_tests(naive)
    failed = run(tmp_path, RuleSettings(labels=naive), tests)
    assert "GpuAllocatedButIdle" in failed and fx.EXPORTER_POD in failed


def test_gmp_rules_read_the_exported_namespace(tmp_path: Path) -> None:
    """Rules written for the seed's labels give wrong namespaces on GMP's series (the exporter's namespace)."""
    engine("promtool")
    gmp = label_model("gke-standard", "gke-managed")
    seed_rules = RuleSettings(labels=replace(gmp, workload=label_model("gke-standard", "scrape-config").workload))
    failed = run(tmp_path, seed_rules, rule_tests(gmp))
    assert fx.EXPORTER_NAMESPACE in failed


def exporter_absence_tests() -> dict[str, Any]:
    """kube-state-metrics series: gpu-1 runs the exporter, gpu-2 (MIG capacity only) has it Pending, cpu-1 has
    no GPU. Only gpu-2 alerts."""
    ds = {"namespace": "gpu-operator", "created_by_kind": "DaemonSet", "created_by_name": "nvidia-dcgm-exporter"}
    series = [
        ('kube_node_status_capacity{node="gpu-1", resource="nvidia_com_gpu"}', 8),
        ('kube_node_status_capacity{node="gpu-2", resource="nvidia_com_gpu"}', 0),
        ('kube_node_status_capacity{node="gpu-2", resource="nvidia_com_mig_1g_10gb"}', 7),
        ('kube_node_status_capacity{node="cpu-1", resource="cpu"}', 4),
        (fx.selector("kube_pod_info", {**ds, "pod": "nvidia-dcgm-exporter-a", "node": "gpu-1"}), 1),
        (fx.selector("kube_pod_info", {**ds, "pod": "nvidia-dcgm-exporter-b", "node": "gpu-2"}), 1),
        ('kube_pod_status_phase{namespace="gpu-operator", pod="nvidia-dcgm-exporter-a", phase="Running"}', 1),
        ('kube_pod_status_phase{namespace="gpu-operator", pod="nvidia-dcgm-exporter-b", phase="Running"}', 0),
        ('kube_pod_status_phase{namespace="gpu-operator", pod="nvidia-dcgm-exporter-b", phase="Pending"}', 1),
    ]
    return {
        "rule_files": ["gpu.rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": f"{v}x40"} for s, v in series],
                "alert_rule_test": [
                    {
                        "eval_time": "20m",
                        "alertname": "GpuNodeWithoutExporter",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "alertname": "GpuNodeWithoutExporter",
                                    "severity": "warning",
                                    "node": "gpu-2",
                                },
                                "exp_annotations": {
                                    "summary": "GPU node has no running GPU metrics exporter",
                                    "description": "Node gpu-2 has GPUs but no Running "
                                    "gpu-operator/nvidia-dcgm-exporter pod: its GPUs report no metrics, "
                                    "so no GPU alert can fire for it.",
                                },
                            }
                        ],
                    },
                    {"eval_time": "10m", "alertname": "GpuNodeWithoutExporter", "exp_alerts": []},
                ],
            }
        ],
    }


def test_gpu_node_without_a_running_exporter_alerts_where_kube_state_metrics_runs(tmp_path: Path) -> None:
    engine("promtool")
    settings = RuleSettings(exporter_pods=ExporterPods("gpu-operator", "nvidia-dcgm-exporter"))
    assert run(tmp_path, settings, exporter_absence_tests()) == ""
    assert "GpuNodeWithoutExporter" not in rules_file_yaml(rule_groups(RuleSettings()))


def test_every_platform_integration_has_a_model() -> None:
    from gpuplane.catalog.platforms import PLATFORMS

    assert set(MODELS) == {(p.name, i) for p in PLATFORMS.values() for i in p.integrations}
    for model in MODELS.values():
        assert model.source, "each entry cites its source"
