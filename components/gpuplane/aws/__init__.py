"""EKS: VPC, cluster, managed GPU node groups, cluster-autoscaler and the EKS platform."""

from . import _sdk  # noqa: F401  (first: `pip install 'gpuplane[aws]'` when the SDK is missing)
from .autoscaler import ClusterAutoscaler
from .cluster import EksGpuCluster, EksGpuClusterArgs
from .network import EksVpc
from .platform import EksGpuPlatform

__all__ = ["ClusterAutoscaler", "EksGpuCluster", "EksGpuClusterArgs", "EksGpuPlatform", "EksVpc"]
