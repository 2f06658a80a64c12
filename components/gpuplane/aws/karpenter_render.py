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
from ..config import coldstart
from ..config.capacity import Reservation, capacity_order
from ..config.coldstart import NO_COLD_START, ColdStartPlan
from ..config.model import ClusterConfig, GpuPool
from ..config.provisioning import KarpenterConfig
from ..scheduling.nodes import pool_labels, pool_taints
from ..scheduling.sharing import advertised, operator_node_labels
from ..storage.render import pod_identity_trust as trust_for_pods
from . import efa
from .coldstart_render import node_class_ebs, user_data

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
    """Trust policy for an EKS Pod Identity role (the controller's: its association names its service account)."""
    return trust_for_pods()


def controller_values(cluster: ClusterConfig, queue_name: str, node_repair: bool = False) -> dict[str, Any]:
    """Chart values: cluster name and interruption queue; the controller on the system nodes (two
    replicas when there are two system nodes for its anti-affinity), Pod Identity for AWS access."""
    return {
        # NodeOverlay (alpha) declares the shared or MIG GPU capacity of sharing classes (`gpu_overlay`).
        # Always on, so adding or removing a sharing class changes no controller setting (no restart);
        # without NodeOverlay objects the gate changes nothing (kubernetes-sigs/karpenter
        # pkg/controllers/nodeoverlay: it only rewrites instance types that an overlay selects).
        # reservedCapacity (beta, on by default in 1.14: charts/karpenter values.yaml) makes Karpenter
        # launch into the EC2NodeClasses' capacity reservations (`reserved` capacity); set explicitly so
        # a chart default flip cannot silently turn reserved GPU classes into on-demand ones.
        # nodeRepair (alpha, off by default) replaces nodes whose node monitoring agent conditions stay
        # unhealthy (gpuplane:health.repair; catalog.health).
        "settings": {
            "clusterName": cluster.name,
            "interruptionQueue": queue_name,
            "featureGates": {"nodeOverlay": True, "reservedCapacity": True, "nodeRepair": node_repair},
        },
        "serviceAccount": {"name": SERVICE_ACCOUNT},
        "replicas": 2 if cluster.systemPool.minNodes >= 2 else 1,
        "nodeSelector": {"gpuplane.io/role": "system"},
        "controller": {
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
        },
    }


NodeClassKey = tuple[str, int, str]
"""(image family, disk GB, owning class): the owner is set only for a class with its own reservations."""


def pool_reservation(pool: GpuPool) -> Reservation | None:
    """The reservation a class consumes (`reserved` in its capacity), else None."""
    return pool.reservation if "reserved" in capacity_order("eks-karpenter", pool) else None


def own_cold_start(pool: GpuPool) -> bool:
    """Whether the class sets cold-start keys that shape its nodes (all but the estimate's `imageSizeGb`)."""
    return bool(pool.coldStart.model_dump(exclude={"imageSizeGb"}, exclude_none=True))


def node_class_key(pool: GpuPool) -> NodeClassKey:
    """GPU classes share an EC2NodeClass when they share the image family and the disk size; a class
    with reservations gets its own (capacityReservationSelectorTerms are per EC2NodeClass), and so does one
    with its own cold-start settings (user data and volumes are per EC2NodeClass)."""
    owner = pool.name if pool_reservation(pool) is not None or own_cold_start(pool) else ""
    return NODE_IMAGES[pool.amiType].karpenter_alias, pool.diskSizeGb, owner


def key_cold_start(pools: Sequence[GpuPool], key: NodeClassKey, karpenter: KarpenterConfig) -> ColdStartPlan:
    """The cold-start settings of the EC2NodeClass `key`: its owner's, or those every class sharing it has (the
    family's defaults at the pinned `amiVersion`)."""
    pool = next((p for p in pools if node_class_key(p) == key), None)
    return coldstart.plan("eks-karpenter", pool, ami_version=karpenter.amiVersion) if pool else NO_COLD_START


def node_classes(pools: Sequence[GpuPool]) -> list[NodeClassKey]:
    """The distinct (image family, disk GB, owner) of the classes without EFA, in class order (an EFA class
    has its own EC2NodeClass: `efa.node_class_name`)."""
    return list(dict.fromkeys(node_class_key(p) for p in pools if not efa.is_efa(p)))


def node_class_name(family: str, disk_gb: int, owner: str = "") -> str:
    return f"gpu-{family}-{disk_gb}g" + (f"-{owner}" if owner else "")


def key_reservation(pools: Sequence[GpuPool], key: NodeClassKey) -> Reservation | None:
    """The reservation of the class that owns the EC2NodeClass `key` (None for shared ones)."""
    return next((pool_reservation(p) for p in pools if key[2] and p.name == key[2]), None)


def reservation_terms(r: Reservation) -> list[dict[str, Any]]:
    """`capacityReservationSelectorTerms`: one term per ID, or one tag term. A term's `id` excludes
    every other field (EC2NodeClass CEL, karpenter.k8s.aws_ec2nodeclasses.yaml); terms are ORed."""
    return [{"id": i} for i in r.ids] or [{"tags": dict(r.tags)}]


def pool_node_class(pool: GpuPool) -> str:
    """The EC2NodeClass a class's NodePool refers to."""
    return efa.node_class_name(pool) if efa.is_efa(pool) else node_class_name(*node_class_key(pool))


def efa_node_class_spec(base: dict[str, Any], pool: GpuPool) -> dict[str, Any]:
    """An EFA class's EC2NodeClass spec: its image family and disk's spec plus EFA interfaces (and the
    placement group the user names)."""
    return {**base, **efa.node_class_fields(pool)}


def ec2_node_class(
    family: str,
    disk_gb: int,
    cluster: str,
    node_role: str,
    subnet_ids: Sequence[str],
    karpenter: KarpenterConfig,
    reservation: Reservation | None = None,
    owner: str = "",
    cold: ColdStartPlan | None = None,
) -> dict[str, Any]:
    """One EC2NodeClass per image family and disk size (and per class with reservations or cold-start keys): AMI
    alias, the cluster's subnets and security group, IMDSv2 required, an encrypted gp3 volume for container images
    sized for CUDA images, the class's capacity reservations, and its cold-start settings (`cold`: the user data
    that turns on parallel pull, the image volume's throughput and IOPS, an image-cache snapshot)."""
    cold = cold or NO_COLD_START
    text = user_data(cold)
    image = next(i for i in NODE_IMAGES.values() if i.karpenter_alias == family and i.driver)
    subnets: list[dict[str, Any]] = [{"id": s} for s in subnet_ids] or [{"tags": {"karpenter.sh/discovery": cluster}}]
    reserved = {"capacityReservationSelectorTerms": reservation_terms(reservation)} if reservation else {}
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": node_class_name(family, disk_gb, owner)},
        "spec": {
            **reserved,
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
                {"deviceName": device, "ebs": node_class_ebs(image, device, gb, cold)}
                for device, gb in image.volumes(disk_gb)
            ],
            **({"userData": text} if text else {}),
            "tags": {"gpuplane.io/cluster": cluster},
        },
    }


def capacity_types(pool: GpuPool) -> list[str]:
    """The class's capacity order (`capacity`); unset, spot classes allow both (Karpenter prefers spot and
    falls back to on-demand) and others on-demand. Karpenter itself launches reserved first, then spot,
    then on-demand (config validation keeps the order consistent with that)."""
    return list(capacity_order("eks-karpenter", pool))


CAPACITY_BLOCK_LABEL = "karpenter.k8s.aws/capacity-reservation-type"
"""Karpenter's label on reserved nodes: `default` (ODCR) or `capacity-block` (aws/karpenter-provider-aws
pkg/apis/v1/labels.go, ec2nodeclass_status.go `CapacityReservationType`)."""


def reservation_requirements(pool: GpuPool) -> list[dict[str, Any]]:
    """A class that runs only on Capacity Blocks also requires the label, so Karpenter never takes an
    ODCR the selector happens to match. With a fallback (spot, on-demand) the requirement would exclude
    the fallback nodes, which carry no reservation labels, so it is left out."""
    r = pool_reservation(pool)
    if r is None or r.type != "capacity-block" or capacity_types(pool) != ["reserved"]:
        return []
    return [{"key": CAPACITY_BLOCK_LABEL, "operator": "In", "values": ["capacity-block"]}]


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
        *reservation_requirements(pool),
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
                "metadata": {"labels": {**pool_labels(cluster.name, pool, "aws"), **operator_node_labels(pool)}},
                "spec": {
                    "nodeClassRef": dict(node_class_ref),
                    "requirements": requirements,
                    "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool_taints("aws", pool)],
                    "expireAfter": expire_after,
                },
            },
            "disruption": {**disruption, "budgets": [dict(b) for b in GPU_BUDGETS]},
            "limits": node_pool_limits(pool),
        },
    }


GPU_BUDGETS: tuple[Mapping[str, Any], ...] = (
    MappingProxyType({"nodes": "10%"}),
    MappingProxyType({"nodes": "0", "reasons": ["Drifted"]}),
)
"""Disruption budgets of every GPU NodePool. A new AMI release, a control-plane upgrade or a NodeClass edit
makes every node drift; Karpenter would then drain running training pods to replace them. With no drift
budget a drifted GPU node stays until it is empty, when the `Empty` consolidation (10% at a time, the
default budget) or `expireAfter` replaces it (kubernetes-sigs/karpenter website/content/en/docs/concepts/
disruption.md, "Disruption Budgets"; reasons are Underutilized, Empty and Drifted in the NodePool CRD)."""


def node_pool_limits(pool: GpuPool) -> dict[str, str]:
    """The NodePool's ceiling: `maxNodes` nodes, their `nvidia.com/gpu` and the pool's own sharing
    resource. The GPU limit alone does not cap a MIG class: with `mig.strategy: mixed` an initialized node
    reports 0 `nvidia.com/gpu`, which frees the limit again, so a backlog would launch past `maxNodes`
    (kubernetes-sigs/karpenter pkg/controllers/state/statenode.go, provisioning/scheduling/scheduler.go).
    `limits.nodes` is what caps it: Karpenter counts it from NodeClaims (v1.11+, scheduler.go
    `addToNewNodeClaim`). The MIG resource limit only stops launches once the nodes' reported slices reach
    it (instance types list no MIG capacity, so it does not filter them up front)."""
    limits = {"nodes": str(pool.maxNodes), "nvidia.com/gpu": str(pool.maxNodes * gpu_units(pool))}
    for resource, per_node in advertised(pool, "aws").items():
        limits.setdefault(resource, str(pool.maxNodes * per_node))
    return limits


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
    device plugin then advertises the same amount on the real node (`components/gpuplane/scheduling/sharing.py`).
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


def node_class_manifest(class_name: str, spec: Any) -> dict[str, Any]:
    """An EC2NodeClass named `class_name` with `spec` (a dict, or an Output of one), for `kube.custom_resource`."""
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": class_name},
        "spec": spec,
    }
