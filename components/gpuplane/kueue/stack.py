"""From a stack's `gpuplane:queues` to `KueueQueues`: pools as `gpu_nodes`, ceilings, topology, quota table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from ..args.kueue import KueueQueuesArgs, KueueTeamArgs, KueueTopologyArgs
from ..catalog.topology import labelled
from ..config import ConfigError
from ..config.capacity import duration_seconds, is_queued
from ..config.model import GpuPool, StackConfig
from ..config.queues import QueuesConfig
from ..scheduling.placement import ceiling, stack_gpu_nodes


def queued_run_seconds(cfg: StackConfig) -> int | None:
    """The queued pools' maximum run time in seconds, if they set one (config makes them agree)."""
    runs = {p.maxRunDuration for p in cfg.gpuPools if is_queued(p) and p.maxRunDuration is not None}
    return duration_seconds(runs.pop()) if runs else None


def over_ceilings(queues: QueuesConfig, ceilings: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """Pool -> (sum of the teams' quotas, ceiling) for each pool the teams over-commit."""
    out = {}
    for pool, top in ceilings.items():
        total = sum(t.quota.get(pool, 0) for t in queues.teams)
        if total > top:
            out[pool] = (total, top)
    return out


def machines(cfg: StackConfig, pool: GpuPool) -> list[str]:
    if cfg.platform_spec.cloud == "gcp":
        from ..gcp.render import machine_type

        return [machine_type(pool)]
    from ..aws.render import instance_types

    return list(instance_types(pool))


def keeps_nodes(cfg: StackConfig, pool: GpuPool, queues: QueuesConfig) -> bool:
    """Kueue's topology-aware scheduling counts existing nodes, and reaches the autoscaler only through a
    ProvisioningRequest check (kueue site docs/concepts/topology_aware_scheduling.md, "ClusterAutoscaler
    support"): so only queued-provisioning pools and fixed pools that never scale get a topology."""
    static = cfg.platform_spec.fixed_pools and pool.minNodes == pool.maxNodes
    return static or is_queued(pool)


def topology(cfg: StackConfig) -> KueueTopologyArgs | None:
    """The cloud's topology labels, for pools whose machines all carry them (catalog.topology)."""
    q = cfg.queues
    if q is None or not q.topology:
        return None
    cloud = cfg.platform_spec.cloud
    found = None
    pools: list[str] = []
    for p in cfg.gpuPools:
        topo = labelled(cloud, machines(cfg, p), p.spot)
        if topo is not None and keeps_nodes(cfg, p, q):
            found, pools = topo, [*pools, p.name]
    if found is None:
        return None
    return KueueTopologyArgs(name=found.name, levels=list(found.levels), pools=pools)


def kueue_args(cfg: StackConfig) -> KueueQueuesArgs:
    q = cfg.queues
    assert q is not None
    teams = []
    for t in q.teams:
        team = KueueTeamArgs(name=t.name, quota=dict(t.quota))
        if t.namespace:
            team["namespace"] = t.namespace
        if t.localQueue:
            team["local_queue"] = t.localQueue
        teams.append(team)
    system = cfg.platform_spec.system_pods
    args = KueueQueuesArgs(
        gpu_nodes=stack_gpu_nodes(cfg),
        teams=teams,
        ceilings={p.name: ceiling(p) for p in cfg.gpuPools},
        overcommit=q.overcommit,
        create_namespaces=q.createNamespaces,
        pods_ready_timeout=q.podsReadyTimeout,
        queued_provisioning=[p.name for p in cfg.gpuPools if is_queued(p)],
        node_selector=dict(system.node_selector),
        tolerations=[dict(t) for t in system.tolerations],
    )
    if q.cohort is not None:
        args["cohort"] = q.cohort
    if q.frameworks is not None:
        args["frameworks"] = list(q.frameworks)
    if q.multikueueWorker:
        args["multikueue_worker"] = True
    seconds = queued_run_seconds(cfg)
    if seconds is not None:
        args["queued_max_run_seconds"] = seconds
    topo = topology(cfg)
    if topo is not None:
        args["topology"] = topo
    return args


def quota_rows(cfg: StackConfig) -> list[dict[str, Any]]:
    """Per pool and team: the team's nominal quota against the pool's ceiling (`gpuplane capacity`)."""
    q = cfg.queues
    if q is None:
        return []
    nodes = {n["pool"]: n for n in stack_gpu_nodes(cfg)}
    rows = []
    for p in cfg.gpuPools:
        top = ceiling(p)
        for t in q.teams:
            if p.name in t.quota:
                rows.append(
                    {
                        "pool": p.name,
                        "team": t.name,
                        "quota": t.quota[p.name],
                        "ceiling": top,
                        "resource": nodes[p.name]["resource"],
                    }
                )
    return rows


def quota_table(cfg: StackConfig) -> str:
    """Each team's quota against each pool's ceiling, and the pools' totals."""
    rows = quota_rows(cfg)
    if not rows:
        return ""
    q = cfg.queues
    assert q is not None
    lines = [f"{'pool':<14} {'team':<14} {'quota':>6} {'ceiling':>8}  resource"]
    for r in rows:
        lines.append(f"{r['pool']:<14} {r['team']:<14} {r['quota']:>6} {r['ceiling']:>8}  {r['resource']}")
    for pool, (total, top) in over_ceilings(q, {p.name: ceiling(p) for p in cfg.gpuPools}).items():
        lines.append(f"{pool}: teams' quotas sum to {total}, above the ceiling {top} (overcommit: true)")
    borrow = f"; teams borrow idle quota in cohort {q.cohort}" if q.cohort else ""
    return "\n".join([*lines, f"Queues: Kueue ClusterQueue per team{borrow}."])


def team_of(cfg: StackConfig, team: str) -> KueueTeamArgs:
    """A team of the stack's queues, or a ConfigError naming the known ones."""
    q = cfg.queues
    if q is None:
        raise ConfigError([("queue", "this stack has no gpuplane:queues")])
    for t in kueue_args(cfg)["teams"]:
        if t["name"] == team:
            return t
    raise ConfigError([("queue", f"no team {team!r} (teams: {', '.join(t.name for t in q.teams)})")])


def queue_outputs(cfg: StackConfig, queues: Any, kubeconfig: Any) -> dict[str, Any]:
    """The stack output `multikueueKubeconfig` (secret) of a MultiKueue worker (`queues.multikueueWorker`): the
    cluster's server and CA with the worker account's token, as a manager's Kueue accepts it."""
    token = getattr(queues, "multikueue_token", None)
    if token is None:
        return {}
    from .multikueue_worker import worker_kubeconfig

    text = pulumi.Output.all(kubeconfig, token).apply(lambda a: worker_kubeconfig(a[0], str(a[1]), cfg.cluster.name))
    return {"multikueueKubeconfig": pulumi.Output.secret(text)}


def kueue_queues(name: str, cfg: StackConfig, opts: Any) -> Any:
    """`KueueQueues` named `{name}-kueue` when the stack sets `gpuplane:queues` (else nothing)."""
    if cfg.queues is None:
        return None
    from .component import KueueQueues

    return KueueQueues(f"{name}-kueue", kueue_args(cfg), opts=opts)
