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
    "ArgsError": "gpuplane.argcheck",
    "GpuNodes": "gpuplane.inputs",
    "GpuPoolArgs": "gpuplane.inputs",
    "GpuType": "gpuplane.inputs",
    "CapacityType": "gpuplane.inputs",
    "ReservationArgs": "gpuplane.inputs",
    "ReservationType": "gpuplane.inputs",
    "AmiType": "gpuplane.inputs",
    "ExporterHost": "gpuplane.inputs",
    "SharingStrategy": "gpuplane.inputs",
    "TaintEffect": "gpuplane.inputs",
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
    "GpuMonitoring": "gpuplane.monitoring.stack",
    "GpuMonitoringArgs": "gpuplane.platform_args",
    "MonitoringArgs": "gpuplane.platform_args",
    "MonitoringIntegration": "gpuplane.platform_args",
    "MonitoredExporter": "gpuplane.platform_args",
    "CrdSource": "gpuplane.platform_args",
    "ClusterArgs": "gpuplane.platform_args",
    "GcpArgs": "gpuplane.platform_args",
    "AwsArgs": "gpuplane.platform_args",
    "ReleaseChannel": "gpuplane.platform_args",
    "GkeGpuPlatformArgs": "gpuplane.gcp.platform",
    "GkePlatformKind": "gpuplane.gcp.platform",
    "GkeAutopilotPlatformArgs": "gpuplane.gcp.autopilot",
    "EksGpuPlatformArgs": "gpuplane.aws.platform",
    "EksPlatformKind": "gpuplane.aws.platform",
    "KueueQueues": "gpuplane.kueue",
    "KueueQueuesArgs": "gpuplane.kueue",
    "gke_kubeconfig": "gpuplane.kubeconfig",
    "eks_kubeconfig": "gpuplane.kubeconfig",
    "kubernetes_provider": "gpuplane.kubeconfig",
}

# `placement` is both a module and its main function: bind the function eagerly, or the first import of
# the submodule would set the package attribute `placement` to the module (shadowing `__getattr__`).
from .placement import placement as placement  # noqa: E402
from .placement import pod as pod  # noqa: E402

__all__ = sorted([*_EXPORTS, "placement", "pod"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gpuplane' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
