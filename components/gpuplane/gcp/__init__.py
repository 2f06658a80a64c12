"""GKE: clusters, GPU node pools and the GKE Standard platform."""

from . import _sdk  # noqa: F401  (first: `pip install 'gpuplane[gcp]'` when the SDK is missing)
from .cluster import GkeGpuCluster, GkeGpuClusterArgs, GkeGpuNodePools, GkeGpuNodePoolsArgs
from .platform import GkeGpuPlatform

__all__ = ["GkeGpuCluster", "GkeGpuClusterArgs", "GkeGpuNodePools", "GkeGpuNodePoolsArgs", "GkeGpuPlatform"]
