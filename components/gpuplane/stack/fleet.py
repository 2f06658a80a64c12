"""Multi-region GPU fleets within quota: one cluster per region, each with its own explicit provider.

`spread` divides a total of GPUs over regions in the user's order, never beyond a region's quota or
where the GPU is not offered, in whole nodes. `region_configs` turns a fleet stack into one ordinary
stack config per region (pool ceilings = that region's share), so every platform, NAP limit and
Karpenter limit respects the region's quota by construction.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence

import pulumi

from ..catalog import lookup
from ..catalog.availability import AWS_REGIONS, GCP_ZONES, aws_regions
from ..catalog.regions import cloud_regions
from ..config.base import suggest
from ..config.model import GpuPool, StackConfig
from ..monitoring.scrape import fleet_scrape_yaml
from ..monitoring.wiring import fleet_rules
from .multikueue import multikueue_problems, region_queues, worker_endpoint

Loc = tuple[int | str, ...]
UNLIMITED = 10**9


def offered(cloud: str, pool: GpuPool, region: str) -> bool:
    """Whether the pool's GPU (on GCP its accelerator, on AWS one of its instance families) is offered in `region`.
    In a region the catalog does not list (let through by `allowUnlistedRegions`), or for a GCP accelerator whose
    zones it could not verify (A4X, A4X Max: `catalog.availability`), it has no say: True."""
    gpu = lookup(pool.gpu)
    if gpu is None:
        return False
    if region not in cloud_regions(cloud):
        return True
    if cloud == "gcp":
        if gpu.gcp is not None and gpu.gcp.accelerator not in GCP_ZONES:
            return True
        return gpu.gcp is not None and region in GCP_ZONES.get(gpu.gcp.accelerator, {})
    if gpu.aws is None:
        return False
    families = {i.split(".")[0] for i in (pool.instanceTypes or gpu.aws.instances)}
    return any(region in aws_regions(f) for f in families)


def spread(total: int, per_node: int, regions: Sequence[str], room: Mapping[str, int]) -> dict[str, int]:
    """Assign `total` GPUs to regions in order, each at most its `room`, in multiples of `per_node`.

    Deterministic: earlier regions fill first. Raises ValueError when the total cannot fit.
    """
    if total % per_node:
        raise ValueError(f"{total} GPUs is not a whole number of {per_node}-GPU nodes")
    out: dict[str, int] = {}
    remaining = total
    for region in regions:
        take = min(remaining, room.get(region, 0) // per_node * per_node)
        if take > 0:
            out[region] = take
            remaining -= take
    if remaining:
        fits = sum(room.get(r, 0) // per_node * per_node for r in regions)
        raise ValueError(f"{total} GPUs do not fit: at most {fits} within the regions' quota and availability")
    return out


def unknown_totals(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """`fleet.totals` entries that name no GPU pool."""
    assert cfg.fleet is not None
    names = [p.name for p in cfg.gpuPools]
    return [
        (("fleet", "totals", name), f"no GPU pool named {name!r}{suggest(name, names)}")
        for name in cfg.fleet.totals
        if name not in names
    ]


def allocate(cfg: StackConfig) -> tuple[dict[str, dict[str, int]], list[tuple[Loc, str]]]:
    """Pool -> region -> GPUs, and the problems found. Fixed-size pools take their room first."""
    assert cfg.fleet is not None
    cloud = cfg.platform_spec.cloud
    regions = [r.region for r in cfg.fleet.regions]
    left = {r.region: dict(r.quota) for r in cfg.fleet.regions}
    alloc: dict[str, dict[str, int]] = {}
    problems: list[tuple[Loc, str]] = []
    problems += unknown_totals(cfg)
    for i, pool in enumerate(cfg.gpuPools):
        if pool.name in cfg.fleet.totals:
            continue
        gpus = pool.maxNodes * pool.gpusPerNode
        alloc[pool.name] = {}
        for region in regions:
            if not offered(cloud, pool, region):
                problems.append((("gpuPools", i, "gpu"), f"{pool.gpu} is not offered in {region} (catalog)"))
                continue
            quota = left[region].get(pool.gpu, UNLIMITED)
            if gpus > quota:
                problems.append(
                    (("fleet", "regions"), f"{pool.name} needs {gpus} {pool.gpu} in {region}, quota left {quota}")
                )
            left[region][pool.gpu] = quota - gpus
            alloc[pool.name][region] = gpus
    for pool in cfg.gpuPools:
        total = cfg.fleet.totals.get(pool.name)
        if total is None:
            continue
        room = {r: left[r].get(pool.gpu, UNLIMITED) if offered(cloud, pool, r) else 0 for r in regions}
        try:
            share = spread(total, pool.gpusPerNode, regions, room)
        except ValueError as exc:
            problems.append((("fleet", "totals", pool.name), str(exc)))
            continue
        for region, n in share.items():
            left[region][pool.gpu] = room[region] - n
        alloc[pool.name] = share
    return alloc, problems


def fleet_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """Every reason the fleet cannot be laid out (empty when it can)."""
    alloc, problems = allocate(cfg)
    fits = not problems
    assert cfg.fleet is not None
    for i, r in enumerate(cfg.fleet.regions):
        if len(f"{cfg.cluster.name}-{r.region}") > 40:
            problems.append((("fleet", "regions", i, "region"), "cluster name + region exceeds 40 characters"))
        if fits and not any(share.get(r.region) for share in alloc.values()):
            problems.append(
                (
                    ("fleet", "regions", i, "region"),
                    f"{r.region} gets no GPUs (earlier regions hold every total); remove it",
                )
            )
    return problems + multikueue_problems(cfg)


def where_offered(cloud: str, pool: GpuPool) -> list[str]:
    """Regions the catalog lists for the pool's GPU (its accelerator on GCP, its instance families on AWS)."""
    gpu = lookup(pool.gpu)
    if cloud == "gcp":
        return sorted(GCP_ZONES.get(gpu.gcp.accelerator, {})) if gpu and gpu.gcp else []
    families = {i.split(".")[0] for i in (pool.instanceTypes or (gpu.aws.instances if gpu and gpu.aws else ()))}
    return sorted({r for f in families for r in AWS_REGIONS.get(f, ())})


def region_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """A single stack's pools whose GPU the catalog knows is not offered in the stack's region."""
    cloud = cfg.platform_spec.cloud
    region = cfg.gcp.region if cfg.gcp else cfg.aws.region if cfg.aws else None
    if region is None:
        return []
    return [
        (
            ("gpuPools", i, "gpu"),
            f"{pool.gpu} is not offered in {region} (catalog: {', '.join(where_offered(cloud, pool))})",
        )
        for i, pool in enumerate(cfg.gpuPools)
        if not offered(cloud, pool, region)
    ]


def zone_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """GKE pools whose GPU the catalog lists in the region, but in none of the configured zones."""
    if cfg.gcp is None or not cfg.gcp.zones or not cfg.platform_spec.fixed_pools:
        return []
    problems: list[tuple[Loc, str]] = []
    for i, pool in enumerate(cfg.gpuPools):
        gpu = lookup(pool.gpu)
        if gpu is None or gpu.gcp is None:
            continue
        zones = GCP_ZONES.get(gpu.gcp.accelerator, {}).get(cfg.gcp.region)
        if zones is not None and not set(zones) & set(cfg.gcp.zones):
            problems.append(
                (("gpuPools", i, "gpu"), f"{pool.gpu} is not offered in zones {cfg.gcp.zones} (catalog: {list(zones)})")
            )
    return problems


def region_configs(cfg: StackConfig) -> list[tuple[str, StackConfig]]:
    """One ordinary stack config per fleet region, with the region's share as each pool's ceiling (a region's own
    stack: that region's only)."""
    if cfg.fleet is None:
        region = cfg.region
        return [(region, cfg)]
    alloc, problems = allocate(cfg)
    assert not problems, problems
    out = []
    for r in cfg.fleet.regions:
        pools = []
        for pool in cfg.gpuPools:
            gpus = alloc.get(pool.name, {}).get(r.region, 0)
            if gpus:
                nodes = gpus // pool.gpusPerNode
                pools.append(pool.model_copy(update={"maxNodes": nodes, "minNodes": min(pool.minNodes, nodes)}))
        update: dict[str, object] = {
            "cluster": cfg.cluster.model_copy(update={"name": f"{cfg.cluster.name}-{r.region}"}),
            "gpuPools": pools,
            "fleet": None,
            "fleetStack": None,
        }
        if cfg.gcp is not None:
            zones = r.zones or sorted(
                {z for p in pools for z in GCP_ZONES.get(lookup(p.gpu).gcp.accelerator, {}).get(r.region, ())}  # type: ignore[union-attr]
            )
            update["gcp"] = cfg.gcp.model_copy(update={"region": r.region, "zones": zones})
        if cfg.aws is not None:
            update["aws"] = cfg.aws.model_copy(update={"region": r.region})
        if cfg.fleet.multikueue is not None:  # Kueue on every region, the workers reachable by the manager
            update["queues"] = region_queues(cfg, r.region, pools)
            update.update(worker_endpoint(cfg, r.region, update))
        out.append((r.region, cfg.model_copy(update=update)))
    # a region's own stack (`fleetStack`: docs/fleets.md) is that region alone; the central one sees them all
    return [(r, c) for r, c in out if cfg.fleetStack in (None, "central", r)]


class GpuFleet(pulumi.ComponentResource):
    """The stack's platform once per region (each cluster with its own provider), under one parent."""

    outputs: dict[str, dict[str, object]]

    def __init__(
        self,
        name: str,
        cfg: StackConfig,
        builder: Callable[..., dict[str, object]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpuplane:index:GpuFleet", name, None, opts)
        self.outputs = {
            region: builder(region_cfg, opts=pulumi.ResourceOptions(parent=self))
            for region, region_cfg in region_configs(cfg)
        }
        self.register_outputs({})


def build(cfg: StackConfig, builder_path: str, opts: pulumi.ResourceOptions | None = None) -> dict[str, object]:
    """Build a fleet: the platform's builder once per region; outputs keyed by region."""
    module, func = builder_path.split(":")
    builder = getattr(importlib.import_module(module), func)
    fleet = GpuFleet(cfg.cluster.name, cfg, builder, opts=opts)
    per_cluster = ("kubeconfig", "scrapeConfig", "prometheusRules", "platform")
    per_region = {r: {k: v for k, v in o.items() if k not in per_cluster} for r, o in fleet.outputs.items()}
    first = next(iter(fleet.outputs.values()))
    return {
        "platform": cfg.platform,
        "regions": list(fleet.outputs),
        "clusters": per_region,
        "kubeconfigs": pulumi.Output.secret({r: o["kubeconfig"] for r, o in fleet.outputs.items()}),
        # One uniquely named job per cluster, each labelling its series with cluster and region.
        "scrapeConfig": fleet_scrape_yaml(
            {f"{cfg.cluster.name}-{r}": str(o["scrapeConfig"]) for r, o in fleet.outputs.items()}
        ),
        "prometheusRules": fleet_rules(str(first["prometheusRules"]), [c for _, c in region_configs(cfg)]),
    }
