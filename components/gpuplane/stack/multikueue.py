"""Kueue MultiKueue across a fleet run as a stack per region (`gpuplane:fleet.multikueue`, docs/queues.md).

One region's cluster is the manager; every other region's is a worker (Kueue does not let the manager be a worker
for itself: kubernetes-sigs/kueue v0.19.2 site/content/en/docs/concepts/multikueue.md, "Limitations").
- Every region installs Kueue with, per namespace, a LocalQueue feeding a ClusterQueue over that region's pools (the
  namespaces share the pools through a cohort). A worker's LocalQueue is named `queueName`: MultiKueue creates a job's
  copy in the same namespace and LocalQueue on the worker (setup_multikueue.md, "In the Worker Cluster"). The
  manager's own is `<queueName>-local`, for its own GPUs ("Using manager to run workloads").
- Kueue's frameworks are `MULTIKUEUE_FRAMEWORKS` everywhere: the manager watches each on every worker.
- A worker also gets the account its manager connects as, and exports `multikueueKubeconfig` (secret).
- The central stack creates the MultiKueue objects on the manager (`MultiKueueManager`, through a provider made from
  the manager region's kubeconfig), one MultiKueueCluster per worker from the worker stacks' outputs, and a
  ClusterQueue whose quota is the workers' total ("the quota in the manager cluster should equal the total quota
  available in all worker clusters": concepts/multikueue.md, "Manager Cluster").
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from ..config.fleet import MULTIKUEUE_WORKERS
from ..config.model import GpuPool, StackConfig
from ..config.queues import QueuesConfig, Team
from ..kueue.render import MULTIKUEUE_FRAMEWORKS
from ..scheduling.placement import ceiling, stack_gpu_nodes

LOCAL = "-local"
"""Suffix of the manager region's own LocalQueue (`<queueName>-local`)."""


def manager_region(cfg: StackConfig) -> str | None:
    """The manager's region (None when the fleet has no MultiKueue)."""
    return cfg.fleet.multikueue_manager if cfg.fleet is not None else None


def worker_regions(cfg: StackConfig) -> list[str]:
    """The worker regions, in the fleet's order (the MultiKueueConfig's)."""
    manager = manager_region(cfg)
    if manager is None or cfg.fleet is None:
        return []
    return [r.region for r in cfg.fleet.regions if r.region != manager]


def _share(total: int, parts: int, i: int) -> int:
    """Part `i` of `total` split in `parts` whole shares, the remainder to the first."""
    return total // parts + (1 if i < total % parts else 0)


def _team_name(queue: str, namespace: str) -> str:
    name = f"{queue}-{namespace}"
    return name if len(name) <= 63 else f"{queue}-{hashlib.sha256(namespace.encode()).hexdigest()[:8]}"


def region_queues(cfg: StackConfig, region: str, pools: Sequence[GpuPool]) -> QueuesConfig | None:
    """The `gpuplane:queues` a region of a MultiKueue fleet gets (None without MultiKueue): a team per namespace
    whose LocalQueue is `queueName` on a worker (`<queueName>-local` on the manager), each with an equal share of
    every pool's ceiling, in one cohort so a namespace borrows what the others leave idle. Workers let the manager
    in (`multikueueWorker`)."""
    if cfg.fleet is None or cfg.fleet.multikueue is None:
        return None
    mk = cfg.fleet.multikueue
    worker = region != manager_region(cfg)
    queue = mk.queueName if worker else mk.queueName + LOCAL
    n = len(mk.namespaces)
    teams = [
        Team(
            name=_team_name(queue, ns),
            namespace=ns,
            localQueue=queue,
            quota={p.name: _share(ceiling(p), n, i) for p in pools},
        )
        for i, ns in enumerate(mk.namespaces)
    ]
    return QueuesConfig(
        teams=teams,
        cohort=queue if n > 1 else None,
        frameworks=list(MULTIKUEUE_FRAMEWORKS),  # type: ignore[arg-type]
        multikueueWorker=worker,
    )


OPEN = "0.0.0.0/0"


def _admits_everyone(cidrs: Sequence[str]) -> bool:
    return OPEN in cidrs


def multikueue_problems(cfg: StackConfig) -> list[tuple[tuple[int | str, ...], str]]:
    """Why the manager's Kueue could not reach the workers' API endpoints (empty: it can). A worker's endpoint
    admits only its allow list (GKE master authorized networks, with Compute Engine's public IPs kept out; EKS
    `publicAccessCidrs`), so the manager's egress must be on it; a private endpoint is out of reach from another
    region's network."""
    if cfg.fleet is None or cfg.fleet.multikueue is None:
        return []
    regions = [r.region for r in cfg.fleet.regions]
    if len(regions) - 1 > MULTIKUEUE_WORKERS:
        why = f"{len(regions) - 1} worker regions; a MultiKueueConfig lists at most {MULTIKUEUE_WORKERS} clusters"
        return [(("fleet", "regions"), why)]
    here: tuple[int | str, ...] = ("fleet", "multikueue", "managerEgress")
    egress = cfg.fleet.multikueue.managerEgress
    if cfg.gcp is not None:
        if cfg.gcp.privateEndpoint:
            return [(("gcp", "privateEndpoint"), PRIVATE)]
        if not cfg.gcp.privateNodes:
            return [(("gcp", "privateNodes"), EPHEMERAL)]
        allowed = [n.cidrBlock for n in cfg.gcp.authorizedNetworks]
        if len({*allowed, *egress}) > 50:
            return [(here, "the workers' authorizedNetworks would list more than 50 CIDR blocks (GKE's limit)")]
        # 0.0.0.0/0 is no shortcut here: gpuplane sets `gcp_public_cidrs_access_enabled: false`, and whether 0.0.0.0/0
        # still admits Compute Engine's public IPs (the manager's Cloud NAT addresses) is not documented: ask for them
        allowed = [c for c in allowed if c != OPEN]
    elif cfg.aws is not None:
        if not cfg.aws.public_endpoint:
            return [(("aws", "publicAccessCidrs"), PRIVATE)]
        allowed = list(cfg.aws.publicAccessCidrs)
    else:
        return []
    if not egress and not _admits_everyone(allowed):
        return [(here, NEEDS_EGRESS)]
    return []


PRIVATE = (
    "fleet.multikueue needs the workers' API endpoints public (to their allow lists): the manager's Kueue, in "
    "another region's network, cannot reach a private endpoint"
)
EPHEMERAL = (
    "fleet.multikueue needs private nodes: with public IPs the manager's nodes reach the workers from their own "
    "ephemeral addresses, which no allow list can name (private nodes leave through the Cloud NAT: managerEgress)"
)
NEEDS_EGRESS = (
    "list the manager cluster's egress (its Cloud NAT's or NAT gateways' public IPs, e.g. [34.1.2.3/32]): the "
    "workers' API endpoints admit only their allow lists, and the manager's Kueue calls them"
)


def worker_endpoint(cfg: StackConfig, region: str, update: Mapping[str, Any]) -> dict[str, Any]:
    """A worker region's `gcp` / `aws` section with the manager's egress added to its endpoint's allow list (the
    manager's own region unchanged). `update`: the region's other changes so far (its `gcp` / `aws` section)."""
    if cfg.fleet is None or cfg.fleet.multikueue is None or region == manager_region(cfg):
        return {}
    egress = cfg.fleet.multikueue.managerEgress
    if "gcp" in update:
        from ..config.gcp import AuthorizedNetwork

        gcp = update["gcp"]
        have = [n.cidrBlock for n in gcp.authorizedNetworks]
        extra = [AuthorizedNetwork(cidrBlock=c, displayName="multikueue-manager") for c in egress if c not in have]
        return {"gcp": gcp.model_copy(update={"authorizedNetworks": [*gcp.authorizedNetworks, *extra]})}
    if "aws" in update:
        aws = update["aws"]
        extra_cidrs = [c for c in egress if c not in aws.publicAccessCidrs]
        return {"aws": aws.model_copy(update={"publicAccessCidrs": [*aws.publicAccessCidrs, *extra_cidrs]})}
    return {}


def fleet_quotas(region_cfgs: Mapping[str, StackConfig], workers: Sequence[str]) -> dict[str, int]:
    """Resource -> the workers' total: every worker pool's ceiling, in its resource (`nvidia.com/gpu`, a MIG
    profile, shared slots)."""
    out: dict[str, int] = {}
    for region in workers:
        for n in stack_gpu_nodes(region_cfgs[region]):
            out[n["resource"]] = out.get(n["resource"], 0) + int(n["ceiling"])
    return out


def manager(
    name: str,
    cfg: StackConfig,
    region_cfgs: Mapping[str, StackConfig],
    manager_kubeconfig: pulumi.Input[str],
    worker_kubeconfigs: Mapping[str, pulumi.Input[str]],
    opts: pulumi.ResourceOptions | None = None,
) -> dict[str, Any]:
    """`MultiKueueManager` `{name}-multikueue` on the manager's cluster (through the provider
    `{name}-multikueue-k8s`, made from its kubeconfig) and the stack output `multikueue`."""
    import pulumi_kubernetes as k8s

    from ..args.multikueue import MultiKueueManagerArgs
    from ..kueue.multikueue_component import MultiKueueManager

    assert cfg.fleet is not None and cfg.fleet.multikueue is not None
    mk = cfg.fleet.multikueue
    workers = list(worker_kubeconfigs)
    # a stable identity: a new server or CA in the manager's kubeconfig (a GKE IP or CA rotation) updates the
    # provider instead of replacing it, which would recreate every object below, create first, on fixed names
    provider = k8s.Provider(
        f"{name}-multikueue-k8s",
        kubeconfig=manager_kubeconfig,
        cluster_identifier=f"{name}-{manager_region(cfg)}",
        enable_server_side_apply=True,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"])),
    )
    args = MultiKueueManagerArgs(
        workers=dict(worker_kubeconfigs),
        quotas=fleet_quotas(region_cfgs, workers),
        namespaces=list(mk.namespaces),
        queue_name=mk.queueName,
    )
    component = MultiKueueManager(
        f"{name}-multikueue", args, pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(provider=provider))
    )
    return {
        "manager": manager_region(cfg),
        "workers": workers,
        "queue": component.queue,
        "localQueues": component.local_queues,
    }
