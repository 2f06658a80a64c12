"""Pure renders for Karpenter v1 on EKS: IAM (as Karpenter's own CloudFormation scopes it), the
interruption queue and its EventBridge rules, chart values, EC2NodeClasses and GPU NodePools.

Sources: aws/karpenter-provider-aws v1.14 getting-started `cloudformation.yaml` (policies, queue,
rules) and the karpenter.sh/v1 / karpenter.k8s.aws/v1 CRDs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..catalog import NODE_IMAGES, lookup
from ..config.model import ClusterConfig, GpuPool
from ..config.provisioning import KarpenterConfig
from ..nodes import pool_labels, pool_taints
from ..nvidia.sharing import advertised, operator_node_labels
from . import efa

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
RELEASE = "karpenter"
CRD_RELEASE = "karpenter-crd"

INTERRUPTION_EVENTS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "scheduled-change": ("aws.health", "AWS Health Event"),
        "spot-interruption": ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
        "rebalance": ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
        "instance-state-change": ("aws.ec2", "EC2 Instance State-change Notification"),
        "capacity-reservation-interruption": ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
    }
)
"""Rule role -> (source, detail-type) of the events Karpenter handles through its queue."""


def event_pattern(role: str) -> str:
    source, detail = INTERRUPTION_EVENTS[role]
    return json.dumps({"source": [source], "detail-type": [detail]})


def queue_policy(queue_arn: str) -> str:
    """EventBridge (and SQS) may send; nothing may use the queue without TLS."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Id": "EC2InterruptionPolicy",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                    "Action": "sqs:SendMessage",
                    "Resource": queue_arn,
                },
                {
                    "Sid": "DenyHTTP",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "sqs:*",
                    "Resource": queue_arn,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                },
            ],
        }
    )


def pod_identity_trust() -> str:
    """Trust policy for an EKS Pod Identity role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "pods.eks.amazonaws.com"},
                    "Action": ["sts:AssumeRole", "sts:TagSession"],
                }
            ],
        }
    )


def controller_values(cluster: ClusterConfig, queue_name: str) -> dict[str, Any]:
    """Chart values: cluster name and interruption queue; the controller on the system nodes (two
    replicas when there are two system nodes for its anti-affinity), Pod Identity for AWS access."""
    return {
        # NodeOverlay (alpha) declares the shared or MIG GPU capacity of sharing classes (`gpu_overlay`).
        # Always on, so adding or removing a sharing class changes no controller setting (no restart);
        # without NodeOverlay objects the gate changes nothing (kubernetes-sigs/karpenter
        # pkg/controllers/nodeoverlay: it only rewrites instance types that an overlay selects).
        "settings": {
            "clusterName": cluster.name,
            "interruptionQueue": queue_name,
            "featureGates": {"nodeOverlay": True},
        },
        "serviceAccount": {"name": SERVICE_ACCOUNT},
        "replicas": 2 if cluster.systemPool.minNodes >= 2 else 1,
        "nodeSelector": {"gpuplane.io/role": "system"},
        "controller": {
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
        },
    }


def node_class_key(pool: GpuPool) -> tuple[str, int]:
    """GPU classes share an EC2NodeClass when they share the image family and the disk size."""
    return NODE_IMAGES[pool.amiType].karpenter_alias, pool.diskSizeGb


def node_classes(pools: Sequence[GpuPool]) -> list[tuple[str, int]]:
    """The distinct (image family, disk GB) of the classes without EFA, in class order (an EFA class has its
    own EC2NodeClass: `efa.node_class_name`)."""
    return list(dict.fromkeys(node_class_key(p) for p in pools if not efa.is_efa(p)))


def node_class_name(family: str, disk_gb: int) -> str:
    return f"gpu-{family}-{disk_gb}g"


def pool_node_class(pool: GpuPool) -> str:
    """The EC2NodeClass a class's NodePool refers to."""
    return efa.node_class_name(pool) if efa.is_efa(pool) else node_class_name(*node_class_key(pool))


def efa_node_class_spec(base: dict[str, Any], pool: GpuPool) -> dict[str, Any]:
    """An EFA class's EC2NodeClass spec: its image family and disk's spec plus EFA interfaces (and the
    placement group the user names)."""
    return {**base, **efa.node_class_fields(pool)}


def ec2_node_class(
    family: str, disk_gb: int, cluster: str, node_role: str, subnet_ids: Sequence[str], karpenter: KarpenterConfig
) -> dict[str, Any]:
    """One EC2NodeClass per image family and disk size: AMI alias, the cluster's subnets and security
    group, IMDSv2 required, an encrypted gp3 volume for container images sized for CUDA images."""
    image = next(i for i in NODE_IMAGES.values() if i.karpenter_alias == family and i.driver)
    subnets: list[dict[str, Any]] = [{"id": s} for s in subnet_ids] or [{"tags": {"karpenter.sh/discovery": cluster}}]
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": node_class_name(family, disk_gb)},
        "spec": {
            "role": node_role,
            "amiSelectorTerms": [{"alias": f"{family}@{karpenter.amiVersion}"}],
            "subnetSelectorTerms": subnets,
            # EKS tags the cluster security group it creates with the cluster name.
            "securityGroupSelectorTerms": [{"tags": {"aws:eks:cluster-name": cluster}}],
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": [
                {
                    "deviceName": device,
                    "ebs": {
                        "volumeSize": f"{gb}Gi",
                        "volumeType": "gp3",
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                }
                for device, gb in image.volumes(disk_gb)
            ],
            "tags": {"gpuplane.io/cluster": cluster},
        },
    }


def capacity_types(pool: GpuPool) -> list[str]:
    """Spot classes allow both (Karpenter prefers spot and falls back to on-demand); others on-demand."""
    return ["spot", "on-demand"] if pool.spot else ["on-demand"]


def instance_families(pool: GpuPool) -> list[str]:
    gpu = lookup(pool.gpu)
    assert gpu is not None and gpu.aws is not None
    names = pool.instanceTypes or [i for i, n in gpu.aws.instances.items() if n == pool.gpusPerNode]
    return sorted({i.split(".")[0] for i in names})


def gpu_node_pool(
    cluster: ClusterConfig,
    pool: GpuPool,
    node_class_ref: Mapping[str, str],
    label_prefix: str,
    disruption: Mapping[str, str],
    expire_after: str,
) -> dict[str, Any]:
    """A karpenter.sh/v1 NodePool for one GPU class (Karpenter or EKS Auto Mode, by `label_prefix`)."""
    gpu = lookup(pool.gpu)
    assert gpu is not None and gpu.aws is not None
    requirements = [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity_types(pool)},
        {"key": f"{label_prefix}/instance-gpu-name", "operator": "In", "values": [gpu.aws.gpu_name]},
        {"key": f"{label_prefix}/instance-family", "operator": "In", "values": instance_families(pool)},
        {"key": f"{label_prefix}/instance-gpu-count", "operator": "In", "values": [str(pool.gpusPerNode)]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    ]
    if pool.instanceTypes:
        requirements.append(
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(pool.instanceTypes)}
        )
    requirements += efa.requirements(pool)
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": pool.name},
        "spec": {
            "template": {
                "metadata": {"labels": {**pool_labels(cluster.name, pool), **operator_node_labels(pool)}},
                "spec": {
                    "nodeClassRef": dict(node_class_ref),
                    "requirements": requirements,
                    "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool_taints("aws", pool)],
                    "expireAfter": expire_after,
                },
            },
            "disruption": dict(disruption),
            "limits": {"nvidia.com/gpu": str(pool.maxNodes * gpu_units(pool))},
        },
    }


def gpu_units(pool: GpuPool) -> int:
    """`nvidia.com/gpu` one node of the class counts against its NodePool's limit. Karpenter subtracts
    the instance types' capacity from the limit (kubernetes-sigs/karpenter
    pkg/controllers/provisioning/scheduling/scheduler.go, `subtractMax`): a time-slicing or MPS overlay
    makes that capacity GPUs x replicas (as the device plugin then advertises). MIG adds its own
    resource and leaves `nvidia.com/gpu` as the instance type has it."""
    s = pool.sharing
    return pool.gpusPerNode * (s.factor if s is not None and s.strategy != "mig" else 1)


OVERLAY_API = "karpenter.sh/v1alpha1"


def gpu_overlay(pool: GpuPool) -> dict[str, Any] | None:
    """A NodeOverlay declaring what a sharing class's nodes advertise, or None for whole GPUs.

    Karpenter models only `nvidia.com/gpu`, one per physical GPU (aws/karpenter-provider-aws
    pkg/providers/instancetype/types.go `computeCapacity`; maintainers in PR #8710). Without an overlay,
    pods asking for `nvidia.com/mig-<profile>` never make it launch a node, and time-sliced or MPS
    replicas are packed one per GPU (too many nodes). The overlay sets the capacity per node of the
    class's NodePool (`karpenter.sh/nodepool`), for its instance types (`instance-gpu-count`); the
    device plugin then advertises the same amount on the real node (`components/gpuplane/nvidia/sharing.py`).
    """
    if pool.sharing is None:
        return None
    return {
        "apiVersion": OVERLAY_API,
        "kind": "NodeOverlay",
        "metadata": {"name": f"{pool.name}-gpu-sharing"},
        "spec": {
            "requirements": [
                {"key": "karpenter.sh/nodepool", "operator": "In", "values": [pool.name]},
                {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": [str(pool.gpusPerNode)]},
            ],
            "capacity": {name: str(n) for name, n in advertised(pool, "aws").items()},
        },
    }
