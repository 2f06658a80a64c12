"""One test per EKS config error message."""

from __future__ import annotations

import copy
from typing import Any

from gpuplane.config import parse_config

from .conftest import config_problems, with_first_pool

GOOD: dict[str, Any] = {
    "platform": "eks-managed",
    "cluster": {"name": "ml"},
    "aws": {"region": "us-east-1"},
    "gpuPools": [{"name": "inference", "gpu": "a10g", "maxNodes": 4}],
}


def problems(raw: dict[str, Any]) -> dict[str, str]:
    return config_problems(raw)


def with_pool(**pool: Any) -> dict[str, Any]:
    return with_first_pool(GOOD, **pool)


def test_good_config_gets_aws_defaults() -> None:
    cfg = parse_config(GOOD)
    assert cfg.cluster.systemPool.machineType == "m7i.large"
    assert cfg.gpuPools[0].amiType == "AL2023_x86_64_NVIDIA" and cfg.gpuPools[0].driver == "preinstalled"


def test_instance_type_of_another_gpu() -> None:
    msg = problems(with_pool(instanceTypes=["p4d.24xlarge"]))["gpuplane:gpuPools[0].instanceTypes"]
    assert msg.startswith("['p4d.24xlarge'] do not carry 1 x a10g (catalog: g5.xlarge (1)")


def test_unknown_instance_family_for_gpu() -> None:
    msg = problems(with_pool(instanceTypes=["g4dn.xlarge", "x9.large"]))["gpuplane:gpuPools[0].instanceTypes"]
    assert "['g4dn.xlarge', 'x9.large'] do not carry 1 x a10g" in msg


def test_gpu_not_offered_on_aws() -> None:
    assert "not offered on aws" in problems(with_pool(gpu="p100"))["gpuplane:gpuPools[0].gpu"]


def test_gpus_per_node_not_offered_on_aws() -> None:
    assert (
        problems(with_pool(gpusPerNode=2))["gpuplane:gpuPools[0].gpusPerNode"]
        == "a10g comes [1, 4, 8] per node on AWS, not 2"
    )


def test_bottlerocket_with_operator_driver() -> None:
    msg = problems(with_pool(amiType="BOTTLEROCKET_x86_64_NVIDIA", driver="operator"))["gpuplane:gpuPools[0].driver"]
    assert msg.startswith("BOTTLEROCKET_x86_64_NVIDIA already ships the NVIDIA driver")


def test_nvidia_ami_with_operator_driver() -> None:
    assert "already ships the NVIDIA driver" in problems(with_pool(driver="operator"))["gpuplane:gpuPools[0].driver"]


def test_plain_ami_without_operator_driver() -> None:
    msg = problems(with_pool(amiType="AL2023_x86_64_STANDARD"))["gpuplane:gpuPools[0].driver"]
    assert msg == "AL2023_x86_64_STANDARD has no NVIDIA driver; set driver: operator or use AL2023_x86_64_NVIDIA"


def test_unknown_ami_type() -> None:
    assert problems(with_pool(amiType="AL2_x86_64_GPU"))["gpuplane:gpuPools[0].amiType"].startswith(
        "unknown AMI type 'AL2_x86_64_GPU'"
    )


def test_pools_mixing_images() -> None:
    raw = copy.deepcopy(GOOD)
    raw["gpuPools"].append({"name": "br", "gpu": "l4", "maxNodes": 1, "amiType": "BOTTLEROCKET_x86_64_NVIDIA"})
    assert "need different gpu-operator settings" in problems(raw)["gpuplane:gpuPools"]


def test_min_above_max() -> None:
    assert problems(with_pool(minNodes=5, maxNodes=1)) == {"gpuplane:gpuPools[0].maxNodes": "must be >= minNodes (5)"}


def test_machine_type_on_aws() -> None:
    assert (
        problems(with_pool(machineType="g2-standard-4"))["gpuplane:gpuPools[0].machineType"]
        == "is for GCP; on AWS use instanceTypes"
    )


def test_instance_types_on_gcp() -> None:
    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "ml"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "gpuPools": [{"name": "p", "gpu": "l4", "maxNodes": 1, "instanceTypes": ["g6.xlarge"]}],
    }
    assert problems(raw)["gpuplane:gpuPools[0].instanceTypes"] == "is for AWS; on GCP use machineType"


def test_eks_needs_aws_section() -> None:
    raw = {k: v for k, v in GOOD.items() if k != "aws"}
    assert problems(raw) == {"gpuplane:aws": "required for an EKS platform"}


def test_existing_vpc_needs_subnets() -> None:
    raw = {**GOOD, "aws": {"region": "us-east-1", "vpcId": "vpc-0abc12345678", "privateSubnetIds": ["subnet-1"]}}
    assert "at least 2 private subnets" in problems(raw)["gpuplane:aws.privateSubnetIds"]


def test_subnets_without_vpc() -> None:
    raw = {**GOOD, "aws": {"region": "us-east-1", "privateSubnetIds": ["subnet-1", "subnet-2"]}}
    assert problems(raw)["gpuplane:aws.privateSubnetIds"] == "subnets given without vpcId"


def test_bad_admin_arn() -> None:
    raw = {**GOOD, "aws": {"region": "us-east-1", "admins": ["alice"]}}
    assert problems(raw)["gpuplane:aws.admins"] == "not IAM principal ARNs: ['alice']"


def test_bad_vpc_cidr() -> None:
    raw = {**GOOD, "aws": {"region": "us-east-1", "vpcCidr": "10.0.0.0/24"}}
    assert problems(raw)["gpuplane:aws.vpcCidr"] == "prefix /24 must be between /16 and /20"
