"""Pure renders for EFA pools (`network: efa`): network interfaces, the security group and placement group
of managed node groups, the EC2NodeClass fields and NodePool requirements of Karpenter classes, and the
EFA device plugin's values.

Sources:
- Interface layout: EC2 user guide "Maximize network bandwidth on Amazon EC2 instances with multiple network
  cards" (efa-acc-inst-types): the primary interface (card 0, device 0) carries IP traffic and cannot be
  EFA-only; one EFA per network card, EFA-only at device 0 of each other card. A launch template's primary
  interface may be `efa` (EFA with ENA); EC2NodeClass `interfaceType` allows only `interface` / `efa-only`
  (karpenter.k8s.aws_ec2nodeclasses.yaml v1.14.1), so Karpenter classes add `efa-only` at card 0, device 1.
- Security group: EC2 user guide "Get started with EFA": the EFA's security group must allow all inbound
  and outbound traffic to and from itself.
- Karpenter EFA: v1.14 docs concepts/nodeclasses.md (`spec.networkInterfaces`, `spec.placementGroupSelector`).
  Karpenter classes keep the cluster security group EKS creates, which already allows all traffic from
  itself (EKS user guide sec-group-reqs), and select subnets of the class's one zone by requirement.
- Device plugin: aws/eks-charts stable/aws-efa-k8s-device-plugin (v0.5.30) templates/daemonset.yaml: it
  tolerates `CriticalAddonsOnly` plus `tolerations`, takes `nodeSelector`, and requires
  `supportedInstanceLabels.keys` In `supportedInstanceLabels.values` (and not Auto Mode nodes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config.model import GpuPool
from ..config.network import efa_count, efa_instances
from ..scheduling.nodes import NETWORK_LABEL, GpuNodeTarget, agent_tolerations

EFA_RESOURCE = "vpc.amazonaws.com/efa"
"""The extended resource the EFA device plugin advertises (one per EFA interface)."""
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
DEVICE_PLUGIN_RELEASE = "aws-efa-k8s-device-plugin"
DEVICE_PLUGIN_NAMESPACE = "kube-system"
"""Where the EKS user guide installs it (ml/node-efa.adoc: `helm install ... --namespace kube-system`)."""


def is_efa(pool: GpuPool) -> bool:
    return pool.network == "efa"


def pool_types(pool: GpuPool) -> list[str]:
    """Instance types an EFA pool launches: its (or the catalog's) types that take EFA."""
    return efa_instances(pool.gpu, pool.gpusPerNode, pool.instanceTypes)


def interfaces(pool: GpuPool) -> int:
    """EFA interfaces each node of the pool gets (and pods may request as `vpc.amazonaws.com/efa`)."""
    return efa_count(pool_types(pool))


def karpenter_interfaces(count: int) -> list[dict[str, Any]]:
    """EC2NodeClass `networkInterfaces`: the primary ENA interface, then one EFA-only per network card."""
    out: list[dict[str, Any]] = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
    out.append({"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"})
    out += [{"networkCardIndex": i, "deviceIndex": 0, "interfaceType": "efa-only"} for i in range(1, count)]
    return out


def launch_template_interfaces(count: int, security_groups: Sequence[Any]) -> list[dict[str, Any]]:
    """Launch template `network_interfaces`: EFA (with ENA) as the primary on card 0, EFA-only on every
    other card; EKS attaches them in the node group's subnet."""
    return [
        {
            "device_index": 0,
            "network_card_index": i,
            "interface_type": "efa" if i == 0 else "efa-only",
            "delete_on_termination": "true",
            "security_groups": list(security_groups),
        }
        for i in range(count)
    ]


def node_class_name(pool: GpuPool) -> str:
    """An EFA class gets its own EC2NodeClass: interfaces and placement group are per class."""
    return f"{pool.name}-efa"


def node_class_fields(pool: GpuPool) -> dict[str, Any]:
    """The EC2NodeClass spec fields an EFA class adds."""
    fields: dict[str, Any] = {"networkInterfaces": karpenter_interfaces(interfaces(pool))}
    if pool.placementGroup:
        key = "id" if pool.placementGroup.startswith("pg-") else "name"
        fields["placementGroupSelector"] = {key: pool.placementGroup}
    return fields


def requirements(pool: GpuPool) -> list[dict[str, Any]]:
    """NodePool requirements beyond the GPU ones: the pool's zones, and an EFA class's EFA instance types
    (unless `instanceTypes` already lists them)."""
    out = []
    if is_efa(pool) and not pool.instanceTypes:
        out.append({"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": pool_types(pool)})
    if pool.zones:
        out.append({"key": ZONE_LABEL, "operator": "In", "values": list(pool.zones)})
    return out


def security_group_args(cluster: str, pool: GpuPool, vpc_id: Any) -> dict[str, Any]:
    """A security group that allows all traffic to and from itself (EFA's requirement)."""
    return {
        "name_prefix": f"{cluster}-{pool.name}-efa-",
        "description": f"gpuplane {cluster}/{pool.name}: EFA traffic between the pool's nodes",
        "vpc_id": vpc_id,
        "ingress": [{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA in"}],
        "egress": [{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA out"}],
        "tags": {"gpuplane.io/cluster": cluster, "gpuplane.io/pool": pool.name},
    }


def placement_group_args(cluster: str, pool: GpuPool) -> dict[str, Any]:
    """A cluster placement group: the pool's instances on one low-latency network segment of one AZ."""
    return {
        "name": f"{cluster}-{pool.name}",
        "strategy": "cluster",
        "tags": {"gpuplane.io/cluster": cluster, "gpuplane.io/pool": pool.name},
    }


def device_plugin_values(targets: Sequence[GpuNodeTarget], pools: Sequence[GpuPool]) -> dict[str, Any]:
    """The device plugin on EFA pools only: their network label, their instance types, their taints."""
    types = sorted({t for p in pools if is_efa(p) for t in pool_types(p)})
    return {
        "nodeSelector": {NETWORK_LABEL: "efa"},
        "supportedInstanceLabels": {"keys": [INSTANCE_TYPE_LABEL], "values": types},
        "tolerations": agent_tolerations("aws", list(targets)),
    }


def efa_limits(pool: GpuPool) -> Mapping[str, int]:
    """`vpc.amazonaws.com/efa` a pod on a whole node of the pool requests (empty for other pools)."""
    return {EFA_RESOURCE: interfaces(pool)} if is_efa(pool) else {}
