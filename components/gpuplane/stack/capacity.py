"""Capacity and cost summary of a stack, before deploying: per region and pool, what the pools can
reach, its capacity types in preference order and reserved GPUs, what stays running (or stays paid
for: reservations bill whether used or not) when idle, an estimated hourly cost (dated catalog
prices or yours), and an estimated cold start per new node (`stack.coldstart`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..catalog.availability import PRICE_SOURCE, SPOT_FRACTION
from ..catalog.pricing import DWS_OPTIONS
from ..config.capacity import capacity_order, reserved_nodes
from ..config.model import GpuPool, StackConfig
from ..config.prices import machine_of, node_price
from ..scheduling.sharing import slots_per_gpu
from .coldstart import cold_start_table, estimate_json, pool_estimate
from .fleet import region_configs


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
    cold_start: dict[str, Any]
    """Estimated seconds from a new node's launch to its first container running, and the inputs used
    (`stack.coldstart.estimate_json`; docs/cold-start.md)."""


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
            machine = machine_of(rcfg.platform_spec.cloud, p)
            price = node_price(rcfg, p, machine)
            floor = p.minNodes if fixed else 0
            reserved = reserved_nodes(p)
            # Reserved nodes bill at (about) the on-demand rate whether used or not: they are in the floor's
            # cost and priced as on-demand at the ceiling (Capacity Blocks are prepaid at their own rate).
            held = node_price(rcfg, p, machine, "reserved") if reserved else 0.0
            at_max = None if price is None or held is None else price * (p.maxNodes - reserved) + held * reserved
            at_floor = None if price is None or held is None else price * max(floor - reserved, 0) + held * reserved
            if reserved == p.maxNodes and held is not None:  # only reserved nodes: their rate alone
                at_max, at_floor = held * reserved, held * reserved
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
                    cold_start=estimate_json(pool_estimate(rcfg, p)),
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
        from ..kueue.stack import quota_rows

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
            + _dws_note(cfg)
        ),
        "unpriced": sorted({r.machine for r in rows if r.usd_per_hour_at_max is None}),
        **queues,
    }


def _dws_note(cfg: StackConfig) -> str:
    """How flex-start and queued A2/A3/A4 rows are priced (`catalog.pricing`), when the stack has any."""
    dws = DWS_OPTIONS
    if cfg.platform_spec.cloud != "gcp" or not any(dws & set(capacity_order(cfg.platform, p)) for p in cfg.gpuPools):
        return ""
    if cfg.prices.flexStartFraction is not None:
        return f"; flex-start and queued A2/A3/A4 rows at {cfg.prices.flexStartFraction:g} x on-demand (yours)"
    return (
        "; flex-start and queued A2/A3/A4 rows unpriced (DWS SKUs, not in the catalog: set "
        "gpuplane:prices.flexStartFraction or your rate in prices.onDemand)"
    )


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
    cold = cold_start_table(summary_["rows"]) if all("coldStart" in r for r in summary_["rows"]) else ""
    return "\n".join(
        [
            *lines,
            note,
            *(["", "Cold start per new node (estimate, output `capacity` rows' coldStart):", cold] if cold else []),
        ]
    )
