"""GKE: clusters, GPU node pools and the GKE Standard platform."""

from . import _sdk  # noqa: F401  (first: `pip install 'gpuplane[gcp]'` when the SDK is missing)
from .cluster import GkeGpuCluster, GkeGpuClusterArgs
from .platform import GkeGpuPlatform
from .pools import GkeGpuNodePools, GkeGpuNodePoolsArgs

__all__ = ["GkeGpuCluster", "GkeGpuClusterArgs", "GkeGpuNodePools", "GkeGpuNodePoolsArgs", "GkeGpuPlatform"]
