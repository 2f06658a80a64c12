"""Capacity and cost summary of a stack, before deploying: per region and pool, what the pools can
reach, what stays running when idle, and an estimated hourly cost (dated catalog prices or yours)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .catalog import lookup
from .catalog.availability import GPU_PRICES, PRICE_SOURCE, PRICES, SPOT_FRACTION
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


def node_price(cfg: StackConfig, pool: GpuPool, machine: str) -> float | None:
    """Estimated USD/h of one node: on-demand list price (plus N1-attached GPUs), times the spot fraction."""
    cloud = cfg.platform_spec.cloud
    base = cfg.prices.onDemand.get(machine, PRICES.get(machine))
    if base is None:
        return None
    gpu = lookup(pool.gpu)
    if machine not in cfg.prices.onDemand and gpu is not None and gpu.gcp is not None:
        base += GPU_PRICES.get(gpu.gcp.accelerator, 0.0) * pool.gpusPerNode
    if pool.spot:
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
            rows.append(
                CapacityRow(
                    region=region,
                    cluster=rcfg.cluster.name,
                    pool=p.name,
                    gpu=p.gpu,
                    machine=machine,
                    capacity="spot" if p.spot else "on-demand",
                    sharing=sharing_label(p),
                    min_nodes=floor,
                    max_nodes=p.maxNodes,
                    gpus_at_max=p.maxNodes * p.gpusPerNode,
                    slots_at_max=p.maxNodes * p.gpusPerNode * slots_per_gpu(p),
                    idle_floor_gpus=floor * p.gpusPerNode,
                    usd_per_hour_at_max=None if price is None else round(price * p.maxNodes, 2),
                    usd_per_hour_at_floor=None if price is None else round(price * floor, 2) + 0.0,
                )
            )
    return rows


def summary(cfg: StackConfig) -> dict[str, Any]:
    """The `capacity` stack output: rows, totals, and where the prices come from."""
    rows = capacity(cfg)
    priced = [r for r in rows if r.usd_per_hour_at_max is not None]
    queues: dict[str, Any] = {}
    if cfg.queues is not None:
        from .kueue.stack import quota_rows

        queues = {"queues": quota_rows(cfg)}
    return {
        "rows": [asdict(r) for r in rows],
        "totals": {
            "gpus_at_max": sum(r.gpus_at_max for r in rows),
            "slots_at_max": sum(r.slots_at_max for r in rows),
            "idle_floor_gpus": sum(r.idle_floor_gpus for r in rows),
            "usd_per_hour_at_max": round(sum(r.usd_per_hour_at_max or 0 for r in priced), 2),
            "usd_per_hour_at_floor": round(sum(r.usd_per_hour_at_floor or 0.0 for r in priced), 2) + 0.0,
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
        ("sharing", "sharing"),
        ("min_nodes", "min"),
        ("max_nodes", "max"),
        ("gpus_at_max", "GPUs@max"),
        ("slots_at_max", "slots@max"),
        ("idle_floor_gpus", "idle GPUs"),
        ("usd_per_hour_at_max", "$/h@max"),
        ("usd_per_hour_at_floor", "$/h@floor"),
    ]
    cells = [[h for _, h in cols]] + [["-" if r[k] is None else str(r[k]) for k, _ in cols] for r in summary_["rows"]]
    t = summary_["totals"]
    cells.append(
        [
            "total",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            str(t["gpus_at_max"]),
            str(t["slots_at_max"]),
            str(t["idle_floor_gpus"]),
            str(t["usd_per_hour_at_max"]),
            str(t["usd_per_hour_at_floor"]),
        ]
    )
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    note = f"Prices: {summary_['prices']}."
    if summary_["unpriced"]:
        note += f" No price for {', '.join(summary_['unpriced'])}: set gpuplane:prices.onDemand."
    return "\n".join([*lines, note])
