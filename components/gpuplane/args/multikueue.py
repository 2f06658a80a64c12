"""Typed args of `MultiKueueManager` (no `from __future__ import annotations`: the multi-language package and
`args.checks.shape_problems` read the annotations, as in `gpuplane.args.kueue`)."""

from collections.abc import Mapping, Sequence
from typing import NotRequired, TypedDict

import pulumi


class MultiKueueManagerArgs(TypedDict):
    """Arguments of `MultiKueueManager`: Kueue's MultiKueue on a manager cluster, dispatching jobs to workers."""

    workers: Mapping[str, pulumi.Input[str]]
    """Worker name (a DNS label: its MultiKueueCluster's name, e.g. the region's cluster name) -> a kubeconfig of
    the worker that Kueue accepts: a static bearer token (a ServiceAccount's) or client certificate with
    `certificate-authority-data`, no exec plugin (kueue v0.19.2 multikueuecluster.go `validateKubeconfig`). An
    Output is kept secret. At most 20 workers (MultiKueueConfig `spec.clusters` maxItems)."""
    quotas: Mapping[str, int]
    """Resource -> the fleet's total (e.g. `{"nvidia.com/gpu": 72}`): the manager ClusterQueue's nominal quota,
    which Kueue advises to equal the workers' total (kueue site concepts/multikueue.md, "Manager Cluster")."""
    namespaces: NotRequired[Sequence[str]]
    """Namespaces that submit jobs: a LocalQueue `queue_name` in each (they must exist, and the workers need the
    same namespaces and LocalQueues). Unset: no LocalQueue, and the ClusterQueue admits from every namespace."""
    queue_name: NotRequired[str]
    """The ClusterQueue's and LocalQueues' name (default `gpuplane-fleet`)."""
