"""Capacity and cost summary of a stack, before deploying: per region and pool, what the pools can
reach, its capacity types in preference order and reserved GPUs, what stays running (or stays paid
for: reservations bill whether used or not) when idle, and an estimated hourly cost (dated catalog
prices or yours)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .catalog import lookup
from .catalog.availability import GPU_PRICES, PRICE_SOURCE, PRICES, SPOT_FRACTION
from .config.capacity import capacity_order, reserved_nodes
from .config.model import GpuPool, StackConfig
from .fleet import region_configs
from .nvidia.sharing import slots_per_gpu


@dataclass(frozen=True)
class CapacityRow:
    region: str
    cluster: str
    pool: str
    gpu: str
    machine: str
    capacity: str
    """Capacity types in preference order, `>`-separated (e.g. `reserved>spot`)."""
    reserved_gpus: int
    """GPUs of the pool's reservation it can use (`reservation.nodes` x GPUs per node, at most its ceiling)."""
    sharing: str
    min_nodes: int
    max_nodes: int
    gpus_at_max: int
    slots_at_max: int
    idle_floor_gpus: int
    usd_per_hour_at_max: float | None
    usd_per_hour_at_floor: float | None


def machine_of(cfg: StackConfig, pool: GpuPool) -> str:
    """The instance or machine type a pool's nodes use (for classes: the catalog's smallest fit)."""
    if cfg.platform_spec.cloud == "gcp":
        from .gcp.render import machine_type

        return machine_type(pool)
    from .aws.render import instance_types

    return instance_types(pool)[0]


def node_price(cfg: StackConfig, pool: GpuPool, machine: str, spot: bool | None = None) -> float | None:
    """Estimated USD/h of one node: on-demand list price (plus N1-attached GPUs), times the spot fraction
    for spot nodes (`spot`; unset: the pool's first capacity type beyond its reservation is spot)."""
    cloud = cfg.platform_spec.cloud
    base = cfg.prices.onDemand.get(machine, PRICES.get(machine))
    if base is None:
        return None
    gpu = lookup(pool.gpu)
    if machine not in cfg.prices.onDemand and gpu is not None and gpu.gcp is not None:
        base += GPU_PRICES.get(gpu.gcp.accelerator, 0.0) * pool.gpusPerNode
    if spot is None:
        spot = [c for c in capacity_order(cfg.platform, pool) if c != "reserved"][:1] == ["spot"]
    if spot:
        base *= cfg.prices.spotFraction or SPOT_FRACTION[cloud]
    return round(base, 3)


def sharing_label(pool: GpuPool) -> str:
    s = pool.sharing
    if s is None:
        return "whole"
    if s.strategy == "mig":
        return f"mig {s.migProfile} x{slots_per_gpu(pool)}"
    return f"{s.strategy} x{s.replicas}"


def capacity(cfg: StackConfig) -> list[CapacityRow]:
    """One row per region and pool (fleets: the region's share)."""
    rows = []
    for region, rcfg in region_configs(cfg):
        fixed = rcfg.platform_spec.fixed_pools
        for p in rcfg.gpuPools:
            machine = machine_of(rcfg, p)
            price = node_price(rcfg, p, machine)
            floor = p.minNodes if fixed else 0
            reserved = reserved_nodes(p)
            # Reserved nodes bill at (about) the on-demand rate whether used or not: they are in the floor's
            # cost and priced as on-demand at the ceiling (Capacity Blocks are prepaid at their own rate).
            held = None if price is None else node_price(rcfg, p, machine, spot=False) or 0.0
            at_max = None if price is None or held is None else price * (p.maxNodes - reserved) + held * reserved
            at_floor = None if price is None or held is None else price * max(floor - reserved, 0) + held * reserved
            rows.append(
                CapacityRow(
                    region=region,
                    cluster=rcfg.cluster.name,
                    pool=p.name,
                    gpu=p.gpu,
                    machine=machine,
                    capacity=">".join(capacity_order(rcfg.platform, p)),
                    reserved_gpus=reserved * p.gpusPerNode,
                    sharing=sharing_label(p),
                    min_nodes=floor,
                    max_nodes=p.maxNodes,
                    gpus_at_max=p.maxNodes * p.gpusPerNode,
                    slots_at_max=p.maxNodes * p.gpusPerNode * slots_per_gpu(p),
                    idle_floor_gpus=floor * p.gpusPerNode,
                    usd_per_hour_at_max=None if at_max is None else round(at_max, 2),
                    usd_per_hour_at_floor=None if at_floor is None else round(at_floor, 2) + 0.0,
                )
            )
    return rows


def camel(name: str) -> str:
    """`usd_per_hour_at_max` -> `usdPerHourAtMax`: the key style of the plan JSON and the config."""
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def summary(cfg: StackConfig) -> dict[str, Any]:
    """The `capacity` stack output (camelCase keys): rows, totals, and where the prices come from."""
    rows = capacity(cfg)
    priced = [r for r in rows if r.usd_per_hour_at_max is not None]
    queues: dict[str, Any] = {}
    if cfg.queues is not None:
        from .kueue.stack import quota_rows

        queues = {"queues": quota_rows(cfg)}
    return {
        "rows": [{camel(k): v for k, v in asdict(r).items()} for r in rows],
        "totals": {
            "gpusAtMax": sum(r.gpus_at_max for r in rows),
            "slotsAtMax": sum(r.slots_at_max for r in rows),
            "reservedGpus": sum(r.reserved_gpus for r in rows),
            "idleFloorGpus": sum(r.idle_floor_gpus for r in rows),
            "usdPerHourAtMax": round(sum(r.usd_per_hour_at_max or 0 for r in priced), 2),
            "usdPerHourAtFloor": round(sum(r.usd_per_hour_at_floor or 0.0 for r in priced), 2) + 0.0,
        },
        "prices": (
            ("your prices (gpuplane:prices)" if cfg.prices.onDemand else f"estimate: {PRICE_SOURCE}")
            + f"; spot rows at {cfg.prices.spotFraction or SPOT_FRACTION[cfg.platform_spec.cloud]:g} x on-demand"
        ),
        "unpriced": sorted({r.machine for r in rows if r.usd_per_hour_at_max is None}),
        **queues,
    }


def table(summary_: dict[str, Any]) -> str:
    """The summary as an aligned text table."""
    cols = [
        ("region", "region"),
        ("pool", "pool"),
        ("gpu", "gpu"),
        ("machine", "machine"),
        ("capacity", "capacity"),
        ("reservedGpus", "reserved"),
        ("sharing", "sharing"),
        ("minNodes", "min"),
        ("maxNodes", "max"),
        ("gpusAtMax", "GPUs@max"),
        ("slotsAtMax", "slots@max"),
        ("idleFloorGpus", "idle GPUs"),
        ("usdPerHourAtMax", "$/h@max"),
        ("usdPerHourAtFloor", "$/h@floor"),
    ]
    cells = [[h for _, h in cols]] + [["-" if r[k] is None else str(r[k]) for k, _ in cols] for r in summary_["rows"]]
    t = summary_["totals"]
    cells.append(["total", *("" if k not in t else str(t[k]) for k, _ in cols[1:])])
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    note = f"Prices: {summary_['prices']}."
    if summary_["unpriced"]:
        note += f" No price for {', '.join(summary_['unpriced'])}: set gpuplane:prices.onDemand."
    return "\n".join([*lines, note])
