"""gpuplane: GPU-ready Kubernetes as code (Pulumi components for EKS and GKE).

Names are imported lazily, so importing a GKE component never loads the AWS SDKs and vice versa:

    from components import GkeGpuPlatform, EksGpuPlatform, parse_config, placement
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "parse_config": "components.config",
    "ConfigError": "components.config",
    "StackConfig": "components.config",
    "placement": "components.placement",
    "pod": "components.placement",
    "GPUS": "components.catalog",
    "PLATFORMS": "components.catalog",
    "GkeGpuCluster": "components.gcp",
    "GkeGpuClusterArgs": "components.gcp",
    "GkeGpuPlatform": "components.gcp",
    "GkeGpuNodePools": "components.gcp",
    "GkeGpuNodePoolsArgs": "components.gcp",
    "GkeAutopilotPlatform": "components.gcp.autopilot",
    "EksGpuCluster": "components.aws",
    "EksGpuClusterArgs": "components.aws",
    "EksGpuPlatform": "components.aws",
    "ClusterAutoscaler": "components.aws",
    "Karpenter": "components.aws.karpenter",
    "KarpenterArgs": "components.aws.karpenter",
    "GpuOperator": "components.nvidia.operator",
    "GpuOperatorArgs": "components.nvidia.operator",
    "DcgmExporter": "components.nvidia.dcgm",
    "DcgmExporterArgs": "components.nvidia.dcgm",
    "GpuMonitoring": "components.monitoring.stack",
    "GpuMonitoringArgs": "components.monitoring.stack",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'components' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
