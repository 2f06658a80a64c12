"""The pinned charts' pod templates whose scheduling gpuplane's values influence: which values path holds
each pod's nodeSelector/affinity/tolerations and the chart's own defaults there (split from
`scheduling`, which merges them with the values and matches them against node shapes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class ChartPod:
    """One pod template of a chart: where its scheduling values live and the chart's defaults there."""

    name: str
    path: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    enabled: tuple[str, bool] | None = None
    derive: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    """Scheduling fields the chart's template builds from other values (they override the defaults)."""
    daemonset: bool = False
    """The template is a DaemonSet's: it must run on every node it selects, not just on one."""
    anywhere_or_nowhere: bool = False
    """A DaemonSet that may select no node of a cluster (then it runs no pod, which is no error)."""


def efa_plugin_affinity(values: Mapping[str, Any]) -> dict[str, Any]:
    """The EFA device plugin's node affinity as its template renders it from `supportedInstanceLabels`
    (chart default: the EFA instance types; gpuplane sets its EFA pools' types)."""
    labels = values.get("supportedInstanceLabels") or {}
    terms = [
        {
            "matchExpressions": [
                {"key": k, "operator": "In", "values": list(labels.get("values") or [])},
                {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["auto"]},
            ]
        }
        for k in labels.get("keys") or []
    ]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


_NO_SCHEDULE_EXISTS = [{"operator": "Exists", "effect": "NoSchedule"}]
_CONTROL_PLANE_EQUAL = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}
CHART_PODS: Mapping[str, tuple[ChartPod, ...]] = MappingProxyType(
    {
        # karpenter 1.14.1 values.yaml: nodeSelector kubernetes.io/os=linux, tolerate CriticalAddonsOnly,
        # and required affinity `karpenter.sh/nodepool DoesNotExist` (never on a node it manages).
        "karpenter": (
            ChartPod(
                "controller",
                "",
                {
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}
                                ]
                            }
                        }
                    },
                },
            ),
        ),
        # cluster-autoscaler 9.59.0 values.yaml: empty nodeSelector, tolerations and affinity.
        "cluster-autoscaler": (ChartPod("cluster-autoscaler", ""),),
        # dcgm-exporter 4.8.2 values.yaml: tolerates the control-plane taint only.
        "dcgm-exporter": (
            ChartPod(
                "exporter",
                "",
                {
                    "tolerations": [
                        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}
                    ]
                },
                daemonset=True,
            ),
        ),
        # gpu-operator v26.7.0 values.yaml: the operator Deployment (nodeSelector kubernetes.io/os=linux,
        # control-plane toleration) and NFD's master and gc (node-feature-discovery subchart: no selector).
        # Operand DaemonSets are placed by the operator on nodes NFD labels as NVIDIA, so not checked here.
        "gpu-operator": (
            ChartPod(
                "operator",
                "operator",
                {
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [_CONTROL_PLANE_EQUAL],
                },
            ),
            ChartPod(
                "nfd-master",
                "node-feature-discovery.master",
                {"tolerations": [_CONTROL_PLANE_EQUAL]},
                enabled=("nfd.enabled", True),
            ),
            ChartPod("nfd-gc", "node-feature-discovery.gc", enabled=("nfd.enabled", True)),
        ),
        # kube-prometheus-stack 88.5.3 values.yaml (and its grafana/kube-state-metrics subcharts): empty
        # scheduling values; node-exporter is a DaemonSet that tolerates every NoSchedule taint.
        "kube-prometheus-stack": (
            ChartPod("prometheus", "prometheus.prometheusSpec", enabled=("prometheus.enabled", True)),
            ChartPod("prometheus-operator", "prometheusOperator", enabled=("prometheusOperator.enabled", True)),
            ChartPod(
                "admission-webhook-patch-job",
                "prometheusOperator.admissionWebhooks.patch",
                enabled=("prometheusOperator.admissionWebhooks.patch.enabled", True),
            ),
            ChartPod("alertmanager", "alertmanager.alertmanagerSpec", enabled=("alertmanager.enabled", True)),
            ChartPod("grafana", "grafana", enabled=("grafana.enabled", True)),
            ChartPod("kube-state-metrics", "kube-state-metrics", enabled=("kubeStateMetrics.enabled", True)),
            ChartPod(
                "node-exporter",
                "prometheus-node-exporter",
                {"tolerations": _NO_SCHEDULE_EXISTS},
                enabled=("nodeExporter.enabled", True),
            ),
        ),
        # kueue 0.19.2 values.yaml: controllerManager nodeSelector {} and tolerations []; the KueueViz
        # backend and frontend (off unless `enableKueueViz`) have their own, also empty.
        "kueue": (
            ChartPod("controller-manager", "controllerManager"),
            ChartPod("kueueviz-backend", "kueueViz.backend", enabled=("enableKueueViz", False)),
            ChartPod("kueueviz-frontend", "kueueViz.frontend", enabled=("enableKueueViz", False)),
        ),
        # aws-efa-k8s-device-plugin v0.5.30 templates/daemonset.yaml: tolerates `CriticalAddonsOnly` (plus
        # `tolerations`; the simulator keeps only the values' list, the stricter reading), takes `nodeSelector`,
        # and requires `supportedInstanceLabels.keys` In `supportedInstanceLabels.values` and no Auto Mode.
        "aws-efa-k8s-device-plugin": (
            ChartPod(
                "device-plugin",
                "",
                {"tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}]},
                derive=lambda values: {"affinity": efa_plugin_affinity(values)},
            ),
        ),
        # dra-driver-nvidia-gpu 0.4.1 values.yaml: the controller (control-plane / CriticalAddonsOnly tolerations)
        # and the kubelet plugin DaemonSet, which tolerates `nvidia.com/gpu` and requires a node labelled as NVIDIA
        # (NFD's pci-10de labels, or `nvidia.com/gpu.present=true`).
        "dra-driver-nvidia-gpu": (
            ChartPod(
                "controller",
                "controller",
                {
                    "tolerations": [
                        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "CriticalAddonsOnly", "operator": "Exists"},
                    ]
                },
                # templates/controller.yaml renders the Deployment only for ComputeDomains
                enabled=("resources.computeDomains.enabled", True),
            ),
            ChartPod(
                "kubelet-plugin",
                "kubeletPlugin",
                {
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}
                                    for k, v in (
                                        ("feature.node.kubernetes.io/pci-10de.present", "true"),
                                        ("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
                                        ("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
                                        ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
                                        ("nvidia.com/gpu.present", "true"),
                                    )
                                ]
                            }
                        }
                    },
                },
                daemonset=True,
            ),
        ),
        # keda 2.20.2 (kedacore/charts @ cbb9bb8) templates: the operator, metrics server and webhooks Deployments
        # each select `kubernetes.io/os: linux` plus their own `nodeSelector`, else the top-level one, and take their
        # own `tolerations`, else the top-level ones (`.Values.operator.nodeSelector | default .Values.nodeSelector`);
        # values.yaml leaves all of them empty. gpuplane sets the top-level keys.
        "keda": tuple(
            ChartPod(pod, "", {"nodeSelector": {"kubernetes.io/os": "linux"}}, enabled=enabled)
            for pod, enabled in (
                ("operator", None),
                ("metrics-server", ("metricsServer.enabled", True)),
                ("webhooks", ("webhooks.enabled", True)),
            )
        ),
        "karpenter-crd": (),
        "prometheus-operator-crds": (),
    }
)
"""Chart -> pod templates whose placement gpuplane influences (values paths and chart defaults)."""


def _nma_affinity(*requirements: Mapping[str, Any]) -> dict[str, Any]:
    not_special = [
        {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["fargate", "auto", "hybrid"]},
        {"key": "sagemaker.amazonaws.com/compute-type", "operator": "NotIn", "values": ["hyperpod"]},
    ]
    terms = [{"matchExpressions": [*requirements, *not_special]}]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def _nma_dcgm_types() -> list[str]:
    from ...catalog.health import NMA_DCGM_INSTANCE_TYPES

    return sorted(NMA_DCGM_INSTANCE_TYPES)


ADDON_PODS: Mapping[str, tuple[ChartPod, ...]] = MappingProxyType(
    {
        # awslabs/mountpoint-s3-csi-driver @ 57c6bed (2.7.0) charts/aws-mountpoint-s3-csi-driver/templates: the
        # `s3-csi-node` DaemonSet selects `kubernetes.io/os: linux` plus `node.nodeSelector` and tolerates every taint
        # (`node.tolerateAllTaints`, true by default) plus `node.tolerations`; the `s3-csi-controller` Deployment
        # selects linux plus `controller.nodeSelector` and tolerates only `controller.tolerations` (none by default).
        "aws-mountpoint-s3-csi-driver": (
            ChartPod(
                "s3-csi-node",
                "node",
                {"nodeSelector": {"kubernetes.io/os": "linux"}},
                derive=lambda v: {
                    "tolerations": [
                        *([{"operator": "Exists"}] if v.get("tolerateAllTaints", True) else []),
                        *(v.get("tolerations") or []),
                    ]
                },
                daemonset=True,
            ),
            ChartPod("s3-csi-controller", "controller", {"nodeSelector": {"kubernetes.io/os": "linux"}}),
        ),
        # aws/eks-node-monitoring-agent @ 51af549 charts/eks-node-monitoring-agent/values.yaml: the agent tolerates
        # every taint on amd64/arm64 non-Auto nodes; `dcgm-server` selects the NVIDIA instance types on amd64 and
        # tolerates nothing. The add-on's `configurationValues` override them (as Helm values at these paths).
        "eks-node-monitoring-agent": (
            ChartPod(
                "eks-node-monitoring-agent",
                "nodeAgent",
                {
                    "tolerations": [{"operator": "Exists"}],
                    "affinity": _nma_affinity(
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}
                    ),
                },
                daemonset=True,
            ),
            ChartPod(
                "dcgm-server",
                "dcgmAgent",
                {
                    "tolerations": [],
                    "affinity": _nma_affinity(
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": _nma_dcgm_types()},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    ),
                },
                daemonset=True,
                anywhere_or_nowhere=True,  # a cluster whose GPU nodes are all arm64 (Grace) runs none
            ),
        ),
    }
)
"""EKS add-on -> its DaemonSets' scheduling, as `CHART_PODS` for charts."""


def chart_key(chart: str) -> str:
    """`oci://public.ecr.aws/karpenter/karpenter` and `karpenter` both name the chart `karpenter`."""
    return chart.rstrip("/").rsplit("/", 1)[-1]
