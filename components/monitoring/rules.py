"""GPU alerting and recording rules on DCGM metric names (dcgm-exporter's default counters).

One set of rule groups serves every integration: a rules file for a plain Prometheus, or the
`spec.groups` of a PrometheusRule. ECC counters are not in dcgm-exporter's default counter lists, so
memory errors are watched through the row-remap counters, which are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from .scrape import JOB_NAME

METRICS_USED: tuple[str, ...] = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
)
"""DCGM fields the rules and dashboard read; tests check each is in dcgm-exporter's default counters."""


@dataclass(frozen=True)
class RuleSettings:
    """Thresholds and label names for the GPU rules."""

    node_label: str = "kubernetes_node"
    """Label naming a GPU's node: `kubernetes_node` (gpuplane's relabelling) or `node` (GKE Managed Prometheus)."""
    idle_window: str = "30m"
    """How long an allocated GPU must stay under `idle_percent` before the idle alert fires."""
    idle_percent: float = 5.0
    temperature_celsius: float = 85.0
    memory_ratio: float = 0.95
    job: str = JOB_NAME


def _alert(name: str, expr: str, for_: str, severity: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity},
        "annotations": {"summary": summary, "description": description},
    }


def rule_groups(s: RuleSettings) -> list[dict[str, Any]]:
    """Prometheus rule groups: GPU health alerts, the idle-allocated (cost) alert, utilisation records."""
    n = s.node_label
    alerts = [
        _alert(
            "GpuMetricsExporterDown",
            f'up{{job="{s.job}"}} == 0',
            "5m",
            "warning",
            "GPU metrics exporter is down",
            f"dcgm-exporter target {{{{ $labels.instance }}}} of job {s.job} has been unreachable for 5 minutes.",
        ),
        _alert(
            "GpuXidError",
            "DCGM_FI_DEV_XID_ERRORS != 0",
            "0m",
            "critical",
            "GPU reported an XID error",
            f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.{n} }}}} reported XID {{{{ $value }}}}.",
        ),
        _alert(
            "GpuTemperatureHigh",
            f"DCGM_FI_DEV_GPU_TEMP > {s.temperature_celsius:g}",
            "5m",
            "warning",
            "GPU temperature is high",
            f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.{n} }}}} is at {{{{ $value }}}} C.",
        ),
        _alert(
            "GpuMemoryNearlyFull",
            f"DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > {s.memory_ratio:g}",
            "10m",
            "warning",
            "GPU memory is nearly full",
            f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.{n} }}}} has used {{{{ $value | humanizePercentage }}}} "
            "of its memory for 10 minutes.",
        ),
        _alert(
            "GpuRowRemapFailure",
            "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0",
            "0m",
            "critical",
            "GPU memory row remapping failed",
            f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.{n} }}}} could not remap a faulty memory row; drain the node.",
        ),
        _alert(
            "GpuUncorrectableRemappedRows",
            "increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS[1h]) > 0",
            "0m",
            "warning",
            "GPU remapped rows after uncorrectable memory errors",
            f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.{n} }}}} remapped rows after uncorrectable errors; "
            "it needs a reset.",
        ),
        _alert(
            "GpuAllocatedButIdle",
            f'DCGM_FI_DEV_GPU_UTIL{{pod!=""}} < {s.idle_percent:g}',
            s.idle_window,
            "info",
            "A GPU is allocated to a pod but idle",
            f"Pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} holds GPU {{{{ $labels.gpu }}}} on "
            f"{{{{ $labels.{n} }}}} below {s.idle_percent:g}% utilisation for {s.idle_window}: rightsize it.",
        ),
    ]
    records = [
        {"record": "gpuplane:gpu_utilization:avg_by_node", "expr": f"avg by ({n}) (DCGM_FI_DEV_GPU_UTIL)"},
        {
            "record": "gpuplane:gpu_utilization:avg_by_namespace",
            "expr": 'avg by (namespace) (DCGM_FI_DEV_GPU_UTIL{pod!=""})',
        },
        {
            "record": "gpuplane:gpu_utilization:avg_by_pod",
            "expr": 'avg by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL{pod!=""})',
        },
        {
            "record": "gpuplane:gpus_allocated:count_by_namespace",
            "expr": 'count by (namespace) (DCGM_FI_DEV_GPU_UTIL{pod!=""})',
        },
    ]
    return [
        {"name": "gpuplane-gpu-alerts", "rules": alerts},
        {"name": "gpuplane-gpu-utilization", "interval": "1m", "rules": records},
    ]


def rules_file_yaml(groups: list[dict[str, Any]]) -> str:
    """A Prometheus rules file (`rule_files:` entry)."""
    return str(yaml.safe_dump({"groups": groups}, sort_keys=False, width=120))


def prometheus_rule_manifest(namespace: str, labels: dict[str, str], groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The same groups as a prometheus-operator PrometheusRule."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "gpuplane-gpu-rules", "namespace": namespace, "labels": dict(labels)},
        "spec": {"groups": groups},
    }
