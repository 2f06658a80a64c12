"""Which labels a stored GPU series carries, per monitoring integration and platform (data, with sources).

Rules, the dashboard and the scrape settings are written against `LabelModel`, never against constants:

- dcgm-exporter adds `namespace`, `pod`, `container` to a GPU's series only while a pod holds that GPU
  (NVIDIA/dcgm-exporter internal/pkg/transformation/kubernetes.go `PodMapper.Process`: the attributes
  are set only when the device is in the kubelet's pod-resources mapping; an unallocated GPU keeps its
  plain device series). A time-shared GPU maps to one pod in the default mode (`toDeviceToPod`, one
  map entry per device id); a MIG instance maps to its own pod and carries `GPU_I_ID`/`GPU_I_PROFILE`
  (internal/pkg/rendermetrics/render_metrics.go).
- The seed's scrape job (scrape-config) adds only `kubernetes_node` (from `__meta_kubernetes_pod_node_name`)
  and gpuplane's `cluster`/`region`; no target label clashes with the exporter's, so they arrive intact.
- prometheus-operator always adds `namespace`, `pod`, `container`, `service`, `endpoint` target labels to a
  ServiceMonitor's targets, then appends the endpoint's own `relabelings` (prometheus-operator
  pkg/prometheus/promcfg.go `generateServiceMonitorConfig`). With `honorLabels: true` the exporter's labels
  win where it sets them, but an idle GPU would keep the exporter pod's `pod`: gpuplane's relabelings drop
  those three target labels (`DROPPED_TARGET_LABELS`), so every path carries the exporter's labels only.
- GKE Managed Prometheus (PodMonitoring) always sets `namespace` to the PodMonitoring's namespace, adds the
  metadata labels asked for (`node`), scrapes without honor_labels, and refuses relabeling onto
  `namespace` (prometheus-engine pkg/operator/apis/monitoring/v1/pod_config.go `endpointScrapeConfig`,
  `protectedLabel`). The workload's namespace therefore lands in `exported_namespace`; an idle GPU
  carries `namespace` = the exporter's namespace; GMP adds `cluster`, `location`, `project_id`.
- GKE's device plugin (Autopilot, scrape-config) serves `duty_cycle` per container with
  `namespace`/`pod`/`container`, and per-GPU `*_gpu_node` series (GoogleCloudPlatform/container-engine-
  accelerators pkg/gpu/nvidia/metrics); the seed's job adds `kubernetes_node`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..catalog.platforms import PLATFORMS

WORKLOAD = ("namespace", "pod", "container")
"""The workload labels rules and alerts present, whatever label the integration stores them in."""

DROPPED_TARGET_LABELS = WORKLOAD
"""Target labels prometheus-operator adds to every ServiceMonitor target (promcfg.go) that gpuplane's
relabelings remove, so that only dcgm-exporter's own workload labels remain (with `honorLabels: true`)."""


@dataclass(frozen=True)
class LabelModel:
    """Labels of a stored GPU series on one integration x platform."""

    node: str
    """Label naming the GPU's node."""
    workload: Mapping[str, str]
    """Canonical workload label (`namespace`, `pod`, `container`) -> the label it is stored in."""
    idle: tuple[str, ...]
    """Workload labels an unallocated GPU still carries (with the exporter pod's values, not a workload's)."""
    cluster: str
    """Label naming the cluster (gpuplane's relabelling, or GMP's own)."""
    region: str
    """Label naming the region or location."""
    metrics: str = "dcgm"
    """Key of `rules.METRIC_SETS`."""
    honor_labels: bool | None = None
    """ServiceMonitor `honorLabels` (None: the integration has no ServiceMonitor)."""
    drop_target_labels: tuple[str, ...] = ()
    """Target labels the ServiceMonitor's relabelings drop."""
    source: str = ""
    """Where the entry comes from."""
    extra: Mapping[str, str] = field(default_factory=dict)
    """Other labels the collector adds (name -> what it holds)."""
    state: Mapping[str, str] = field(default_factory=lambda: dict(zip(WORKLOAD, WORKLOAD, strict=True)))
    """kube-state-metrics' own `namespace`, `pod`, `container` labels -> the label they are stored in (the cost
    rules read its pod requests and node labels)."""

    def stored(self, label: str) -> str:
        """The stored label name of a canonical workload label."""
        return self.workload.get(label, label)


_SAME = MappingProxyType({k: k for k in WORKLOAD})
_GMP_WORKLOAD = MappingProxyType({"namespace": "exported_namespace", "pod": "pod", "container": "container"})
"""GKE Managed Prometheus keeps `namespace` for the monitor's namespace: a scraped `namespace` lands in
`exported_namespace` (pod_config.go `protectedLabel`); kube-state-metrics scraped by a PodMonitoring likewise."""

SCRAPE_CONFIG = LabelModel(
    node="kubernetes_node",
    workload=_SAME,
    idle=(),
    cluster="cluster",
    region="region",
    source="the seed's gpu-metrics job (kubernetes_node relabel) + gpuplane's cluster/region relabels; "
    "dcgm-exporter internal/pkg/transformation/kubernetes.go",
)
PROMETHEUS_OPERATOR = LabelModel(
    node="kubernetes_node",
    workload=_SAME,
    idle=(),
    cluster="cluster",
    region="region",
    honor_labels=True,
    drop_target_labels=DROPPED_TARGET_LABELS,
    source="prometheus-operator pkg/prometheus/promcfg.go generateServiceMonitorConfig (target labels, then "
    "the endpoint's relabelings); gpuplane drops namespace/pod/container and honours the exporter's labels",
    extra=MappingProxyType({"service": "exporter Service", "endpoint": "port name"}),
)
GKE_MANAGED = LabelModel(
    node="node",
    workload=_GMP_WORKLOAD,
    idle=("namespace",),
    cluster="cluster",
    region="location",
    source="prometheus-engine pkg/operator/apis/monitoring/v1/pod_config.go (namespace always the "
    "PodMonitoring's, metadata label node, no honor_labels, namespace protected from relabeling)",
    extra=MappingProxyType({"project_id": "GCP project", "location": "cluster location"}),
    state=_GMP_WORKLOAD,
)
AUTOPILOT_DEVICE_PLUGIN = LabelModel(
    node="kubernetes_node",
    workload=_SAME,
    idle=(),
    cluster="cluster",
    region="region",
    metrics="gke-device-plugin",
    source="the seed's job on GKE's nvidia-gpu-device-plugin pods (:2112; container-engine-accelerators "
    "pkg/gpu/nvidia/metrics: duty_cycle per container, *_gpu_node per GPU)",
)
AUTOPILOT_MANAGED_DCGM = LabelModel(
    node="node",
    workload=_SAME,
    idle=(),
    cluster="cluster",
    region="location",
    source="GKE's managed DCGM collection (not open source): labels as Google's ClusterPodMonitoring example "
    "(prometheus-engine examples/nvidia-dcgm: targetLabels.metadata [], so the exporter's workload labels "
    "stay) with GMP's node/cluster/location; unverified against a live cluster",
    extra=MappingProxyType({"project_id": "GCP project", "location": "cluster location"}),
    state=_GMP_WORKLOAD,
)

BY_INTEGRATION: Mapping[str, LabelModel] = MappingProxyType(
    {
        "scrape-config": SCRAPE_CONFIG,
        "prometheus-operator": PROMETHEUS_OPERATOR,
        "install": PROMETHEUS_OPERATOR,  # kube-prometheus-stack scrapes the same ServiceMonitor
        "gke-managed": GKE_MANAGED,
    }
)
"""Integration -> label model where the exporter is dcgm-exporter (GKE Standard, NAP, EKS, Auto Mode)."""

PLATFORM_OVERRIDES: Mapping[tuple[str, str], LabelModel] = MappingProxyType(
    {
        ("gke-autopilot", "scrape-config"): AUTOPILOT_DEVICE_PLUGIN,
        ("gke-autopilot", "gke-managed"): AUTOPILOT_MANAGED_DCGM,
    }
)
"""(platform, integration) -> label model where the metrics source is the platform's own."""


def label_model(platform: str, integration: str) -> LabelModel:
    """The labels a stored GPU series carries on `platform` with `integration`."""
    return PLATFORM_OVERRIDES.get((platform, integration), BY_INTEGRATION[integration])


def all_models() -> dict[tuple[str, str], LabelModel]:
    """Every (platform, integration) the platform matrix allows, with its label model."""
    return {(p.name, i): label_model(p.name, i) for p in PLATFORMS.values() for i in p.integrations}
