"""Monitoring section of the stack config (`gpuplane:monitoring`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from .base import DNS_LABEL as _DNS_LABEL
from .base import DURATION as _DURATION
from .base import Model as _Model
from .base import context_value, valid_labels


def duration_seconds(text: str) -> float:
    """Seconds in a Prometheus-style duration such as `15s`, `500ms`, `1m`."""
    m = re.fullmatch(_DURATION.strip("^$"), text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    unit = m.group(1)
    return float(text[: -len(unit)]) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


INTEGRATIONS = ("scrape-config", "prometheus-operator", "gke-managed", "install")


class MonitoringConfig(_Model):
    """How GPU metrics reach Prometheus, and the GPU alert thresholds."""

    integration: Literal["scrape-config", "prometheus-operator", "gke-managed", "install"] = Field(
        default="scrape-config", validate_default=True
    )
    """`scrape-config` (a job for your Prometheus), `prometheus-operator` (ServiceMonitor + PrometheusRule),
    `gke-managed` (PodMonitoring + GKE Managed Prometheus) or `install` (kube-prometheus-stack with Grafana)."""
    prometheusOperatorCrds: Literal["install", "existing"] = "install"
    """Where the prometheus-operator CRDs (ServiceMonitor, PrometheusRule, ...) come from, for the
    integrations that use them. `install`: gpuplane installs them (the `prometheus-operator-crds` chart with
    `prometheus-operator`; kube-prometheus-stack's own with `install`). `existing`: the cluster already has
    them, at prometheus-operator v0.93.1 or compatible (a cluster you bring that runs Prometheus Operator);
    gpuplane installs none."""
    namespace: str = Field(default="gpu-monitoring", pattern=_DNS_LABEL, max_length=63)
    """Namespace of a standalone GPU metrics exporter (GKE Standard)."""
    scrapeInterval: str = Field(default="15s", pattern=_DURATION)
    """Prometheus scrape interval for the `gpu-metrics` job."""
    scrapeTimeout: str = Field(default="10s", pattern=_DURATION)
    """Prometheus scrape timeout; must not exceed the interval."""
    selectorLabels: dict[str, str] = Field(default_factory=lambda: {"release": "kube-prometheus-stack"})
    """Labels your Prometheus selects ServiceMonitors and PrometheusRules by (`prometheus-operator`)."""
    installNamespace: str = Field(default="monitoring", pattern=_DNS_LABEL, max_length=63)
    """Namespace for kube-prometheus-stack (`install`)."""
    idleWindow: str = Field(default="30m", pattern=_DURATION)
    """How long an allocated GPU may stay idle before `GpuAllocatedButIdle` fires."""
    idlePercent: float = Field(default=5.0, gt=0, le=100)
    """Utilisation (%) under which an allocated GPU counts as idle."""
    temperatureCelsius: float = Field(default=85.0, gt=0, le=120)
    """`GpuTemperatureHigh` threshold."""
    memoryRatio: float = Field(default=0.95, gt=0, lt=1)
    """`GpuMemoryNearlyFull` threshold (used / total framebuffer)."""

    @field_validator("integration")
    @classmethod
    def _integration_on_platform(cls, v: str, info: ValidationInfo) -> str:
        allowed = context_value(info, "integrations")
        if isinstance(allowed, tuple) and v not in allowed:
            raise ValueError(f"{v!r} is not available on this platform (available: {', '.join(allowed)})")
        return v

    @field_validator("scrapeTimeout")
    @classmethod
    def _timeout_le_interval(cls, v: str, info: ValidationInfo) -> str:
        interval = info.data.get("scrapeInterval")
        if interval is not None and duration_seconds(v) > duration_seconds(interval):
            raise ValueError(f"must not exceed scrapeInterval ({interval})")
        return v

    _valid_selector = field_validator("selectorLabels")(valid_labels)
