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
  types: AWS CLI reference `ec2 describe-instance-topology`, "Limitations"). p6-b200 has a fourth
  layer; the three common layers still order its nodes.

`kubernetes.io/hostname` closes each list: Kueue allows it only as the lowest level (Topology CRD
v0.19.2 CEL rule) and Google's TAS example uses it there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


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
                    *(f"g6e.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
                    "g6e.24xlarge",
                    "g6e.48xlarge",
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
