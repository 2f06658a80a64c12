"""What one node costs under each consumption option: a table of price bases, each citing how the cloud
bills it. List prices are `availability.PRICES` (dated estimates); `gpuplane:prices` replaces them.

A node is never priced at a rate it is not sold at. A machine GCP sells only through reservations,
flex-start or spot (A3 Ultra, A3 Mega, A4, A4X: `consumption.GCP_SOLD`) has no on-demand list price. So
its reserved and spot nodes have no price unless you give your rate, and neither does a flex-start node
whose DWS rate the catalog does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .availability import GPU_PRICES, PRICES, SPOT_FRACTION
from .consumption import gcp_sold

DWS_DISCOUNTED = ("a2-", "a3-", "a4-")
"""GCP machine-type prefixes whose flex-start (and so queued) nodes bill at discounted DWS SKUs: Compute
Engine "About flex-start VMs" ("For A4, A3, A2, and H4D machine types, you obtain vCPUs, memory, and any
attached GPUs at a discounted price"). Other machines (G2) bill flex-start at their usual rates."""


@dataclass(frozen=True)
class Rates:
    """What the pricing rules may use: your prices (`gpuplane:prices`) over the catalog's."""

    mine: Mapping[str, float]
    """Your USD/h per machine (`prices.onDemand`): the rate you pay, whatever the option."""
    spot_fraction: float | None = None
    flex_start_fraction: float | None = None
    """Your DWS flex-start rate as a fraction of the list price (`prices.flexStartFraction`)."""

    def listed(self, cloud: str, machine: str, attached_gpu: str | None = None, gpus: int = 0) -> float | None:
        """The machine's on-demand list price (with N1-attached GPUs), or None when the cloud does not sell it
        on demand or the catalog has no price."""
        if cloud == "gcp" and "on-demand" not in gcp_sold(machine):
            return None
        base = PRICES.get(machine)
        if base is None:
            return None
        attached = GPU_PRICES.get(attached_gpu or "", 0.0) * gpus if cloud == "gcp" else 0.0  # N1 only
        return base + attached


@dataclass(frozen=True)
class Basis:
    """How one consumption option bills a node."""

    option: str
    price: Callable[[Rates, str, str, float | None, bool], float | None]
    """(rates, cloud, machine, list price, capacity block) -> USD/h, or None when unknown."""
    source: str


def _spot(r: Rates, cloud: str, machine: str, listed: float | None, block: bool) -> float | None:
    return None if listed is None else listed * (r.spot_fraction or SPOT_FRACTION[cloud])


def _dws(r: Rates, cloud: str, machine: str, listed: float | None, block: bool) -> float | None:
    if listed is None or not machine.startswith(DWS_DISCOUNTED):
        return listed
    return None if r.flex_start_fraction is None else listed * r.flex_start_fraction


def _reserved(r: Rates, cloud: str, machine: str, listed: float | None, block: bool) -> float | None:
    return None if block else listed


BASES: Mapping[str, Basis] = MappingProxyType(
    {
        "on-demand": Basis(
            "on-demand", lambda r, c, m, listed, b: listed, "the cloud's on-demand list price (catalog estimate)"
        ),
        "spot": Basis(
            "spot",
            _spot,
            "a typical fraction of the on-demand list price (GCP Spot VMs and EC2 Spot prices move; estimate)",
        ),
        "flex-start": Basis(
            "flex-start",
            _dws,
            'discounted DWS SKUs for A2, A3 and A4 (Compute Engine "About flex-start VMs"), whose rate the catalog '
            "does not know: priced only with prices.flexStartFraction; other machines at their list price",
        ),
        "queued": Basis(
            "queued",
            _dws,
            "flex-start with queued provisioning (GKE ProvisioningRequest docs): billed as flex-start",
        ),
        "reserved": Basis(
            "reserved",
            _reserved,
            "on-demand capacity reservations bill at the on-demand rate whether used or not (GCP reservations "
            'overview; EC2 "On-Demand Capacity Reservations" pricing). Capacity Blocks are prepaid at their own '
            'rate (EC2 "Capacity Blocks for ML" pricing): priced only with your rate',
        ),
    }
)
"""Consumption option -> how it bills a node."""

DWS_OPTIONS = frozenset(o for o, b in BASES.items() if b.price is _dws)
"""The options billed at DWS rates (flex-start, queued)."""


def node_rate(
    rates: Rates,
    cloud: str,
    machine: str,
    option: str,
    capacity_block: bool = False,
    attached_gpu: str | None = None,
    gpus: int = 0,
) -> float | None:
    """USD/h of one node of `machine` under `option`: your rate when you gave one, else the option's basis
    applied to the list price (None when that is not known)."""
    if machine in rates.mine:
        return round(rates.mine[machine], 3)
    listed = rates.listed(cloud, machine, attached_gpu, gpus)
    price = BASES[option].price(rates, cloud, machine, listed, capacity_block)
    return None if price is None else round(price, 3)


__all__ = ["BASES", "DWS_DISCOUNTED", "DWS_OPTIONS", "Basis", "Rates", "node_rate"]
