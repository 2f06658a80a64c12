"""`placement()` for a job that goes through a team's queue: the pool's pod-spec fragments plus the
metadata Kueue reads.

- A Job (or JobSet, ...) carries `kueue.x-k8s.io/queue-name` in its own labels; Kueue's webhook then
  creates it suspended and unsuspends it once the whole job is admitted (kueue
  pkg/controller/jobs/job/job_webhook.go `Default` -> jobframework.ApplyDefaultForSuspend).
- Plain pods form a gang with the same group-name label and the total-count annotation on every pod
  (kueue pkg/controller/jobs/pod/constants/constants.go; site docs/tasks/run/plain_pods.md).
The fragment's `metadata` goes on the Job (its pods inherit nothing else), or on each pod of a group.
"""

from __future__ import annotations

from typing import Any

from ..config import ConfigError
from ..config.capacity import is_queued
from ..config.model import StackConfig
from ..scheduling.nodes import pool_labels
from ..scheduling.placement import find_pool, gpu_nodes, placement
from . import render as r
from .stack import team_of


def queued_placement(
    cfg: StackConfig,
    pool_name: str,
    gpus: int,
    team: str,
    pod_group: str | None = None,
    group_size: int | None = None,
    **claims: Any,
) -> dict[str, Any]:
    """`placement(cfg, pool_name, gpus)` for a job of `team`, plus the namespace and Kueue metadata; `claims`
    (`job`, `mig`, `selector`, `compute_domain`) go to `placement` as they are."""
    t = team_of(cfg, team)
    pool = find_pool(cfg, pool_name)
    assert cfg.queues is not None
    if pool.name not in t["quota"] and cfg.queues.cohort is None:
        raise ConfigError([("queue", f"team {team!r} has no quota on pool {pool.name!r} and no cohort to borrow from")])
    if (pod_group is None) != (group_size is None):
        raise ConfigError([("pod-group", "give both a pod group name and its size, or neither")])
    if group_size is not None and group_size < 1:
        raise ConfigError([("pod-group", f"a pod group has at least 1 pod, not {group_size}")])
    if (claims.get("mig") or claims.get("selector")) and pool.minNodes == 0:
        raise ConfigError(
            [
                (
                    "queue",
                    "Kueue v0.19 admits a claim with CEL selectors (a MIG profile, --selector) only against devices "
                    f"nodes already publish (pkg/dra/claims.go), and {pool.name} scales to 0 nodes, so the job would "
                    "stay suspended: set the pool's minNodes to 1 or more, or claim whole GPUs",
                )
            ]
        )
    nodes = gpu_nodes(cfg.platform, pool, pool_labels(cfg.cluster.name, pool, cfg.platform_spec.cloud))
    if is_queued(pool):
        nodes = r.queued(nodes)
    fragment = placement(nodes, gpus=gpus, **claims)
    md: dict[str, Any] = {"namespace": r.namespace_of(t), "labels": {r.QUEUE_LABEL: t["name"]}}
    if pod_group is not None:
        md["labels"][r.POD_GROUP_LABEL] = pod_group
        md["annotations"] = {r.POD_GROUP_COUNT: str(group_size)}
    return {"metadata": md, **fragment}
