"""A Grafana dashboard for GPUs, shipped as a ConfigMap the Grafana sidecar picks up."""

from __future__ import annotations

import json
from typing import Any

from . import cost
from .rules import RuleSettings, allocated

SIDECAR_LABEL = {"grafana_dashboard": "1"}
"""kube-prometheus-stack's Grafana sidecar loads ConfigMaps with this label (its default)."""


def _panel(
    pid: int, title: str, expr: str, legend: str, unit: str, x: int, y: int, kind: str = "timeseries"
) -> dict[str, Any]:
    return {
        "id": pid,
        "type": kind,
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {
                "refId": "A",
                "expr": expr,
                "legendFormat": legend,
                **({"format": "table", "instant": True} if kind == "table" else {}),
            }
        ],
    }


def dashboard(s: RuleSettings) -> dict[str, Any]:
    """Utilisation, memory, power, temperature, per-pod use and the idle-allocated list."""
    n = s.node_label
    gpu = f"{{{{{n}}}}} / GPU {{{{gpu}}}}"
    panels = [
        _panel(1, "GPU utilisation", "DCGM_FI_DEV_GPU_UTIL", gpu, "percent", 0, 0),
        _panel(
            2,
            "GPU memory used",
            "DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)",
            gpu,
            "percentunit",
            12,
            0,
        ),
        _panel(3, "Power draw", "DCGM_FI_DEV_POWER_USAGE", gpu, "watt", 0, 8),
        _panel(4, "Temperature", "DCGM_FI_DEV_GPU_TEMP", gpu, "celsius", 12, 8),
        _panel(
            5,
            "GPU utilisation per pod",
            "gpuplane:gpu_utilization:avg_by_pod",
            "{{namespace}}/{{pod}}",
            "percent",
            0,
            16,
        ),
        _panel(
            6,
            f"Allocated but idle (< {s.idle_percent:g}% now)",
            f"{allocated('DCGM_FI_DEV_GPU_UTIL', s.labels)} < {s.idle_percent:g}",
            "{{namespace}}/{{pod}}",
            "percent",
            12,
            16,
            kind="table",
        ),
    ]
    if s.cost is not None:
        panels += cost_panels(24)
    return {
        "uid": "gpuplane-gpus",
        "title": "GPUs (gpuplane)",
        "tags": ["gpu", "dcgm", "gpuplane"],
        "schemaVersion": 39,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "templating": {
            "list": [{"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"}]
        },
        "panels": panels,
    }


def dashboard_configmap(namespace: str, s: RuleSettings) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "gpuplane-gpu-dashboard", "namespace": namespace, "labels": dict(SIDECAR_LABEL)},
        "data": {"gpuplane-gpus.json": json.dumps(dashboard(s), indent=1, sort_keys=True)},
    }


def cost_panels(y: int) -> list[dict[str, Any]]:
    """What the GPUs cost per hour (the cost rules' series): by namespace, by pool held and not, and the
    waste: GPUs nobody holds, empty GPU nodes, GPUs held but idle."""
    return [
        _panel(7, "GPU cost by namespace ($/h)", cost.BY_NAMESPACE, "{{namespace}}", "currencyUSD", 0, y),
        _panel(8, "GPU cost by pool, allocated ($/h)", cost.BY_POOL, "{{pool}}", "currencyUSD", 12, y),
        _panel(9, "Unallocated GPUs ($/h)", cost.UNALLOCATED, "{{pool}}", "currencyUSD", 0, y + 8),
        _panel(10, "Empty GPU nodes ($/h)", cost.EMPTY_NODES, "{{pool}}", "currencyUSD", 12, y + 8),
        _panel(11, "Held but idle ($/h)", cost.IDLE_ALLOCATED, "{{namespace}} on {{pool}}", "currencyUSD", 0, y + 16),
    ]
