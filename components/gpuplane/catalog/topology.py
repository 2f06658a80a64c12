"""Which GPU machines the cloud labels with their place in the data-center network, and with which labels.

Kueue's topology-aware scheduling packs a job's pods into as few network domains as possible; it needs
node labels naming those domains, broadest first. Only some machine types get them:

- GKE: `cloud.google.com/gce-topology-{block,subblock,host}` on A4X, A4, A3 Ultra, A3 Mega and
  A3 High (8 GPUs) nodes; Spot VMs expose them only with compact placement (Google Cloud AI
  Hypercomputer docs, "Schedule GKE workloads with Topology Aware Scheduling", section "View the
  topology of your GKE cluster"; docs.cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas).
- EKS: `topology.k8s.aws/network-node-layer-{1,2,3}` (layer 1 broadest) on instance types that EC2's
  DescribeInstanceTopology supports (EKS user guide, "Place distributed AI/ML workloads with network
  topology labels", docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html; supported
  types: AWS CLI reference `ec2 describe-instance-topology`, "Limitations"). p6-b200 and p6-b300 have
  a fourth layer; the three common layers still order their nodes.

Checked 2026-12 for Blackwell: EC2 "Prerequisites for Amazon EC2 topology" lists g7e.* and p6e-gb200.36xlarge
among the 3-layer types and p6-b200 / p6-b300 as 4-layer; GKE's TAS page names A4X and A4 (A4X Max,
a4x-maxgpu-4g-metal, is not named there: left out, not verified).

`NVLINK_DOMAINS` records the NVLink domains that span nodes (GB200 / GB300 NVL72): how many machines one joins
and how the cloud sells it. Sources: AWS SDK EC2 changelog 2025-07-09 (Capacity Blocks sell u-p6e-gb200x72
and u-p6e-gb200x36 UltraServers); EC2 user guide "Amazon EC2 UltraServers" and "Capacity Blocks for ML"
(UltraServer Capacity Blocks; the stored copies were readable only in part), with 4 GPUs per
p6e-gb200.36xlarge, so 72 GPUs are 18 instances and 36 are 9 (AWS ML blog on SageMaker HyperPod P6e-GB200:
ml.u-p6e-gb200x36 has 36 GPUs, x72 has 72); GCP A4X / A4X Max machine-series docs (one NVL72 domain is 18
instances and 72 GPUs), reservations with blocks and sub-blocks (cluster-toolkit pkg/orchestrator/gke
nap_test.go: `reservationBlocks/.../reservationSubBlocks/...`) and workload policy `accelerator_topology:
1x72` (cluster-toolkit examples/gke-a4x, gke-a4x-max-bm).

`kubernetes.io/hostname` closes each list: Kueue allows it only as the lowest level (Topology CRD
v0.19.2 CEL rule) and Google's TAS example uses it there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

_G7E = ("2xlarge", "4xlarge", "8xlarge", "12xlarge", "24xlarge", "48xlarge")


@dataclass(frozen=True)
class TopologyLabels:
    """A cloud's network-topology node labels (broadest first) and the machines that carry them."""

    name: str
    """Name of the Kueue Topology gpuplane creates for them."""
    levels: tuple[str, ...]
    machines: frozenset[str]
    spot: bool
    """Whether spot nodes carry the labels without further setup."""


TOPOLOGY: Mapping[str, TopologyLabels] = MappingProxyType(
    {
        "gcp": TopologyLabels(
            name="gke-default",
            levels=(
                "cloud.google.com/gce-topology-block",
                "cloud.google.com/gce-topology-subblock",
                "cloud.google.com/gce-topology-host",
                "kubernetes.io/hostname",
            ),
            machines=frozenset({"a4x-highgpu-4g", "a4-highgpu-8g", "a3-ultragpu-8g", "a3-megagpu-8g", "a3-highgpu-8g"}),
            spot=False,
        ),
        "aws": TopologyLabels(
            name="aws-network",
            levels=(
                "topology.k8s.aws/network-node-layer-1",
                "topology.k8s.aws/network-node-layer-2",
                "topology.k8s.aws/network-node-layer-3",
                "kubernetes.io/hostname",
            ),
            machines=frozenset(
                {
                    "p3dn.24xlarge",
                    "p4d.24xlarge",
                    "p4de.24xlarge",
                    "p5.48xlarge",
                    "p5e.48xlarge",
                    "p5en.48xlarge",
                    "p6-b200.48xlarge",
                    "p6-b300.48xlarge",
                    "p6e-gb200.36xlarge",
                    *(f"g6e.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
                    "g6e.24xlarge",
                    "g6e.48xlarge",
                    *(f"g7e.{s}" for s in _G7E),
                }
            ),
            spot=True,
        ),
    }
)
"""Cloud -> its topology labels and the machine/instance types that get them. The one table of these facts:
Kueue's Topology and the placement helper's job packing (`catalog.network.topology_labels`) both read it."""

PACKING_EXCLUDED = frozenset({"cloud.google.com/gce-topology-host", "kubernetes.io/hostname"})
"""Levels that name one node (GKE's host label names the node's own host): no use for packing a job's pods
near each other with a preferred pod affinity, which the placement helper adds."""


def labelled(cloud: str, machines: list[str], spot: bool) -> TopologyLabels | None:
    """The topology labels every node of a pool with these machine types carries, or None."""
    topo = TOPOLOGY.get(cloud)
    if topo is None or not machines or not set(machines) <= topo.machines or (spot and not topo.spot):
        return None
    return topo


@dataclass(frozen=True)
class NvlinkDomain:
    """An NVLink domain that spans machines (a GB200 / GB300 NVL72 rack) and how the cloud sells it. NVLink
    between its machines needs NVIDIA IMEX, which a DRA ComputeDomain sets up for a job."""

    cloud: str
    nodes: int
    """Machines (Kubernetes nodes) one whole domain joins."""
    gpus: int
    """GPUs one whole domain joins."""
    sold_as: Mapping[str, int]
    """The units the cloud sells the domain in -> machines in one unit (AWS: UltraServer types; GCP: one
    reservation sub-block)."""
    purchase: str
    """How those units are bought."""

    @property
    def gpus_per_node(self) -> int:
        return self.gpus // self.nodes


_A4X_DOMAIN = NvlinkDomain(
    cloud="gcp",
    nodes=18,
    gpus=72,
    sold_as=MappingProxyType({"sub-block": 18}),
    purchase="a reservation (future reservation in AI Hypercomputer) whose blocks hold sub-blocks of 18 VMs, "
    "each one NVL72 domain; workload policy accelerator_topology 1x72",
)

NVLINK_DOMAINS: Mapping[str, NvlinkDomain] = MappingProxyType(
    {
        "p6e-gb200.36xlarge": NvlinkDomain(
            cloud="aws",
            nodes=18,
            gpus=72,
            sold_as=MappingProxyType({"u-p6e-gb200x72": 18, "u-p6e-gb200x36": 9}),
            purchase="EC2 Capacity Blocks for ML of UltraServers, in the Dallas Local Zone of us-east-1",
        ),
        "a4x-highgpu-4g": _A4X_DOMAIN,
        "a4x-maxgpu-4g-metal": _A4X_DOMAIN,
        # AWS P6e-GB300 UltraServers are left out with the GPU's AWS offer: botocore has no p6e-gb300 type.
    }
)
"""Instance (AWS) or machine (GCP) type -> the multi-node NVLink domain its machines belong to."""


def nvlink_domain(instance_or_machine: str) -> NvlinkDomain | None:
    """The multi-node NVLink domain of an instance / machine type, or None (its NVLink ends at the node)."""
    return NVLINK_DOMAINS.get(instance_or_machine)
