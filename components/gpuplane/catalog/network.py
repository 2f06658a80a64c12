"""Multi-node networking facts per instance / machine type: EFA interfaces (AWS), GPUDirect networks (GKE) and
the network-topology node labels each cloud sets. Data only; `config.model` refuses pools these tables do
not allow, and the AWS / GKE renders read them.

Sources (checked 2026-11):
- EFA interfaces per instance type: the `vpc.amazonaws.com/efa` capacity Karpenter v1.14 lists per type
  (aws/karpenter-provider-aws website/content/en/v1.14/reference/instance-types.md, generated from
  EC2 DescribeInstanceTypes `NetworkInfo.EfaInfo.MaximumEfaInterfaces`); one EFA per network card (EKS
  user guide ml/node-efa.adoc, "You can assign up to one EFA per network card").
- EKS topology labels: EKS user guide "Place distributed AI/ML workloads with network topology labels"
  (eks/latest/userguide/ml-workload-topology), instance types from EC2 "Prerequisites for Amazon EC2
  topology" (3 network layers; p6-b200 / p6-b300: 4).
- GKE GPUDirect: GKE "Maximize GPU network bandwidth with GPUDirect and multi-networking"
  (kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx and gpudirect-rdma): A3 Mega
  (GPUDirect-TCPXO) needs 8 extra VPCs, one subnet each, MTU 8244; A3 Ultra / A4 (GPUDirect RDMA) need one
  extra gVNIC VPC and one RoCE VPC (network profile `<zone>-vpc-roce`, MTU 8896) with 8 subnets. The
  installer DaemonSets are GoogleCloudPlatform/container-engine-accelerators
  gpudirect-tcpxo/nccl-tcpxo-installer.yaml and gpudirect-rdma/nccl-rdma-installer.yaml (992db812).
- GKE topology labels `cloud.google.com/gce-topology-{block,subblock,host}`: GKE "Topology-aware
  scheduling" for A3 Mega / A3 Ultra / A4 (compact placement, reservations).
- Blackwell (checked 2026-12): EFA counts from the same Karpenter v1.14 reference (p6-b200 8, p6-b300 16,
  g7e.8xlarge 1, .12xlarge 1, .24xlarge 2, .48xlarge 4; g7e.2xlarge / .4xlarge list none). p6e-gb200.36xlarge
  is not in that reference (nor in awslabs/amazon-eks-ami nodeadm instance-info.jsonl, 81fec2e8), so its EFA
  count is not verified and it has no entry: `network: efa` on P6e-GB200 is refused. GPUDirect on A4X
  (a4x-highgpu-4g): cluster-toolkit examples/gke-a4x before f7bf6d05 (2026-05) gave it one extra gVNIC VPC
  and a RoCE VPC (`<zone>-vpc-roce`) with 4 subnets, but its NCCL plugin is Google's Arm gIB installer
  (nccl-plugin-gib-arm64), which `gcp.gpudirect` does not render (its RDMA installer selects x86 H200 / B200
  nodes), and the current blueprint uses DRANET instead of extra node networks: no entry, so `network:
  gpudirect` on A4X is refused. Likewise A4X Max (a4x-maxgpu-4g-metal: an IDPF NIC VPC and a
  `<zone>-vpc-roce-metal` RDMA VPC through the networking DRA driver) is left out: not verified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .topology import PACKING_EXCLUDED, TOPOLOGY

EFA_INTERFACES: Mapping[str, int] = MappingProxyType(
    {
        "g4dn.8xlarge": 1,
        "g4dn.12xlarge": 1,
        "g4dn.16xlarge": 1,
        "g4dn.metal": 1,
        "g5.8xlarge": 1,
        "g5.12xlarge": 1,
        "g5.16xlarge": 1,
        "g5.24xlarge": 1,
        "g5.48xlarge": 1,
        "g6.8xlarge": 1,
        "g6.12xlarge": 1,
        "g6.16xlarge": 1,
        "g6.24xlarge": 1,
        "g6.48xlarge": 1,
        "g6e.8xlarge": 1,
        "g6e.12xlarge": 1,
        "g6e.16xlarge": 1,
        "g6e.24xlarge": 2,
        "g6e.48xlarge": 4,
        "p3dn.24xlarge": 1,
        "p4d.24xlarge": 4,
        "p4de.24xlarge": 4,
        "p5.4xlarge": 1,
        "p5.48xlarge": 32,
        "p5e.48xlarge": 32,
        "p5en.48xlarge": 16,
        "p6-b200.48xlarge": 8,
        "p6-b300.48xlarge": 16,
        # no p6e-gb200.36xlarge: its EFA count is not verified (module docstring)
        "g7e.8xlarge": 1,
        "g7e.12xlarge": 1,
        "g7e.24xlarge": 2,
        "g7e.48xlarge": 4,
    }
)
"""Instance type -> EFA interfaces it takes (one per network card). Types not listed have no EFA."""


@dataclass(frozen=True)
class GpuDirect:
    """What one GKE machine type needs for GPUDirect: its extra networks and NCCL plugin installer."""

    kind: str
    """`tcpxo` (A3 Mega) or `rdma` (A3 Ultra, A4)."""
    gvnic_networks: int
    """Extra VPCs (one subnet each) of the host's gVNIC NICs."""
    rdma_subnets: int
    """Subnets of the one RoCE VPC (RDMA NICs); 0 when the machine has no RDMA NICs."""
    mtu: int
    """MTU of the extra VPCs."""
    device_mode: str
    """`GKENetworkParamSet.spec.deviceMode` of the GPU NICs' networks (`NetDevice` or `RDMA`)."""
    installer: str
    """Key of the NCCL plugin installer DaemonSet (`gcp.gpudirect.INSTALLERS`)."""

    @property
    def additional_networks(self) -> int:
        """Node network interfaces beyond the primary one (`additional_node_network_configs`)."""
        return self.gvnic_networks + self.rdma_subnets


GPUDIRECT: Mapping[str, GpuDirect] = MappingProxyType(
    {
        "a3-megagpu-8g": GpuDirect("tcpxo", 8, 0, 8244, "NetDevice", "tcpxo"),
        "a3-ultragpu-8g": GpuDirect("rdma", 1, 8, 8896, "RDMA", "rdma"),
        "a4-highgpu-8g": GpuDirect("rdma", 1, 8, 8896, "RDMA", "rdma"),
    }
)
"""GKE machine type -> its GPUDirect networking. Other machine types have none."""


@dataclass(frozen=True)
class NodeTopology:
    """The network-topology node labels of an instance / machine type that help pack a job, broadest
    first (empty: none)."""

    keys: tuple[str, ...]

    @property
    def closest(self) -> str | None:
        """The most selective label (nodes sharing its value are nearest each other)."""
        return self.keys[-1] if self.keys else None


def topology_labels(cloud: str, instance_type: str) -> NodeTopology:
    """The topology labels the cloud puts on nodes of `instance_type` (`aws`) or machine type (`gcp`), from
    the one table of them (`catalog.topology.TOPOLOGY`, which Kueue's Topology also reads), without the
    levels that name a single node (`PACKING_EXCLUDED`)."""
    topo = TOPOLOGY.get(cloud)
    if topo is None or instance_type not in topo.machines:
        return NodeTopology(())
    return NodeTopology(tuple(k for k in topo.levels if k not in PACKING_EXCLUDED))


def efa_types() -> tuple[str, ...]:
    """Instance types with EFA, in catalog order."""
    return tuple(EFA_INTERFACES)
