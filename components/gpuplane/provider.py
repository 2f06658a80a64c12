"""The multi-language package: gpuplane's typed components for TypeScript, Go, YAML, ... programs.

Pulumi's Python component provider host infers the package schema (inputs, outputs, nested types,
enums and their docs) from each component's `args` TypedDict and class annotations
(pulumi/provider/experimental/analyzer.py). Every input is typed; none is a config-as-JSON string.
"""

from .aws.karpenter_pools import KarpenterGpuNodePools
from .aws.node_groups import EksGpuNodeGroups
from .aws.platform import EksGpuPlatform
from .gcp.autopilot import GkeAutopilotPlatform
from .gcp.platform import GkeGpuPlatform
from .gcp.pools import GkeGpuNodePools
from .monitoring.stack import GpuMonitoring
from .nvidia.dcgm import DcgmExporter
from .nvidia.operator import GpuOperator

COMPONENTS = [
    GkeGpuNodePools,
    EksGpuNodeGroups,
    KarpenterGpuNodePools,
    GpuOperator,
    DcgmExporter,
    GpuMonitoring,
    GkeGpuPlatform,
    GkeAutopilotPlatform,
    EksGpuPlatform,
]
"""What the plugin exposes (see provider/__main__.py)."""
