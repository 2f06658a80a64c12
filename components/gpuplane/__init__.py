"""gpuplane: GPU-ready Kubernetes as code (Pulumi components for EKS and GKE).

Names are imported lazily, so importing a GKE component never loads the AWS SDKs and vice versa:

    from gpuplane import GkeGpuPlatform, EksGpuPlatform, GpuMonitoring, placement
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "parse_config": "gpuplane.config",
    "ConfigError": "gpuplane.config",
    "StackConfig": "gpuplane.config",
    "GPUS": "gpuplane.catalog",
    "PLATFORMS": "gpuplane.catalog",
    "GkeGpuCluster": "gpuplane.gcp",
    "GkeGpuClusterArgs": "gpuplane.gcp",
    "GkeGpuPlatform": "gpuplane.gcp",
    "GkeGpuNodePools": "gpuplane.gcp",
    "GkeGpuNodePoolsArgs": "gpuplane.gcp",
    "EksGpuNodeGroups": "gpuplane.aws.node_groups",
    "EksGpuNodeGroupsArgs": "gpuplane.aws.node_groups",
    "KarpenterGpuNodePools": "gpuplane.aws.karpenter_pools",
    "KarpenterGpuNodePoolsArgs": "gpuplane.aws.karpenter_pools",
    "KarpenterSettingsArgs": "gpuplane.aws.karpenter_pools",
    "ArgsError": "gpuplane.args.checks",
    "GpuNodes": "gpuplane.args.inputs",
    "GpuPoolArgs": "gpuplane.args.inputs",
    "GpuType": "gpuplane.args.inputs",
    "CapacityType": "gpuplane.args.inputs",
    "ReservationArgs": "gpuplane.args.inputs",
    "ReservationType": "gpuplane.args.inputs",
    "AmiType": "gpuplane.args.inputs",
    "ExporterHost": "gpuplane.args.inputs",
    "SharingStrategy": "gpuplane.args.inputs",
    "TaintEffect": "gpuplane.args.inputs",
    "GkeAutopilotPlatform": "gpuplane.gcp.autopilot",
    "EksGpuCluster": "gpuplane.aws",
    "EksGpuClusterArgs": "gpuplane.aws",
    "EksGpuPlatform": "gpuplane.aws",
    "ClusterAutoscaler": "gpuplane.aws",
    "Karpenter": "gpuplane.aws.karpenter",
    "KarpenterArgs": "gpuplane.aws.karpenter",
    "GpuOperator": "gpuplane.nvidia.operator",
    "GpuOperatorArgs": "gpuplane.nvidia.operator",
    "DcgmExporter": "gpuplane.nvidia.dcgm",
    "DcgmExporterArgs": "gpuplane.nvidia.dcgm",
    "NvidiaDraDriver": "gpuplane.nvidia.dra",
    "NvidiaDraDriverArgs": "gpuplane.nvidia.dra",
    "DraHostKind": "gpuplane.nvidia.dra",
    "GpuAllocation": "gpuplane.args.inputs",
    "GpuMonitoring": "gpuplane.monitoring.stack",
    "GpuMonitoringArgs": "gpuplane.args.platform",
    "MonitoringArgs": "gpuplane.args.platform",
    "MonitoringIntegration": "gpuplane.args.platform",
    "MonitoredExporter": "gpuplane.args.platform",
    "CrdSource": "gpuplane.args.platform",
    "ClusterArgs": "gpuplane.args.platform",
    "GcpArgs": "gpuplane.args.platform",
    "AwsArgs": "gpuplane.args.platform",
    "ReleaseChannel": "gpuplane.args.platform",
    "GkeGpuPlatformArgs": "gpuplane.gcp.platform",
    "GkePlatformKind": "gpuplane.gcp.platform",
    "GkeAutopilotPlatformArgs": "gpuplane.gcp.autopilot",
    "EksGpuPlatformArgs": "gpuplane.aws.platform",
    "EksPlatformKind": "gpuplane.aws.platform",
    "KueueQueues": "gpuplane.kueue",
    "KueueQueuesArgs": "gpuplane.kueue",
    "MultiKueueManager": "gpuplane.kueue",
    "MultiKueueManagerArgs": "gpuplane.kueue",
    "GpuAutoscaler": "gpuplane.autoscaling",
    "GpuAutoscalerArgs": "gpuplane.autoscaling",
    "Keda": "gpuplane.autoscaling",
    "KedaArgs": "gpuplane.autoscaling",
    "ScalingSignal": "gpuplane.autoscaling",
    "autoscaled": "gpuplane.autoscaling",
    "ModelStores": "gpuplane.storage",
    "ModelStoresArgs": "gpuplane.storage",
    "StoreArgs": "gpuplane.storage",
    "StoreAccessArgs": "gpuplane.storage",
    "StoreCloud": "gpuplane.storage",
    "mounts": "gpuplane.storage",
    "gke_kubeconfig": "gpuplane.k8s.kubeconfig",
    "eks_kubeconfig": "gpuplane.k8s.kubeconfig",
    "kubernetes_provider": "gpuplane.k8s.kubeconfig",
}

# `placement` and `pod`, the placement helpers, are bound eagerly (`gpuplane.scheduling.placement`).
from .scheduling.placement import placement as placement  # noqa: E402
from .scheduling.placement import pod as pod  # noqa: E402

__all__ = sorted([*_EXPORTS, "placement", "pod"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gpuplane' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
