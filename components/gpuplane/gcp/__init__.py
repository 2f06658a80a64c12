"""GKE: clusters, GPU node pools and the GKE Standard platform."""

from .cluster import GkeGpuCluster, GkeGpuClusterArgs
from .platform import GkeGpuPlatform
from .pools import GkeGpuNodePools, GkeGpuNodePoolsArgs

__all__ = ["GkeGpuCluster", "GkeGpuClusterArgs", "GkeGpuNodePools", "GkeGpuNodePoolsArgs", "GkeGpuPlatform"]
