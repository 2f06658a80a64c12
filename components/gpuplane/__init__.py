"""gpuplane: GPU-ready Kubernetes as code (Pulumi components for EKS and GKE).

Names are imported lazily, so importing a GKE component never loads the AWS SDKs and vice versa:

    from gpuplane import GkeGpuPlatform, EksGpuPlatform, parse_config, placement
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "parse_config": "gpuplane.config",
    "ConfigError": "gpuplane.config",
    "StackConfig": "gpuplane.config",
    "placement": "gpuplane.placement",
    "pod": "gpuplane.placement",
    "GPUS": "gpuplane.catalog",
    "PLATFORMS": "gpuplane.catalog",
    "GkeGpuCluster": "gpuplane.gcp",
    "GkeGpuClusterArgs": "gpuplane.gcp",
    "GkeGpuPlatform": "gpuplane.gcp",
    "GkeGpuNodePools": "gpuplane.gcp",
    "GkeGpuNodePoolsArgs": "gpuplane.gcp",
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
    "GpuMonitoringArgs": "gpuplane.monitoring.stack",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gpuplane' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
