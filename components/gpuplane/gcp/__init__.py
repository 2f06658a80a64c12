"""GKE: clusters, GPU node pools and the GKE Standard platform."""

from .cluster import GkeGpuCluster, GkeGpuClusterArgs, GkeGpuNodePools, GkeGpuNodePoolsArgs
from .platform import GkeGpuPlatform

__all__ = ["GkeGpuCluster", "GkeGpuClusterArgs", "GkeGpuNodePools", "GkeGpuNodePoolsArgs", "GkeGpuPlatform"]
