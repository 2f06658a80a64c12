"""The decisions: per workload the cheapest shape that holds its peaks (`rules`), per pool whether its floor
is above what was ever used; each priced from the same price table as the capacity summary
(`config.prices`: the catalog's dated list prices, or `gpuplane:prices`). Pure functions over plain values.

Dollars are per month (`monitoring.cost.HOURS_PER_MONTH`). A workload's saving is the GPU-hours it held in
the hours the server holds data for (the observed span, which retention may make shorter than the window),
scaled to a month, times what each of those hours would cost less in the new shape. A pool's saving is the
floor nodes (minNodes, or reserved nodes, which bill whether used or not) above the busy peak plus the margin,
around the clock. `maxNodes` is a ceiling: it costs nothing unless reached, so it is compared, never priced.

A new shape keeps the capacity type the workload runs on (spot stays spot); spot is added only for workloads
named interruption-tolerant. Where your own rate (`gpuplane:prices.onDemand`) prices the pool's machine, it is
the rate for every capacity type (`catalog.pricing.node_rate`), so a move to spot saves nothing the price
table can show: the reason says so instead of staying silent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..catalog import lookup
from ..config.capacity import capacity_order, reserved_nodes
from ..config.model import GpuPool, StackConfig
from ..config.prices import machine_of, node_price
from ..monitoring.cost import HOURS_PER_MONTH
from ..scheduling.sharing import slots_per_gpu
from ..stack.fleet import offered
from .observe import PoolUse, Workload
from .rules import Need, Shape, compute_percent, fitting_shapes, gpu_memory_gib, verdict

KINDS = ("mig", "gpu", "share", "whole")
"""Preference between shapes that cost the same: isolation first (MIG), then a whole GPU, then a share."""


@dataclass(frozen=True)
class Choice:
    """A shape on a capacity type, and what one unit of it costs."""

    shape: Shape
    spot: bool = False
    usd_per_hour: float | None = None
    """Per unit (one GPU, instance or share)."""
    relative: float | None = 1.0
    """Its cost over the current shape's (None: not comparable, a price is unknown)."""

    @property
    def label(self) -> str:
        return self.shape.label + (" on spot" if self.spot else "")


@dataclass(frozen=True)
class Advice:
    """What one workload should run on, and why."""

    workload: Workload
    action: str
    """`keep`, `nothing-smaller`, `mig`, `share`, `gpu` (another GPU type), `spot`, or `unknown`."""
    current: Choice
    target: Choice
    usd_per_month_saved: float | None
    reason: str
    confidence: str


def spot_first(cfg: StackConfig, pool: GpuPool) -> bool:
    order = [c for c in capacity_order(cfg.platform, pool) if c != "reserved"]
    return bool(order) and order[0] == "spot"


def other_pool(cfg: StackConfig, pool: GpuPool, gpu: str, spot: bool) -> GpuPool:
    """A pool like `pool` of whole `gpu`s on the catalog's machine (the same GPUs per node when offered)."""
    counts = lookup(gpu).counts_on(cfg.platform_spec.cloud)  # type: ignore[union-attr]
    n = pool.gpusPerNode if pool.gpusPerNode in counts else counts[0]
    update = {"gpu": gpu, "gpusPerNode": n, "machineType": None, "instanceTypes": None, "sharing": None}
    return pool.model_copy(update={**update, "reservation": None, "capacity": None, "spot": spot, "network": None})


def gpu_hour(cfg: StackConfig, pool: GpuPool, gpu: str | None = None, spot: bool = False) -> float | None:
    """USD per GPU-hour of `pool` (its capacity types' marginal price, as the capacity summary), on spot, or
    of whole `gpu`s in a pool like it; None when the price table has none."""
    if gpu is not None and gpu != pool.gpu:
        other = other_pool(cfg, pool, gpu, spot or spot_first(cfg, pool))
        price = node_price(cfg, other, option="spot" if other.spot else "on-demand")
        return None if price is None else price / other.gpusPerNode
    price = node_price(cfg, pool, option="spot" if spot else None)
    return None if price is None else price / pool.gpusPerNode


def in_region(cfg: StackConfig, pool: GpuPool, gpu: str) -> bool:
    """Whether the stack's region offers `gpu` (the fleet checks' availability tables)."""
    region = cfg.gcp.region if cfg.gcp is not None else cfg.aws.region if cfg.aws is not None else ""
    return offered(cfg.platform_spec.cloud, other_pool(cfg, pool, gpu, False), region)


def current_shape(pool: GpuPool | None, w: Workload) -> Shape:
    gpu = w.gpu or "?"
    if w.mig:
        g = lookup(gpu)
        count = g.mig_profiles.get(w.mig, 1) if g is not None else 1
        return Shape("mig", gpu, w.mig, 1 / count)
    if pool is not None and pool.sharing is not None and pool.sharing.strategy != "mig":
        return Shape("share", gpu, f"{pool.sharing.strategy} x{pool.sharing.replicas}", 1 / slots_per_gpu(pool))
    return Shape("whole", gpu)


def price_choice(cfg: StackConfig, pool: GpuPool | None, current: Choice, shape: Shape, spot: bool) -> Choice:
    """`shape` (on spot) priced per unit, with its cost relative to the `current` choice."""
    now = current.shape
    same = shape.gpu == now.gpu and spot == current.spot
    if pool is None:
        return Choice(shape, spot, None, shape.fraction / now.fraction if same else None)
    gpu = gpu_hour(cfg, pool, shape.gpu if shape.gpu != pool.gpu else None, spot)
    unit = None if gpu is None else gpu * shape.fraction
    if same:  # same GPU and capacity: the fractions say it, priced or not
        return Choice(shape, spot, unit, shape.fraction / now.fraction)
    if unit is None or not current.usd_per_hour:
        return Choice(shape, spot, unit, None)
    return Choice(shape, spot, unit, unit / current.usd_per_hour)


def your_rate(cfg: StackConfig, pool: GpuPool) -> str | None:
    """The pool's machine when your `gpuplane:prices.onDemand` prices it (that rate is charged for every
    capacity type, spot included: `catalog.pricing.node_rate`), else None."""
    machine = machine_of(cfg.platform_spec.cloud, pool)
    return machine if machine in cfg.prices.onDemand else None


UNKNOWN_UTIL = "utilisation unknown (dcgm-exporter reports no DCGM_FI_DEV_GPU_UTIL for MIG instances)"


def need_of(w: Workload, now: Shape, margin: float) -> tuple[Need, str]:
    """What a new shape must hold, and the words for it. Unknown utilisation is never taken as 0: the workload
    is assumed to use all the compute of what it holds now (no margin on an assumption), so memory decides."""
    assert w.memory_peak_gib is not None
    gpu = lookup(str(w.gpu))
    memory = f"peak {w.memory_peak_gib:.1f} GiB"
    if w.util_peak is None:
        need = Need(w.memory_peak_gib * (1 + margin), compute_percent(now))
        said = (
            f"{memory} +{margin:.0%}: needs {need.memory_gib:.1f} GiB; {UNKNOWN_UTIL}: taken as all the compute of "
            f"its {now.label} ({need.util_percent:.0f}% of the GPU), so only memory can shrink it"
        )
    else:
        need = Need.of(w.memory_peak_gib, w.util_peak, margin)
        said = (
            f"{memory} and {w.util_peak:.0f}% of the GPU, +{margin:.0%}: needs {need.memory_gib:.1f} GiB and "
            f"{need.util_percent:.0f}%"
        )
    whole = w.memory_total_gib or (gpu_memory_gib(gpu) if gpu is not None else 0.0)
    if gpu is not None and (need.memory_gib > whole or need.util_percent > 100):
        said += f" (more than a whole {w.gpu} with the margin)"
    return need, said


def advise(
    cfg: StackConfig, pool: GpuPool | None, w: Workload, margin: float, interruptible: bool, observed_hours: float
) -> Advice:
    """The cheapest shape that holds `w`'s peaks with `margin` (spot as well when `interruptible`); savings
    scaled from the `observed_hours` the server holds data for to a month."""
    now = current_shape(pool, w)
    now_gpu = gpu_hour(cfg, pool) if pool is not None else None
    current = Choice(
        now, pool is not None and spot_first(cfg, pool), None if now_gpu is None else now_gpu * now.fraction
    )
    conf = verdict(w.observed_hours, w.gaps)
    if w.gpu is None or lookup(w.gpu) is None or w.memory_peak_gib is None:
        why = "no GPU memory series for it" if w.memory_peak_gib is None else "its GPU model is not in the catalog"
        return Advice(w, "unknown", current, current, None, why, conf)
    need, fit = need_of(w, now, margin)
    cloud = cfg.platform_spec.cloud
    fitting = fitting_shapes(w.gpu, need, cloud, cfg.platform_spec.sharing, w.gpus_per_pod, w.memory_total_gib)
    shapes = [now, *(f for f in fitting if f.kind != "gpu" or pool is None or in_region(cfg, pool, f.gpu))]
    to_spot = interruptible and not current.spot and pool is not None
    spots = [current.spot, True] if to_spot else [current.spot]
    choices = [price_choice(cfg, pool, current, s, spot) for s in shapes for spot in spots]
    ranked = sorted(
        (c for c in choices if c.relative is not None and c.relative < 0.999),
        key=lambda c: (c.relative, KINDS.index(c.shape.kind), c.spot),
    )
    mine = your_rate(cfg, pool) if to_spot and pool is not None else None
    spot_note = (
        f"; spot saving on {mine} unknown: your gpuplane:prices.onDemand rate for it is charged for every capacity "
        "type, spot included (prices.spotFraction scales only the catalog's list prices)"
        if mine
        else ""
    )
    if not ranked:
        if w.gpus_per_pod > 1:
            why = f"{w.gpus_per_pod} GPUs per pod: MIG instances and shares have no NVLink or P2P between them"
            return Advice(w, "keep", current, current, 0.0, why + spot_note, conf)
        action = "nothing-smaller" if now.kind == "whole" else "keep"
        return Advice(w, action, current, current, 0.0, f"{fit}: nothing cheaper holds that{spot_note}", conf)
    best = ranked[0]
    action = "spot" if best.shape == now else best.shape.kind
    assert best.relative is not None
    monthly_units = w.gpu_hours * HOURS_PER_MONTH / observed_hours
    saved = (
        None if current.usd_per_hour is None else round(monthly_units * current.usd_per_hour * (1 - best.relative), 2)
    )
    why = f"{fit}; {best.label} holds it" + (" (interruption-tolerant)" if best.spot and not current.spot else "")
    why += spot_note
    return Advice(w, action, current, best, saved, why, conf)


@dataclass(frozen=True)
class PoolAdvice:
    """One pool's peaks against its floor and ceiling."""

    cluster: str
    region: str
    pool: GpuPool
    use: PoolUse | None
    floor: int
    """minNodes where the platform keeps a floor (fixed pools), else 0."""
    reserved: int
    """Nodes of its reservation it uses (billed whether used or not)."""
    recommended_floor: int | None
    usd_per_month_saved: float | None
    advice: tuple[str, ...]


def floor_cost(cfg: StackConfig, pool: GpuPool, floor: int, reserved: int) -> float | None:
    """USD/h of a floor of `floor` nodes of which `reserved` are reserved (as the capacity summary prices it)."""
    price = node_price(cfg, pool)
    held = node_price(cfg, pool, option="reserved") if reserved else 0.0
    if held is None or (price is None and floor > reserved):
        return None
    return held * reserved + (price or 0.0) * max(floor - reserved, 0)


def _ceiling(pool: GpuPool, use: PoolUse) -> str:
    peak, busy, ceiling = use.peak_nodes or 0, use.peak_busy_nodes or 0, pool.maxNodes
    if busy >= ceiling:
        return (
            f"the busy peak reached maxNodes {ceiling}: pods may have waited for nodes; a higher ceiling costs "
            "nothing until nodes are added"
        )
    if peak >= ceiling:
        return f"maxNodes {ceiling} was reached by idle nodes only (busy peak {busy}): the floor held them, not demand"
    seen = "no node in the window" if not peak else f"peak {peak} node(s), {busy} busy"
    return f"maxNodes {ceiling} is a ceiling above the peak ({seen}): it costs nothing unless reached"


def floor_needed(busy: int, margin: float) -> int:
    """Nodes a floor keeps for a busy peak of `busy` nodes with `margin` headroom (0 stays 0)."""
    return math.ceil(round(busy * (1 + margin), 9))


def advise_pool(cfg: StackConfig, region: str, pool: GpuPool, use: PoolUse | None, margin: float) -> PoolAdvice:
    """A pool's floor against its busy peak plus `margin`, and its ceiling against its peak."""
    floor = pool.minNodes if cfg.platform_spec.fixed_pools else 0
    reserved = reserved_nodes(pool)
    cluster = cfg.cluster.name
    if use is None:
        why = "no kube_node_labels with the node labels that select its nodes: they cannot be counted"
        return PoolAdvice(cluster, region, pool, None, floor, reserved, None, None, (why,))
    busy = use.peak_busy_nodes or 0
    keep = floor_needed(busy, margin)
    advice = []
    if max(floor, reserved) <= keep:
        target = None
        saved: float | None = 0.0
    else:
        target = keep
        now, then = floor_cost(cfg, pool, floor, reserved), floor_cost(cfg, pool, min(floor, keep), min(reserved, keep))
        saved = None if now is None or then is None else round((now - then) * HOURS_PER_MONTH, 2)
        peak = f"at most {busy} had a GPU in use (+{margin:.0%}: {keep})"
        if reserved > keep:
            advice.append(
                f"its reservation holds {reserved} node(s) but {peak}: shrink it to {keep} (a reservation bills "
                "whether used or not)"
            )
        if floor > keep:
            advice.append(f"minNodes {floor} is above what was used: {peak}; lower it to {keep} (floor nodes run paid)")
    advice.append(_ceiling(pool, use))
    return PoolAdvice(cluster, region, pool, use, floor, reserved, target, saved, tuple(advice))


__all__ = ["Advice", "Choice", "PoolAdvice", "advise", "advise_pool", "floor_cost", "gpu_hour"]
