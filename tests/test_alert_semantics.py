"""What each GPU alert and recording rule means, checked with `promtool test rules` at its edges: at, just
below and just above each threshold; before, during and after each `for:` and range window; an idle GPU, an
allocated idle GPU and a busy one; on every integration's stored labels.

The thresholds, windows and label sets are written here from the alerts' documented meaning (docs/monitoring.md)
and the collectors' documented behaviour, not read from gpuplane's rules or label model, so a changed `>`, a
lost `changes(...[10m])` or a label the integration does not store fails a named case. Firing is read from
the `ALERTS` series promtool's rule evaluation writes (alertstate pending/firing), with exact labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.config.monitoring import MonitoringConfig
from gpuplane.monitoring.labels import all_models
from gpuplane.monitoring.rules import rule_groups, rules_file_yaml
from gpuplane.monitoring.wiring import settings_for

from .engines import engine
from .test_promtool import promtool_test

GPU = {"gpu": "0"}
TARGET = {"job": "gpu-metrics", "instance": "10.0.0.9:9400"}
WORKLOAD = {"namespace": "ml", "pod": "nb-0", "container": "jupyter"}

# How a GPU's series is stored, per collector (idle: no pod holds it; allocated: dcgm-exporter adds the pod's
# namespace/pod/container, NVIDIA/dcgm-exporter internal/pkg/transformation/kubernetes.go).
STORED: dict[str, dict[str, Any]] = {
    # The seed's job: kubernetes_node from the pod's node, gpuplane's cluster/region; no clash, labels intact.
    "scrape": {
        "idle": {**TARGET, "kubernetes_node": "n1", "cluster": "c1", "region": "r1", **GPU},
        "allocated": WORKLOAD,
        "alert_workload": WORKLOAD,
    },
    # prometheus-operator ServiceMonitor (pkg/prometheus/promcfg.go): service and endpoint target labels (here
    # the standalone chart's Service and port; gpu-operator's are nvidia-dcgm-exporter and gpu-metrics, and
    # the rules read neither); gpuplane drops the namespace/pod/container target labels and honours the
    # exporter's.
    "servicemonitor": {
        "idle": {
            **TARGET,
            "service": "dcgm-exporter",
            "endpoint": "metrics",
            "kubernetes_node": "n1",
            "cluster": "c1",
            "region": "r1",
            **GPU,
        },
        "allocated": WORKLOAD,
        "alert_workload": WORKLOAD,
    },
    # GKE Managed Prometheus PodMonitoring (prometheus-engine pod_config.go): namespace is always the
    # PodMonitoring's, so the exporter's becomes exported_namespace; node, cluster, location, project_id.
    "gmp": {
        "idle": {
            "job": "gpu-metrics",
            "instance": "n1:metrics",  # GMP names a DaemonSet pod's target <node>:<port name> (pod_config.go)
            "namespace": "gpu-monitoring",
            "node": "n1",
            "cluster": "c1",
            "location": "r1",
            "project_id": "p1",
            **GPU,
        },
        "allocated": {"exported_namespace": "ml", "pod": "nb-0", "container": "jupyter"},
        # The alert presents the workload's namespace (label_replace from exported_namespace).
        "alert_workload": {"exported_namespace": "ml", "namespace": "ml", "pod": "nb-0", "container": "jupyter"},
    },
    # GKE Autopilot's managed DCGM: GMP's node/cluster/location, the exporter's workload labels kept.
    "gmp-managed-dcgm": {
        "idle": {**TARGET, "node": "n1", "cluster": "c1", "location": "r1", "project_id": "p1", **GPU},
        "allocated": WORKLOAD,
        "alert_workload": WORKLOAD,
    },
}

KIND = {
    "scrape-config": "scrape",
    "prometheus-operator": "servicemonitor",
    "install": "servicemonitor",
    "gke-managed": "gmp",
}
"""Integration -> the collector whose labels the stored series carry."""
AUTOPILOT = {("gke-autopilot", "gke-managed"): "gmp-managed-dcgm", ("gke-autopilot", "scrape-config"): "device-plugin"}
"""Where Autopilot's own metrics source replaces dcgm-exporter."""


def kind_of(platform: str, integration: str) -> str:
    return AUTOPILOT.get((platform, integration), KIND[integration])


@dataclass(frozen=True)
class Case:
    """One alert at one time on one GPU's series: firing, pending or silent."""

    name: str
    alert: str
    series: tuple[tuple[str, str, str], ...]
    """(metric, "idle" | "allocated" | "up", promtool values)."""
    at: str
    state: str
    """"firing", "pending" or "" (no ALERTS series)."""
    on: str = "idle"
    """Whose labels the alert carries."""


def up(values: str) -> tuple[str, str, str]:
    return ("up", "up", values)


# Defaults (docs/monitoring.md, MonitoringConfig): 85 C for 5m; memory > 95% for 10m; allocated and under 5%
# for 30m; an XID alerts for 10 minutes after it changes; remapped rows alert for an hour after they grow.
DCGM_CASES = [
    Case("temp at 85 is not above", "GpuTemperatureHigh", (("DCGM_FI_DEV_GPU_TEMP", "idle", "85x20"),), "10m", ""),
    Case("temp 86 before 5m", "GpuTemperatureHigh", (("DCGM_FI_DEV_GPU_TEMP", "idle", "86x20"),), "4m", "pending"),
    Case("temp 86 at 5m", "GpuTemperatureHigh", (("DCGM_FI_DEV_GPU_TEMP", "idle", "86x20"),), "5m", "firing"),
    Case("temp cooled", "GpuTemperatureHigh", (("DCGM_FI_DEV_GPU_TEMP", "idle", "86x10 70x10"),), "15m", ""),
    Case(
        "memory at 95% is not above",
        "GpuMemoryNearlyFull",
        (("DCGM_FI_DEV_FB_USED", "idle", "9500x20"), ("DCGM_FI_DEV_FB_FREE", "idle", "500x20")),
        "15m",
        "",
    ),
    Case(
        "memory 96% before 10m",
        "GpuMemoryNearlyFull",
        (("DCGM_FI_DEV_FB_USED", "idle", "9600x20"), ("DCGM_FI_DEV_FB_FREE", "idle", "400x20")),
        "9m",
        "pending",
    ),
    Case(
        "memory 96% at 10m",
        "GpuMemoryNearlyFull",
        (("DCGM_FI_DEV_FB_USED", "idle", "9600x20"), ("DCGM_FI_DEV_FB_FREE", "idle", "400x20")),
        "10m",
        "firing",
    ),
    Case("no XID", "GpuXidError", (("DCGM_FI_DEV_XID_ERRORS", "idle", "0x30"),), "20m", ""),
    Case("XID just seen", "GpuXidError", (("DCGM_FI_DEV_XID_ERRORS", "idle", "0x9 79x30"),), "12m", "firing"),
    # The XID changes between 9m and 10m. Prometheus 3 (the pinned v3.14) selects ranges left-open, Prometheus 2
    # (Debian's promtool) closed: 18m and 20m answer alike on both, 19m would not.
    Case("XID within 10m", "GpuXidError", (("DCGM_FI_DEV_XID_ERRORS", "idle", "0x9 79x30"),), "18m", "firing"),
    Case("XID over 10m ago", "GpuXidError", (("DCGM_FI_DEV_XID_ERRORS", "idle", "0x9 79x30"),), "20m", ""),
    Case("no remap failure", "GpuRowRemapFailure", (("DCGM_FI_DEV_ROW_REMAP_FAILURE", "idle", "0x5"),), "3m", ""),
    Case("remap failure", "GpuRowRemapFailure", (("DCGM_FI_DEV_ROW_REMAP_FAILURE", "idle", "1x5"),), "3m", "firing"),
    Case(
        "rows remapped in the hour",
        "GpuUncorrectableRemappedRows",
        (("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "idle", "0x9 2x80"),),
        "30m",
        "firing",
    ),
    Case(
        "rows remapped just within the hour",
        "GpuUncorrectableRemappedRows",
        (("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "idle", "0x9 2x80"),),
        "68m",
        "firing",
    ),
    Case(
        "rows remapped over an hour ago",
        "GpuUncorrectableRemappedRows",
        (("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "idle", "0x9 2x80"),),
        "70m",
        "",
    ),
]


def shared_cases(util: str) -> list[Case]:
    """The alerts every metrics source has (utilisation metric `util`)."""
    return [
        Case("exporter up", "GpuMetricsExporterDown", (up("1x10"),), "8m", ""),
        Case("exporter down before 5m", "GpuMetricsExporterDown", (up("0x10"),), "4m", "pending", "up"),
        Case("exporter down at 5m", "GpuMetricsExporterDown", (up("0x10"),), "5m", "firing", "up"),
        Case("idle free GPU", "GpuAllocatedButIdle", ((util, "idle", "0x40"),), "35m", ""),
        Case("allocated at 5% is not below", "GpuAllocatedButIdle", ((util, "allocated", "5x40"),), "35m", ""),
        Case("allocated 4% before 30m", "GpuAllocatedButIdle", ((util, "allocated", "4x40"),), "29m", "pending", "a"),
        Case("allocated 4% at 30m", "GpuAllocatedButIdle", ((util, "allocated", "4x40"),), "30m", "firing", "a"),
        Case("allocated busy", "GpuAllocatedButIdle", ((util, "allocated", "95x40"),), "35m", ""),
    ]


SEVERITY = {
    "GpuTemperatureHigh": "warning",
    "GpuMemoryNearlyFull": "warning",
    "GpuXidError": "critical",
    "GpuRowRemapFailure": "critical",
    "GpuUncorrectableRemappedRows": "warning",
    "GpuMetricsExporterDown": "warning",
    "GpuAllocatedButIdle": "info",
}

# GKE's device plugin (container-engine-accelerators pkg/gpu/nvidia/metrics): duty_cycle per container
# (only for GPUs a container holds), *_gpu_node per GPU; accelerator_id names the GPU. No health fields.
DEVICE_PLUGIN_GPU = {"accelerator_id": "GPU-1"}
DEVICE_PLUGIN = {
    "idle": {**TARGET, "kubernetes_node": "n1", "cluster": "c1", "region": "r1", **DEVICE_PLUGIN_GPU},
    "allocated": WORKLOAD,
    "alert_workload": WORKLOAD,
}
DEVICE_PLUGIN_CASES = [
    *shared_cases("duty_cycle"),
    Case(
        "device plugin memory 96% after 10m",
        "GpuMemoryNearlyFull",
        (("memory_used_gpu_node", "idle", "96x20"), ("memory_total_gpu_node", "idle", "100x20")),
        "11m",
        "firing",
    ),
    Case(
        "device plugin memory at 95%",
        "GpuMemoryNearlyFull",
        (("memory_used_gpu_node", "idle", "95x20"), ("memory_total_gpu_node", "idle", "100x20")),
        "15m",
        "",
    ),
]


def selector(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def target_labels(stored: dict[str, Any]) -> dict[str, str]:
    """The labels the collector gives every series of the exporter target (`up` included): the idle GPU's
    without the exporter's own GPU labels."""
    return {k: v for k, v in stored["idle"].items() if k not in GPU and k not in DEVICE_PLUGIN_GPU}


def labels_of(stored: dict[str, Any], who: str) -> dict[str, str]:
    if who == "up":
        return target_labels(stored)
    return {**stored["idle"], **(stored["allocated"] if who == "allocated" else {})}


def promtool_case(stored: dict[str, Any], case: Case) -> dict[str, Any]:
    series = [{"series": selector(m, labels_of(stored, who)), "values": v} for m, who, v in case.series]
    expected: list[dict[str, Any]] = []
    if case.state:
        if case.on == "up":
            labels = target_labels(stored)
        elif case.on == "a":
            labels = {**stored["idle"], **stored["alert_workload"]}
        else:
            labels = dict(stored["idle"])
        labels |= {"alertname": case.alert, "alertstate": case.state, "severity": SEVERITY[case.alert]}
        expected = [{"labels": selector("ALERTS", labels), "value": 1}]
    return {
        "interval": "1m",
        "name": case.name,
        "input_series": series,
        "promql_expr_test": [
            {"expr": f'ALERTS{{alertname="{case.alert}"}}', "eval_time": case.at, "exp_samples": expected}
        ],
    }


def run(tmp_path: Path, platform: str, integration: str, cases: list[Case], stored: dict[str, Any]) -> str:
    rules = rule_groups(settings_for(platform, MonitoringConfig(integration=integration)))  # type: ignore[arg-type]
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rules))
    tests: dict[str, Any] = {"rule_files": ["gpu.rules.yml"], "evaluation_interval": "1m", "tests": []}
    tests["tests"] = [promtool_case(stored, c) for c in cases]
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    out = promtool_test(tmp_path)
    return "" if out.returncode == 0 else out.stdout + out.stderr


KEYS = sorted(all_models())


@pytest.mark.parametrize(("platform", "integration"), KEYS, ids=[f"{p}-{i}" for p, i in KEYS])
def test_alerts_mean_what_they_say_on_every_integration(platform: str, integration: str, tmp_path: Path) -> None:
    engine("promtool")
    kind = kind_of(platform, integration)
    if kind == "device-plugin":
        cases, stored = DEVICE_PLUGIN_CASES, DEVICE_PLUGIN
    else:
        cases, stored = [*DCGM_CASES, *shared_cases("DCGM_FI_DEV_GPU_UTIL")], STORED[kind]
    assert run(tmp_path, platform, integration, cases, stored) == ""


def test_every_alert_has_edge_cases() -> None:
    """Each alert the default rules carry has a firing and a silent case, and the cases name no other."""
    rules = rule_groups(settings_for("gke-standard", MonitoringConfig()))
    alerts = {r["alert"] for g in rules for r in g["rules"] if "alert" in r}
    cases = [*DCGM_CASES, *shared_cases("x")]
    assert alerts == set(SEVERITY) == {c.alert for c in cases}
    for name in alerts:
        states = {c.state for c in cases if c.alert == name}
        assert {"firing", ""} <= states, name


@pytest.mark.parametrize(
    ("mutation", "case"),
    [
        (lambda e: e.replace(" and (changes(DCGM_FI_DEV_XID_ERRORS[10m]) > 0)", ""), "XID over 10m ago"),
        (lambda e: e.replace("DCGM_FI_DEV_GPU_TEMP > 85", "DCGM_FI_DEV_GPU_TEMP >= 85"), "temp at 85 is not above"),
        (lambda e: e.replace("< 5", "<= 5"), "allocated at 5% is not below"),
        (lambda e: e.replace("[1h]", "[2h]"), "rows remapped over an hour ago"),
    ],
)
def test_the_edge_cases_catch_the_planted_bugs(mutation: Any, case: str, tmp_path: Path) -> None:
    """The audit's planted bugs (an XID alert firing forever, `>` against `>=`), and two like them, fail."""
    engine("promtool")
    rules = rule_groups(settings_for("gke-standard", MonitoringConfig()))
    for group in rules:
        for rule in group["rules"]:
            rule["expr"] = mutation(rule["expr"])
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rules))
    (chosen,) = [c for c in [*DCGM_CASES, *shared_cases("DCGM_FI_DEV_GPU_UTIL")] if c.name == case]
    tests = {
        "rule_files": ["gpu.rules.yml"],
        "evaluation_interval": "1m",
        "tests": [promtool_case(STORED["scrape"], chosen)],
    }
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode != 0, f"{case}: the mutated rule still passed"


def test_every_integration_stores_the_labels_written_here() -> None:
    """The label model of each platform x integration names the node and the metrics as the collectors
    documented above store them (so a model handed to the wrong platform fails by name)."""
    for (platform, integration), model in all_models().items():
        kind = kind_of(platform, integration)
        idle = (DEVICE_PLUGIN if kind == "device-plugin" else STORED[kind])["idle"]
        assert model.node in idle and model.cluster in idle and model.region in idle, (platform, integration)
        assert (model.metrics == "gke-device-plugin") is (kind == "device-plugin"), (platform, integration)
        # Only GMP leaves a workload label on a free GPU's series: its own `namespace` (the PodMonitoring's).
        assert set(model.idle) == ({"namespace"} if kind == "gmp" else set()), (platform, integration)
