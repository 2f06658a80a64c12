"""Job queues (`gpuplane:queues`): Kueue with one ClusterQueue per team, quotas per GPU pool.

Checks that need the pools (quota ceilings) run in `StackConfig`'s validator; the ones that need only
pool names read them from the validation context, so each bad reference is named at its own key.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, ValidationInfo, field_validator

from .base import DNS_LABEL, DURATION, Model, context_value, repeated, shaped, suggest

DNS_SUBDOMAIN = shaped(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    "must be a DNS subdomain: lowercase letters, digits, '-' and '.', e.g. ml or ml.research",
)
"""Kueue object names (ClusterQueue, Cohort): the CRDs' pattern (kueue.x-k8s.io_clusterqueues.yaml cohortName)."""


KueueFramework = Literal[
    "batch/job",
    "pod",
    "deployment",
    "statefulset",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/mpijob",
    "kubeflow.org/tfjob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "workload.codeflare.dev/appwrapper",
    "leaderworkerset.x-k8s.io/leaderworkerset",
    "sparkoperator.k8s.io/sparkapplication",
]
"""Kueue v0.19.2's integrations (pkg/controller/jobs/*: each controller's `FrameworkName`)."""
KUEUE_FRAMEWORKS: tuple[str, ...] = get_args(KueueFramework)


def _unknown_pools(names: list[str], info: ValidationInfo) -> list[str]:
    known = context_value(info, "pool_names")
    if not isinstance(known, list):  # a pool or its name is itself bad; its own error says so
        return []
    return [n for n in names if n not in known]


def _pool_message(bad: list[str], info: ValidationInfo) -> str:
    known = context_value(info, "pool_names")
    pools = [str(n) for n in known] if isinstance(known, list) else []
    hint = suggest(bad[0], pools) if len(bad) == 1 else ""
    return f"no GPU pool named {', '.join(repr(b) for b in bad)}{hint} (pools: {', '.join(pools) or 'none'})"


class Team(Model):
    """One team: a ClusterQueue with nominal quota per GPU pool, and a LocalQueue in its namespace."""

    name: str = Field(pattern=DNS_LABEL, min_length=1, max_length=63)
    """Team name: the ClusterQueue's and the LocalQueue's name (`kueue.x-k8s.io/queue-name` of its jobs)."""
    namespace: str | None = Field(default=None, pattern=DNS_LABEL, max_length=63)
    """Namespace of the team's LocalQueue (and its jobs); unset: the team name."""
    localQueue: str | None = Field(default=None, pattern=DNS_LABEL, max_length=63)
    """Name of the team's LocalQueue (what its jobs name in `kueue.x-k8s.io/queue-name`); unset: the team name."""
    quota: dict[str, int] = Field(min_length=1)
    """GPU pool -> nominal quota in the pool's resource units (GPUs, MIG slices or shared-GPU slots)."""

    @field_validator("quota")
    @classmethod
    def _quota_pools(cls, v: dict[str, int], info: ValidationInfo) -> dict[str, int]:
        negative = sorted(k for k, n in v.items() if n < 0)
        if negative:
            raise ValueError(f"quotas must be >= 0 (negative: {', '.join(negative)})")
        bad = _unknown_pools(list(v), info)
        if bad:
            raise ValueError(_pool_message(bad, info))
        return v

    @property
    def queue_namespace(self) -> str:
        return self.namespace or self.name

    @property
    def local_queue(self) -> str:
        return self.localQueue or self.name


class QueuesConfig(Model):
    """Kueue job queues: whole jobs are admitted within the pools' GPU ceilings, or wait."""

    teams: list[Team] = Field(min_length=1)
    """One entry per team (a ClusterQueue, a LocalQueue and, with `createNamespaces`, a namespace)."""
    cohort: str | None = Field(default=None, pattern=DNS_SUBDOMAIN, max_length=63)
    """Put every team's ClusterQueue in this cohort so a team may borrow quota the others leave idle."""
    overcommit: bool = False
    """Allow nominal quotas that together exceed a pool's GPU ceiling (refused unless set explicitly)."""
    createNamespaces: bool = True
    """Create the teams' namespaces (off: they exist already, and gpuplane only adds LocalQueues)."""
    podsReadyTimeout: str = Field(default="10m", pattern=DURATION)
    """Gang admission (`waitForPodsReady`): an admitted job whose pods are not all ready within this time
    is evicted and requeued, so a job never holds part of its GPUs."""
    topology: bool = True
    """Topology-aware scheduling on pools whose machines carry the cloud's topology labels."""
    frameworks: list[KueueFramework] | None = None
    """Kueue's integrations (`integrations.frameworks`, the names of kueue v0.19.2 pkg/controller/jobs
    `FrameworkName`); unset: the chart's list. A MultiKueue fleet sets batch/job, pod, deployment, statefulset on every
    region: a manager watches each enabled framework on every worker, whose CRD must be there."""
    multikueueWorker: bool = False
    """Let a Kueue MultiKueue manager elsewhere dispatch jobs here: a ServiceAccount with the role Kueue's setup
    script gives, its token, and the stack output `multikueueKubeconfig` (secret) for the manager's
    MultiKueueCluster. A fleet's `fleet.multikueue` sets it on every worker region (docs/queues.md)."""

    @field_validator("teams")
    @classmethod
    def _unique(cls, v: list[Team]) -> list[Team]:
        for what, values in (("team names", [t.name for t in v]), ("namespaces", [t.queue_namespace for t in v])):
            dupes = repeated(values)
            if dupes:
                raise ValueError(f"{what} must be unique (repeated: {', '.join(dupes)})")
        return v
