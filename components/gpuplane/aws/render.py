"""Pure functions that turn typed config into EKS resource arguments (VPC, IAM, node groups, tags).

Enum values here are the EKS API's (botocore's EKS model: AMITypes, CapacityTypes, TaintEffect);
tests check them against it.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..catalog import NODE_IMAGES
from ..config.capacity import eks_capacity_type
from ..config.coldstart import NO_COLD_START, ColdStartPlan
from ..config.model import ClusterConfig, GpuPool
from ..config.prices import machine_of
from ..resources.names import fit_autoname, fit_prefix
from ..scheduling.nodes import pool_labels, pool_taints
from ..scheduling.sharing import advertised, operator_node_labels
from .coldstart_render import launch_template_ebs, launch_template_user_data

TAINT_EFFECTS: Mapping[str, str] = MappingProxyType(
    {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
)
"""Kubernetes taint effect -> EKS API TaintEffect."""

NODE_POLICIES: tuple[str, ...] = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
)
"""AWS-managed policies every GPU node role needs (worker, CNI, ECR image pull)."""
SSM_POLICY = "AmazonSSMManagedInstanceCore"
"""Session Manager access to nodes (`aws.ssmAccess`); off by default: it lets nodes read any SSM parameter."""


def node_policies(ssm_access: bool) -> tuple[str, ...]:
    """The AWS-managed policies attached to a node role."""
    return (*NODE_POLICIES, SSM_POLICY) if ssm_access else NODE_POLICIES


ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"
"""The node label cluster-autoscaler (>= 1.15) reads on AWS to recognise GPU nodes before the device plugin."""

CA_TAG_PREFIX = "k8s.io/cluster-autoscaler/node-template"
ADMIN_POLICY = "arn:{partition}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
"""EKS's cluster-admin access policy, in the cluster's partition (EKS user guide access-policy-permissions)."""


def subnet_cidrs(vpc_cidr: str, azs: int) -> tuple[list[str], list[str]]:
    """Private and public subnet CIDRs: large private subnets for pods (VPC CNI), small public ones for LBs.

    Private subnets are the first `azs` eighths of the VPC; public ones the last `azs` 64ths, so the two
    never overlap for up to 6 AZs.
    """
    net = ipaddress.IPv4Network(vpc_cidr)
    private = list(net.subnets(new_prefix=net.prefixlen + 3))[:azs]
    public = list(net.subnets(new_prefix=net.prefixlen + 6))[-azs:]
    return [str(s) for s in private], [str(s) for s in public]


def assume_role_policy(service: str) -> str:
    """Trust policy letting an AWS service (e.g. `ec2.amazonaws.com`) assume a role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
        }
    )


def irsa_trust_policy(oidc_provider_arn: str, oidc_issuer: str, namespace: str, service_account: str) -> str:
    """Trust policy for IRSA: only this service account, through this cluster's OIDC provider."""
    issuer = oidc_issuer.removeprefix("https://")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": oidc_provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                            f"{issuer}:aud": "sts.amazonaws.com",
                        }
                    },
                }
            ],
        }
    )


def autoscaler_policy(cluster: str) -> str:
    """cluster-autoscaler's recommended policy, with scaling actions limited to this cluster's node groups.

    EKS tags every managed node group's Auto Scaling group with `k8s.io/cluster-autoscaler/<cluster>: owned`
    and `k8s.io/cluster-autoscaler/enabled: true`; the write actions require both.
    """
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "Discover",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:DescribeAutoScalingGroups",
                        "autoscaling:DescribeAutoScalingInstances",
                        "autoscaling:DescribeLaunchConfigurations",
                        "autoscaling:DescribeScalingActivities",
                        "autoscaling:DescribeTags",
                        "ec2:DescribeImages",
                        "ec2:DescribeInstanceTypes",
                        "ec2:DescribeLaunchTemplateVersions",
                        "ec2:GetInstanceTypesFromInstanceRequirements",
                        "eks:DescribeNodegroup",
                    ],
                    "Resource": "*",
                },
                {
                    "Sid": "ScaleOwnNodeGroups",
                    "Effect": "Allow",
                    "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
                    "Resource": "*",
                    "Condition": {
                        "StringEquals": {
                            f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster}": "owned",
                            "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
                        }
                    },
                },
            ],
        }
    )


def instance_types(pool: GpuPool) -> list[str]:
    """The pool's instance types: configured, or the catalog's smallest for its GPU count (on EFA pools,
    the smallest that takes EFA)."""
    return list(pool.instanceTypes) if pool.instanceTypes else [machine_of("aws", pool)]


def gpu_node_labels(cluster: ClusterConfig, pool: GpuPool) -> dict[str, str]:
    """Node labels of an EKS GPU pool: gpuplane's, the accelerator label cluster-autoscaler reads, and
    the gpu-operator's sharing labels."""
    return {
        **pool_labels(cluster.name, pool, "aws"),
        ACCELERATOR_LABEL: f"nvidia-{pool.gpu}",
        **operator_node_labels(pool),
    }


def secrets_key_args(cluster: str) -> dict[str, Any]:
    """KMS key for EKS secrets envelope encryption: symmetric, rotated yearly, 30-day deletion window.
    No key policy is set, so AWS's default applies (the account administers the key through IAM)."""
    return {
        "description": f"gpuplane {cluster}: envelope encryption of Kubernetes secrets",
        "enable_key_rotation": True,
        "deletion_window_in_days": 30,
        "tags": {"gpuplane.io/cluster": cluster},
    }


def launch_template_args(
    cluster: str, pool_name: str, disk_gb: int, ami_type: str, cold: ColdStartPlan | None = None
) -> dict[str, Any]:
    """Launch template for a node group: IMDSv2 required (hop limit 1), every volume encrypted gp3; a GPU pool's
    cold-start settings (`cold`) add the user data that turns on parallel pull, the image volume's throughput
    and IOPS, and its image-cache snapshot (whose volume takes the snapshot's encryption)."""
    image = NODE_IMAGES[ami_type]
    cold = cold or NO_COLD_START
    return {
        "name_prefix": f"{cluster}-{pool_name}-",
        "description": f"gpuplane {cluster}/{pool_name}: IMDSv2, encrypted gp3",
        "update_default_version": True,
        # Hop limit 1: pods outside the host network can't reach the node role's credentials (add-ons
        # use IRSA / Pod Identity).
        "metadata_options": {
            "http_endpoint": "enabled",
            "http_tokens": "required",
            "http_put_response_hop_limit": 1,
        },
        "block_device_mappings": [
            {"device_name": device, "ebs": launch_template_ebs(image, device, gb, cold)}
            for device, gb in image.volumes(disk_gb)
        ],
        **launch_template_user_data(cold),
        "tags": {"gpuplane.io/cluster": cluster, "gpuplane.io/pool": pool_name},
    }


MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"


def node_group_prefix(cluster: ClusterConfig, pool: str) -> str:
    """`<cluster>-<pool>-`, which the provider completes to a unique name: a node group change that replaces
    it (instance types, capacity type, AMI type, subnets) creates the new group before deleting the old one.
    With a fixed `nodeGroupName` the provider deletes first (two groups can't share a name; terraform-aws-eks
    #835), so the pool has no nodes until the new group is up. Node groups are found by tags and labels,
    never by name (cluster-autoscaler auto-discovery, `gpuplane.io/pool`)."""
    return fit_prefix(f"{cluster.name}-{pool}", MANAGED_NODE_GROUP)


def node_group_name(cluster: ClusterConfig, pool: GpuPool) -> dict[str, str]:
    """A prefix, so a replacement comes up before the old group goes (no capacity gap), except for pools on
    a reservation (ODCR or Capacity Block): their replacement needs the instances the old group holds, so
    they keep a fixed name, which makes the provider delete the old group first (pulumi-terraform-bridge
    `nameRequiresDeleteBeforeReplace`)."""
    if pool.reservation is not None and "reserved" in (pool.capacity or ()):
        fixed = fit_autoname(f"{cluster.name}-{pool.name}", MANAGED_NODE_GROUP)
        return {"node_group_name": fixed or f"{cluster.name}-{pool.name}"}
    return {"node_group_name_prefix": node_group_prefix(cluster, pool.name)}


def gpu_node_group_args(cluster: ClusterConfig, pool: GpuPool) -> dict[str, Any]:
    """Arguments of one `eks.ManagedNodeGroup` for a GPU pool (cluster, role, subnets and launch
    template are wired by the component)."""
    return {
        **node_group_name(cluster, pool),
        "ami_type": pool.amiType,
        "capacity_type": eks_capacity_type(pool),
        "instance_types": instance_types(pool),
        # the size of a new group; the components send the group's current size instead (`live_size`)
        "scaling_config": {"min_size": pool.minNodes, "max_size": pool.maxNodes, "desired_size": pool.minNodes},
        "labels": gpu_node_labels(cluster, pool),
        "taints": [
            {"key": t.key, "value": t.value, "effect": TAINT_EFFECTS[t.effect]} for t in pool_taints("aws", pool)
        ],
    }


def system_node_group_args(cluster: ClusterConfig, autoscaled: bool = True) -> dict[str, Any]:
    """The non-GPU node group for add-ons (operator, autoscaler, DNS). Without a cluster-autoscaler
    (Karpenter stacks: Karpenter launches only the GPU classes) nothing moves it, so it is `minNodes` fixed
    rather than a range that promises growth."""
    sp = cluster.systemPool
    assert sp.machineType is not None
    top = sp.maxNodes if autoscaled else sp.minNodes
    return {
        "node_group_name_prefix": node_group_prefix(cluster, "system"),
        "ami_type": "AL2023_x86_64_STANDARD",
        "capacity_type": "ON_DEMAND",
        "instance_types": [sp.machineType],
        "scaling_config": {"min_size": sp.minNodes, "max_size": top, "desired_size": sp.minNodes},
        "labels": {"gpuplane.io/role": "system"},
    }


def node_template_tags(cluster: ClusterConfig, pool: GpuPool) -> dict[str, str]:
    """Auto Scaling group tags cluster-autoscaler reads to scale a pool up from zero nodes.

    Labels, taints (Kubernetes effect spelling) and the GPU count, per cluster-autoscaler's AWS README.
    """
    tags = {f"{CA_TAG_PREFIX}/label/{k}": v for k, v in gpu_node_labels(cluster, pool).items()}
    for t in pool_taints("aws", pool):
        tags[f"{CA_TAG_PREFIX}/taint/{t.key}"] = f"{t.value}:{t.effect}"
    for resource, count in advertised(pool, "aws").items():
        tags[f"{CA_TAG_PREFIX}/resources/{resource}"] = str(count)
    if pool.network == "efa":  # pods that request EFA devices must also scale an EFA group up from zero
        from .efa import efa_limits

        for resource, count in efa_limits(pool).items():
            tags[f"{CA_TAG_PREFIX}/resources/{resource}"] = str(count)
    return tags


def tag_slug(key: str) -> str:
    """A stable, unique resource-name suffix for a node-template tag key (`label-gpuplane-io-pool-1a2b3c`)."""
    rest = key.removeprefix(CA_TAG_PREFIX + "/")
    readable = re.sub(r"[^a-z0-9]+", "-", rest.lower()).strip("-")
    return f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:6]}"


def access_entries(admins: list[str], partition: str = "aws") -> dict[str, Any]:
    """EKS access entries granting cluster-admin to each admin principal (ARNs in `partition`)."""
    policy = ADMIN_POLICY.format(partition=partition)
    return {
        f"admin-{i}": {
            "principal_arn": arn,
            "access_policies": {"cluster-admin": {"policy_arn": policy, "access_scope": {"type": "cluster"}}},
        }
        for i, arn in enumerate(admins)
    }
