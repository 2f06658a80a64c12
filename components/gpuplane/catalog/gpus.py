"""The GPU catalog: one table from a friendly GPU name to each cloud's terms.

Every platform reads this table (GKE node pools, EKS node groups, placement helpers), so a GPU is
described once. Sources: GCP "GPU machine types" (cloud.google.com/compute/docs/gpus) and AWS
"Accelerated computing instances" (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html), NVIDIA MIG
user guide for the partition profiles. Checked 2026-11; the Blackwell entries (`gpus_blackwell`, appended in
`args.inputs.GpuType` order) 2026-12. The record types live in `gpu_types` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .gpu_types import AwsOffer, GcpOffer, Gpu
from .gpu_types import frozen as _frozen
from .gpus_blackwell import BLACKWELL

_N1 = "n1"

GPUS: Mapping[str, Gpu] = MappingProxyType(
    {
        g.name: g
        for g in (
            Gpu(
                name="t4",
                memory_gib=16,
                architecture="turing",
                description="NVIDIA T4: inference and light training",
                gcp=GcpOffer(
                    accelerator="nvidia-tesla-t4",
                    machines=_frozen({"n1-standard-8": 1, "n1-standard-16": 2, "n1-standard-32": 4}),
                    attachable_family=_N1,
                    attachable_counts=(1, 2, 4),
                ),
                aws=AwsOffer(
                    instances=_frozen(
                        {
                            "g4dn.xlarge": 1,
                            "g4dn.2xlarge": 1,
                            "g4dn.4xlarge": 1,
                            "g4dn.8xlarge": 1,
                            "g4dn.16xlarge": 1,
                            "g4dn.12xlarge": 4,
                            "g4dn.metal": 8,
                        }
                    ),
                    gpu_name="t4",
                ),
            ),
            Gpu(
                name="p100",
                memory_gib=16,
                architecture="pascal",
                description="NVIDIA P100 (GCP only; AWS has no P100 instances)",
                gcp=GcpOffer(
                    accelerator="nvidia-tesla-p100",
                    machines=_frozen({"n1-standard-8": 1, "n1-standard-16": 2, "n1-standard-32": 4}),
                    attachable_family=_N1,
                    attachable_counts=(1, 2, 4),
                ),
            ),
            Gpu(
                name="v100",
                memory_gib=16,
                architecture="volta",
                description="NVIDIA V100: training",
                gcp=GcpOffer(
                    accelerator="nvidia-tesla-v100",
                    machines=_frozen(
                        {"n1-standard-8": 1, "n1-standard-16": 2, "n1-standard-32": 4, "n1-standard-64": 8}
                    ),
                    attachable_family=_N1,
                    attachable_counts=(1, 2, 4, 8),
                ),
                aws=AwsOffer(
                    instances=_frozen({"p3.2xlarge": 1, "p3.8xlarge": 4, "p3.16xlarge": 8, "p3dn.24xlarge": 8}),
                    gpu_name="v100",
                ),
            ),
            Gpu(
                name="a10g",
                memory_gib=24,
                architecture="ampere",
                description="NVIDIA A10G (the seed's A10; AWS only)",
                aws=AwsOffer(
                    instances=_frozen(
                        {
                            "g5.xlarge": 1,
                            "g5.2xlarge": 1,
                            "g5.4xlarge": 1,
                            "g5.8xlarge": 1,
                            "g5.16xlarge": 1,
                            "g5.12xlarge": 4,
                            "g5.24xlarge": 4,
                            "g5.48xlarge": 8,
                        }
                    ),
                    gpu_name="a10g",
                ),
            ),
            Gpu(
                name="l4",
                memory_gib=24,
                architecture="ada-lovelace",
                description="NVIDIA L4: inference",
                gcp=GcpOffer(
                    accelerator="nvidia-l4",
                    machines=_frozen(
                        {
                            "g2-standard-4": 1,
                            "g2-standard-8": 1,
                            "g2-standard-12": 1,
                            "g2-standard-16": 1,
                            "g2-standard-32": 1,
                            "g2-standard-24": 2,
                            "g2-standard-48": 4,
                            "g2-standard-96": 8,
                        }
                    ),
                ),
                aws=AwsOffer(
                    instances=_frozen(
                        {
                            "g6.xlarge": 1,
                            "g6.2xlarge": 1,
                            "g6.4xlarge": 1,
                            "g6.8xlarge": 1,
                            "g6.16xlarge": 1,
                            "g6.12xlarge": 4,
                            "g6.24xlarge": 4,
                            "g6.48xlarge": 8,
                        }
                    ),
                    gpu_name="l4",
                ),
            ),
            Gpu(
                name="l40s",
                memory_gib=48,
                architecture="ada-lovelace",
                description="NVIDIA L40S (AWS g6e)",
                aws=AwsOffer(
                    instances=_frozen(
                        {
                            "g6e.xlarge": 1,
                            "g6e.2xlarge": 1,
                            "g6e.4xlarge": 1,
                            "g6e.8xlarge": 1,
                            "g6e.16xlarge": 1,
                            "g6e.12xlarge": 4,
                            "g6e.24xlarge": 4,
                            "g6e.48xlarge": 8,
                        }
                    ),
                    gpu_name="l40s",
                ),
            ),
            Gpu(
                name="a100-40gb",
                memory_gib=40,
                architecture="ampere",
                mig_profiles=_frozen({"1g.5gb": 7, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1}),
                gke_mig_profiles=("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"),
                description="NVIDIA A100 40GB: training",
                gcp=GcpOffer(
                    accelerator="nvidia-tesla-a100",
                    machines=_frozen(
                        {
                            "a2-highgpu-1g": 1,
                            "a2-highgpu-2g": 2,
                            "a2-highgpu-4g": 4,
                            "a2-highgpu-8g": 8,
                            "a2-megagpu-16g": 16,
                        }
                    ),
                ),
                aws=AwsOffer(instances=_frozen({"p4d.24xlarge": 8}), gpu_name="a100"),
            ),
            Gpu(
                name="a100-80gb",
                memory_gib=80,
                architecture="ampere",
                mig_profiles=_frozen({"1g.10gb": 7, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}),
                gke_mig_profiles=("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"),
                description="NVIDIA A100 80GB: training",
                gcp=GcpOffer(
                    accelerator="nvidia-a100-80gb",
                    machines=_frozen(
                        {"a2-ultragpu-1g": 1, "a2-ultragpu-2g": 2, "a2-ultragpu-4g": 4, "a2-ultragpu-8g": 8}
                    ),
                ),
                aws=AwsOffer(instances=_frozen({"p4de.24xlarge": 8}), gpu_name="a100"),
            ),
            Gpu(
                name="h100",
                memory_gib=80,
                architecture="hopper",
                mig_profiles=_frozen(
                    {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}
                ),
                gke_mig_profiles=("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
                description="NVIDIA H100 80GB: large-scale training",
                nvlink_domain_gpus=8,  # HGX H100: 8 GPUs on one NVSwitch board (A3 High / P5 carry one board)
                gcp=GcpOffer(
                    accelerator="nvidia-h100-80gb",
                    machines=_frozen({"a3-highgpu-1g": 1, "a3-highgpu-2g": 2, "a3-highgpu-4g": 4, "a3-highgpu-8g": 8}),
                ),
                aws=AwsOffer(instances=_frozen({"p5.4xlarge": 1, "p5.48xlarge": 8}), gpu_name="h100"),
            ),
            Gpu(
                name="h200",
                memory_gib=141,
                architecture="hopper",
                mig_profiles=_frozen(
                    {"1g.18gb": 7, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1}
                ),
                gke_mig_profiles=("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "7g.141gb"),
                description="NVIDIA H200 141GB: large-scale training",
                nvlink_domain_gpus=8,  # HGX H200: 8 GPUs on one NVSwitch board
                gcp=GcpOffer(accelerator="nvidia-h200-141gb", machines=_frozen({"a3-ultragpu-8g": 8})),
                aws=AwsOffer(instances=_frozen({"p5e.48xlarge": 8, "p5en.48xlarge": 8}), gpu_name="h200"),
            ),
            *BLACKWELL,
        )
    }
)
"""Friendly name -> GPU. Aliases live in `ALIASES`."""

ALIASES: Mapping[str, str] = MappingProxyType({"a10": "a10g", "a100": "a100-40gb"})
"""Names the seed uses that map onto a catalog entry."""


def known_gpus() -> tuple[str, ...]:
    """Catalog names, in catalog order."""
    return tuple(GPUS)


def lookup(name: str) -> Gpu | None:
    """The GPU for a friendly name or alias (case-insensitive), or None."""
    key = name.strip().lower()
    return GPUS.get(ALIASES.get(key, key))


def gpus_on(cloud: str) -> tuple[str, ...]:
    """Names of the GPUs a cloud (`gcp` or `aws`) offers."""
    return tuple(n for n, g in GPUS.items() if getattr(g, cloud) is not None)


__all__ = ["ALIASES", "AwsOffer", "GPUS", "GcpOffer", "Gpu", "gpus_on", "known_gpus", "lookup"]
