"""GKE: clusters, GPU node pools and the GKE Standard platform."""

from .cluster import GkeGpuCluster, GkeGpuClusterArgs
from .platform import GkeGpuPlatform

__all__ = ["GkeGpuCluster", "GkeGpuClusterArgs", "GkeGpuPlatform"]
