"""Typed args of `KueueQueues` (no `from __future__ import annotations`: the multi-language package reads
the annotations, as in `gpuplane.args.inputs`)."""

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from .inputs import GpuNodes


class KueueTeamArgs(TypedDict):
    """One team: a ClusterQueue with nominal quota per GPU pool and a LocalQueue in its namespace."""

    name: str
    """Team name: the ClusterQueue's and LocalQueue's name (`kueue.x-k8s.io/queue-name` of its jobs)."""
    quota: Mapping[str, int]
    """GPU pool -> nominal quota in the pool's resource units (GPUs, MIG slices or shared-GPU slots)."""
    namespace: NotRequired[str]
    """Namespace of the team's LocalQueue; default the team name."""
    local_queue: NotRequired[str]
    """Name of the team's LocalQueue (what its jobs name in `kueue.x-k8s.io/queue-name`); default the team name."""


class KueueTopologyArgs(TypedDict):
    """Topology-aware scheduling: the cloud's network-topology node labels and the pools that carry them."""

    name: str
    """Name of the Kueue Topology object."""
    levels: Sequence[str]
    """Node labels, broadest domain first (`kubernetes.io/hostname` only last)."""
    pools: Sequence[str]
    """Pools whose flavors reference the topology (their nodes carry every level's label)."""


class KueueQueuesArgs(TypedDict):
    """Arguments of `KueueQueues`."""

    gpu_nodes: Sequence[GpuNodes]
    """The GPU pools (a pool component's `gpu_nodes`): one ResourceFlavor each, selecting and tolerating
    exactly what `placement()` puts on pods for that pool."""
    teams: Sequence[KueueTeamArgs]
    """The teams; each names pools of `gpu_nodes` in its quota."""
    cohort: NotRequired[str]
    """Cohort of every team's ClusterQueue: teams borrow quota the others leave idle."""
    ceilings: NotRequired[Mapping[str, int]]
    """Pool -> most of its resource the pool can offer; the teams' quotas on a pool must sum to at most it.
    Unset for a pool: its `gpu_nodes` entry's `ceiling` (every gpuplane pool component sets one)."""
    overcommit: NotRequired[bool]
    """Allow quotas summing past `ceilings`."""
    create_namespaces: NotRequired[bool]
    """Create the teams' namespaces (default true)."""
    pods_ready_timeout: NotRequired[str]
    """Gang admission: evict and requeue a job whose pods are not all ready within this (default `10m`)."""
    queued_provisioning: NotRequired[Sequence[str]]
    """GKE pools provisioned through ProvisioningRequests (class `queued-provisioning.gke.io`)."""
    queued_max_run_seconds: NotRequired[int]
    """The queued pools' maximum run time: the ProvisioningRequests' `maxRunDurationSeconds` parameter (GKE
    stops the nodes after it; the node pool's own `max_run_duration` alone does not reach the request)."""
    topology: NotRequired[KueueTopologyArgs]
    """Topology-aware scheduling for the pools that carry the cloud's topology labels."""
    node_selector: NotRequired[Mapping[str, str]]
    """Where Kueue's controller runs (the system nodes)."""
    tolerations: NotRequired[Sequence[Mapping[str, str]]]
    """Tolerations of Kueue's controller (for tainted system nodes)."""
    namespace: NotRequired[str]
    """Namespace of Kueue itself (created here); default `kueue-system`."""
    frameworks: NotRequired[Sequence[str]]
    """Kueue's `integrations.frameworks` (e.g. `batch/job`, `pod`, `jobset.x-k8s.io/jobset`); default the chart's
    list. A MultiKueue manager watches every enabled framework on every worker, whose CRDs must be there."""
    multikueue_worker: NotRequired[bool]
    """Let a MultiKueue manager reach this cluster: a ServiceAccount in Kueue's namespace with the role Kueue's
    setup script gives it (over the job kinds of `frameworks`, which must be the manager's), bound cluster-wide, and
    its long-lived token Secret (`KueueQueues.multikueue_token`)."""
    cluster: NotRequired[Any]
    """Your cluster object (`pulumi_eks.Cluster`, `aws.eks.Cluster` or `gcp.container.Cluster`): the
    Kubernetes resources go to it through a provider made here (`{name}-k8s`), unless `opts` give one."""
