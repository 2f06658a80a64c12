"""Auto-provisioning sections of the stack config: GKE node auto-provisioning and Karpenter.

With auto-provisioning, `gpuplane:gpuPools` entries are GPU *classes*: which GPU, spot or not, and a
ceiling (`maxNodes` x `gpusPerNode` GPUs). They become NAP resource limits or Karpenter NodePools.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import DURATION, shaped
from .base import Model as _Model


class AutoProvisioningConfig(_Model):
    """GKE node auto-provisioning (`gpuplane:autoProvisioning`, platform `gke-nap`)."""

    cpuMax: int = Field(default=1000, ge=1)
    """Cluster-wide vCPU ceiling (all nodes, including the system pool)."""
    memoryGbMax: int = Field(default=10000, ge=1)
    """Cluster-wide memory ceiling in GB."""
    locations: list[str] = Field(default_factory=list)
    """Zones NAP may create node pools in (`auto_provisioning_locations`); empty: the cluster's zones."""
    profile: Literal["BALANCED", "OPTIMIZE_UTILIZATION"] = "OPTIMIZE_UTILIZATION"
    """Autoscaling profile; OPTIMIZE_UTILIZATION removes idle (GPU) nodes sooner, suiting bursty GPU work."""
    diskSizeGb: int = Field(default=200, ge=50)
    """Boot disk of auto-provisioned nodes; CUDA images are large."""


class KarpenterConfig(_Model):
    """Karpenter settings (`gpuplane:karpenter`, platform `eks-karpenter`)."""

    consolidationPolicy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = "WhenEmpty"
    """WhenEmpty never evicts running GPU jobs to repack; it only removes empty nodes."""
    consolidateAfter: str = Field(default="30s", pattern=DURATION)
    """How long a GPU node may sit empty before removal (the seed's `ttlSecondsAfterEmpty: 30`)."""
    expireAfter: str = Field(default="720h", pattern=DURATION)
    """Replace nodes after this age so they pick up new AMIs."""
    amiVersion: str = Field(
        default="latest",
        pattern=shaped(
            r"^(latest|v[0-9]{8}|[0-9]+\.[0-9]+\.[0-9]+)$",
            "must be `latest`, a dated AMI release like v20250505 or a version like 1.40.0",
        ),
    )
    """AMI alias version (`al2023@<version>`); pin one (e.g. `v20251120`) for reproducible nodes."""
