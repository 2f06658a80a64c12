"""Capacity a pool asks for that the cloud will not sell, or that one shared object can't express: checks
that read the consumption tables (`catalog.consumption`) and the queued pools together."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..catalog.consumption import aws_sold, capacity_block_offered, gcp_sold

if TYPE_CHECKING:
    from .model import GpuPool, StackConfig

Loc = tuple[str | int, ...]


ONLY_RESERVED = frozenset({"reserved"})
SOLD: dict[str, tuple[Callable[[str], frozenset[str]], tuple[str, ...], str]] = {
    "gcp": (gcp_sold, ("reserved", "spot", "flex-start", "queued", "on-demand"), "GCP"),
    "aws": (aws_sold, ("reserved", "spot", "on-demand"), "AWS"),
}
"""Cloud -> (what a machine is sold under, the options in the order messages list them, the cloud's name)."""


def _capacity_block(pool: GpuPool) -> bool:
    return pool.reservation is not None and pool.reservation.type == "capacity-block"


def unsold_capacity(cloud: str, at: Loc, pool: GpuPool, order: tuple[str, ...]) -> list[tuple[Loc, str]]:
    """Capacity types the pool's machines are not sold under (`catalog.consumption`): nodes that never come."""
    from .capacity import pool_machines

    out: list[tuple[Loc, str]] = []
    sold_under, options, name = SOLD[cloud]
    for machine in pool_machines(cloud, pool):
        sold = sold_under(machine)
        unsold = [c for c in order if c not in sold]
        if unsold:
            offered = ", ".join(c for c in options if c in sold)
            out.append(
                (
                    (*at, "capacity"),
                    f"{name} does not sell {machine} as {', '.join(unsold)} (only {offered}): set capacity to those",
                )
            )
        elif cloud == "aws" and sold == ONLY_RESERVED and capacity_block_offered(machine) and not _capacity_block(pool):
            out.append(
                (
                    (*at, "reservation", "type"),
                    f"AWS sells {machine} only as Capacity Blocks (UltraServers): set reservation.type: "
                    "capacity-block with the block's reservation ID",
                )
            )
    r = pool.reservation
    if cloud == "aws" and r is not None and r.type == "capacity-block" and "reserved" in order:
        no_blocks = [i for i in pool_machines(cloud, pool) if not capacity_block_offered(i)]
        if no_blocks:
            out.append(((*at, "reservation", "type"), f"EC2 sells no Capacity Blocks of {', '.join(no_blocks)}"))
    return out


def queued_run_duration_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """Queued pools share Kueue's one ProvisioningRequestConfig, whose `maxRunDurationSeconds` parameter
    GKE reads from every ProvisioningRequest (GKE docs, "Deploy GPUs for batch and AI workloads with
    ProvisioningRequest": `parameters.maxRunDurationSeconds`): they must agree on it."""
    from .capacity import is_queued

    queued = [(i, p) for i, p in enumerate(cfg.gpuPools) if is_queued(p)]
    durations = {p.maxRunDuration for _, p in queued}
    if len(durations) <= 1:
        return []
    first = queued[0][1]
    return [
        (
            ("gpuPools", i, "maxRunDuration"),
            f"queued pools share one ProvisioningRequestConfig: use {first.name}'s maxRunDuration "
            f"({first.maxRunDuration or 'unset'}) on every queued pool",
        )
        for i, p in queued[1:]
        if p.maxRunDuration != first.maxRunDuration
    ]


__all__ = ["queued_run_duration_problems", "unsold_capacity"]
