"""Multi-node facts the placement helper adds to a pool's `gpu_nodes`: the EFA devices a pod takes with its
GPUs, and the network-topology labels its pods can be packed by.

Topology choice: a *preferred* pod affinity (weight 100) on the pool's closest topology label
(`topology.k8s.aws/network-node-layer-3`, `cloud.google.com/gce-topology-subblock`... the last, most selective
key the catalog lists), towards pods of the same job (`gpuplane.io/job`). Preferred, not required: a required
affinity would leave a job's last pods pending forever once the closest network node is full, while a
preferred one packs while it can and still runs (slower) when it cannot. Gang scheduling with hard topology
constraints belongs to Kueue's topology-aware scheduling, which reads the same labels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..catalog.network import GPUDIRECT, topology_labels
from ..config.model import GpuPool

JOB_LABEL = "gpuplane.io/job"
"""Pod label the placement helper's `job` argument sets; the pod affinity selects pods by it."""


def devices(cloud: str, pool: GpuPool) -> dict[str, int]:
    """Extended resources besides GPUs that a whole node of the pool offers a multi-node pod."""
    if cloud == "aws" and pool.network == "efa":
        from ..aws import efa  # the AWS renders import the config models; keep this module light

        return dict(efa.efa_limits(pool))
    return {}


def pod_annotations(cloud: str, pool: GpuPool) -> dict[str, str]:
    """Pod annotations a multi-node pod needs on the pool: on GKE GPUDirect, the interfaces that attach the
    node's gVNIC and RDMA NICs to the pod (GKE docs, "Maximize GPU network bandwidth ... with GPUDirect":
    `networking.gke.io/default-interface` and `networking.gke.io/interfaces`, one entry per extra network,
    eth0 on the default one). Without them the pod has only eth0. A3 Mega (TCPXO) pods also need GKE's
    `devices.gke.io/container.tcpxo-daemon` annotation and the tcpxo-daemon sidecar, which the workload adds."""
    if cloud != "gcp" or pool.network != "gpudirect":
        return {}
    from ..gcp import gpudirect  # the GCP renders import the SDK's config models; keep this module light

    spec = gpudirect.spec_of(pool)
    if spec is None:
        return {}
    roles = [role for role, _, _ in gpudirect.interfaces("", pool, spec)]
    nics = [{"interfaceName": "eth0", "network": "default"}]
    nics += [{"interfaceName": f"eth{i + 1}", "network": f"{pool.name}-{role}"} for i, role in enumerate(roles)]
    return {
        "networking.gke.io/default-interface": "eth0",
        "networking.gke.io/interfaces": json.dumps(nics, separators=(",", ":")),
    }


def pool_instance_types(cloud: str, pool: GpuPool) -> list[str]:
    """The instance / machine types the pool's nodes can be (for the topology labels they get)."""
    from ..config.network import candidate_instances

    if cloud == "aws":
        return candidate_instances(pool.gpu, pool.gpusPerNode, pool.instanceTypes)
    from ..gcp.render import machine_type

    return [machine_type(pool)]


def topology_keys(cloud: str, pool: GpuPool) -> list[str]:
    """Topology labels every node of the pool carries (none unless all its types get them)."""
    keys = [topology_labels(cloud, t).keys for t in pool_instance_types(cloud, pool)]
    return list(keys[0]) if keys and all(k == keys[0] for k in keys) else []


def device_share(offered: Mapping[str, int], gpus: int, per_node: int) -> dict[str, int]:
    """A pod with `gpus` of the node's `per_node` GPUs takes the same share of its devices (at least one)."""
    return {r: max(1, n * gpus // per_node) for r, n in offered.items()}


def job_affinity(job: str, topology: list[str]) -> dict[str, Any] | None:
    """Preferred pod affinity towards the job's other pods under the same closest network node."""
    if not topology:
        return None
    term = {"labelSelector": {"matchLabels": {JOB_LABEL: job}}, "topologyKey": topology[-1]}
    return {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]}


def gpudirect_machine(pool: GpuPool) -> str | None:
    """The pool's machine type when it has GPUDirect networking configured."""
    from ..gcp.render import machine_type

    machine = machine_type(pool)
    return machine if pool.network == "gpudirect" and machine in GPUDIRECT else None
