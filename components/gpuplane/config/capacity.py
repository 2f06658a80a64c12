"""Capacity types of GPU pools: `gpuPools[].capacity` (a preference order), `reservation` and
`maxRunDuration`, and the rules that say which orders each platform can carry out.

- `reserved`: AWS ODCRs and Capacity Blocks (Karpenter `karpenter.sh/capacity-type: reserved` with the
  EC2NodeClass's `capacityReservationSelectorTerms`; managed node groups a launch template that targets
  the reservation, `CAPACITY_BLOCK` for blocks); GCP reservations (node pool `reservation_affinity`).
- `spot`, `on-demand`: Spot Instances / Spot VMs, on-demand capacity.
- `flex-start` (GKE): Dynamic Workload Scheduler flex-start VMs (node pool `flex_start`).
- `queued` (GKE): DWS queued provisioning (`queued_provisioning`, nodes only through ProvisioningRequests).

A pool without `capacity` keeps what `spot` always meant. Every platform's limits are data
(`RULES`); `capacity_problems` turns a config that asks for more into one error per bad key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from ..catalog import lookup
from ..catalog.availability import GCP_ZONES
from .base import Model as _Model
from .consumption import queued_run_duration_problems, unsold_capacity
from .network import is_local_zone

if TYPE_CHECKING:
    from .model import GpuPool, StackConfig

CapacityType = Literal["reserved", "spot", "on-demand", "flex-start", "queued"]
CAPACITY_TYPES: tuple[str, ...] = ("reserved", "spot", "on-demand", "flex-start", "queued")

DWS = ("flex-start", "queued")
"""GKE Dynamic Workload Scheduler capacity: nodes start at zero and run at most seven days
(cloud.google.com/kubernetes-engine/docs/concepts/dws)."""
MAX_RUN_SECONDS = 7 * 24 * 3600
"""Flex-start VMs run for at most seven days (cloud.google.com/compute/docs/instances/about-flex-start-vms)."""
_DURATION = re.compile(r"^([0-9]+)(s|m|h|d)$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RESERVATION_NAME = re.compile(r"(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/reservations/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?")

RESERVATION_KEYS = {"eks-karpenter": "reservation.ids or .tags", "eks-managed": "reservation.ids"}
"""How each EKS platform names its reservation: Karpenter selects Capacity Reservations by id or tags
(EC2NodeClass capacityReservationSelectorTerms); a managed node group's launch template targets one by id
(EC2 CapacityReservationTarget), so `reservation.tags` is refused there."""


def duration_seconds(text: str) -> int:
    m = _DURATION.match(text)
    assert m is not None, text
    return int(m[1]) * _UNIT[m[2]]


class Reservation(_Model):
    """Reserved capacity a pool consumes (with `reserved` in `capacity`)."""

    ids: list[str] = Field(default_factory=list, max_length=30)
    """AWS: capacity reservation IDs (`cr-...`): on-demand capacity reservations or Capacity Blocks."""
    tags: dict[str, str] = Field(default_factory=dict, max_length=20)
    """AWS (Karpenter): select reservations by tags instead of IDs (`'*'` matches any value)."""
    type: Literal["default", "capacity-block"] = "default"
    """AWS: `capacity-block` for Capacity Blocks for ML, `default` for on-demand capacity reservations
    (Karpenter's `karpenter.k8s.aws/capacity-reservation-type` values)."""
    names: list[str] = Field(default_factory=list)
    """GCP: reservation names (`name`, or `projects/P/reservations/name` for a shared reservation); empty
    consumes any matching reservation."""
    zone: str | None = None
    """The reservation's zone (GCP, e.g. `us-central1-a`) or Availability Zone (AWS, e.g. `us-west-2a`);
    the pool's nodes are pinned to it. Required for AWS Capacity Blocks on managed node groups."""
    machineType: str | None = None
    """The reservation's machine (GCP) or instance (AWS) type, checked against the pool's."""
    nodes: int | None = Field(default=None, ge=1)
    """Reserved nodes (VMs / instances); the capacity summary shows them as reserved GPUs."""

    @field_validator("ids")
    @classmethod
    def _ids(cls, v: list[str]) -> list[str]:
        bad = [i for i in v if not re.fullmatch(r"cr-[0-9a-z]+", i)]
        if bad:
            raise ValueError(f"not capacity reservation IDs (cr-...): {bad}")
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        if any(not k or not val for k, val in v.items()):
            raise ValueError("empty tag keys or values select nothing")
        return v

    @field_validator("names")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        bad = [n for n in v if not _RESERVATION_NAME.fullmatch(n)]
        if bad:
            raise ValueError(f"not reservation names: {bad}")
        return v


@dataclass(frozen=True)
class CapacityRules:
    """What one platform can do with a capacity order."""

    types: tuple[str, ...]
    """Capacity types it can provision."""
    how: str
    """Which cloud feature carries the order (for messages and docs)."""
    single: bool = False
    """One capacity type per pool (a node pool or node group has one), except the `pairs`."""
    pairs: tuple[tuple[str, ...], ...] = ()
    """Two-entry orders a single pool still carries (GKE's ANY_RESERVATION falls back to on-demand)."""
    fixed_order: tuple[str, ...] = ()
    """The one order the provisioner follows whatever it is told (Karpenter: reserved, spot, on-demand)."""
    reservation_keys: tuple[str, ...] = ()
    """`reservation` keys that apply here."""
    named_fallback: bool = False
    """Named reservations may fall back to other capacity (a ComputeClass priority per type; a GKE node
    pool's SPECIFIC_RESERVATION affinity has no fallback)."""


COMPUTE_CLASS_TYPES = ("reserved", "spot", "on-demand", "flex-start")
COMPUTE_CLASS_PLATFORMS = ("gke-nap", "gke-autopilot")
"""Platforms whose GPU classes with reserved or flex-start capacity (or a fallback order) get a ComputeClass."""

AWS_KEYS = ("ids", "tags", "type", "zone", "machineType", "nodes")
GCP_KEYS = ("names", "zone", "machineType", "nodes")

RULES: Mapping[str, CapacityRules] = MappingProxyType(
    {
        # Karpenter launches reserved first, then spot, then on-demand, whatever the order
        # (karpenter.sh docs, concepts/nodepools "capacity type"; reserved capacity: aws/karpenter-provider-aws
        # designs/odcr.md, "Karpenter will prioritize reserved capacity").
        "eks-karpenter": CapacityRules(
            types=("reserved", "spot", "on-demand"),
            how="Karpenter NodePool capacity types",
            fixed_order=("reserved", "spot", "on-demand"),
            reservation_keys=AWS_KEYS,
        ),
        "eks-automode": CapacityRules(
            types=("spot", "on-demand"), how="EKS Auto Mode NodePool capacity types", fixed_order=("spot", "on-demand")
        ),
        "eks-managed": CapacityRules(
            types=("reserved", "spot", "on-demand"),
            how="a managed node group's capacity type",
            single=True,
            reservation_keys=tuple(k for k in AWS_KEYS if k != "tags"),
        ),
        "gke-standard": CapacityRules(
            types=CAPACITY_TYPES,
            how="a GKE node pool's provisioning model",
            single=True,
            pairs=(("reserved", "on-demand"),),
            reservation_keys=GCP_KEYS,
        ),
        # Auto-provisioned GKE carries an order with a ComputeClass whose `priorities` GKE tries in turn
        # (cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass; scheduling/compute_class.py). It
        # has no queued provisioning (that takes ProvisioningRequests on a node pool).
        "gke-nap": CapacityRules(
            types=COMPUTE_CLASS_TYPES,
            how="a ComputeClass's priorities",
            reservation_keys=GCP_KEYS,
            named_fallback=True,
        ),
        "gke-autopilot": CapacityRules(
            types=COMPUTE_CLASS_TYPES,
            how="a ComputeClass's priorities",
            reservation_keys=GCP_KEYS,
            named_fallback=True,
        ),
    }
)
"""Platform -> its capacity rules."""

SPOT_FALLS_BACK = ("eks-karpenter", "eks-automode")
"""Platforms where `spot: true` has always meant spot with on-demand fallback (Karpenter allows both)."""


def capacity_order(platform: str, pool: GpuPool) -> tuple[str, ...]:
    """The pool's capacity types in preference order: `capacity`, or what `spot` means on the platform."""
    if pool.capacity:
        return tuple(pool.capacity)
    if pool.spot:
        return ("spot", "on-demand") if platform in SPOT_FALLS_BACK else ("spot",)
    return ("on-demand",)


def uses_compute_class(platform: str, pool: GpuPool) -> bool:
    """A GPU class that needs its own ComputeClass: on NAP or Autopilot, a `capacity` order with reserved or
    flex-start capacity or more than one type (plain spot or on-demand classes keep the platform's defaults)."""
    if platform not in COMPUTE_CLASS_PLATFORMS or not pool.capacity:
        return False
    return len(pool.capacity) > 1 or pool.capacity[0] in ("reserved", "flex-start")


def is_queued(pool: GpuPool) -> bool:
    """A GKE queued-provisioning (DWS) pool: its nodes come through a ProvisioningRequest."""
    return "queued" in (pool.capacity or ())


def eks_capacity_type(pool: GpuPool) -> str:
    """A managed node group's EKS CapacityType (botocore EKS model `CapacityTypes`): Capacity Blocks are
    `CAPACITY_BLOCK`; a targeted on-demand reservation runs `ON_DEMAND` instances inside it."""
    order = capacity_order("eks-managed", pool)
    if order[0] == "reserved":
        r = pool.reservation
        return "CAPACITY_BLOCK" if r is not None and r.type == "capacity-block" else "ON_DEMAND"
    return "SPOT" if order[0] == "spot" else "ON_DEMAND"


def reserved_nodes(pool: GpuPool) -> int:
    """Nodes of the pool's reservation it can use (at most its ceiling); 0 without a stated count."""
    r = pool.reservation
    if r is None or r.nodes is None or "reserved" not in (pool.capacity or ()):
        return 0
    return min(r.nodes, pool.maxNodes)


def pool_machines(cloud: str, pool: GpuPool) -> list[str]:
    """Machine (GCP) or instance (AWS) types the pool's nodes may be."""
    gpu = lookup(pool.gpu)
    if gpu is None:
        return []
    if cloud == "gcp":
        found = pool.machineType or (gpu.gcp.default_machine(pool.gpusPerNode) if gpu.gcp else None)
        return [found] if found else []
    if gpu.aws is None:
        return []
    return list(pool.instanceTypes or [i for i, n in gpu.aws.instances.items() if n == pool.gpusPerNode])


def gcp_pool_zones(pool: GpuPool, region: str, zones: Sequence[str]) -> list[str] | None:
    """Zones a GKE pool's nodes use: the pool's own `zones`, else the cluster's zones that offer its GPU
    (all offering zones when none are configured), or None when the catalog has no data for the region
    (the cluster's node locations then apply). `gcp.render.pool_zones` renders exactly this."""
    if pool.zones:
        return list(pool.zones)
    gpu = lookup(pool.gpu)
    offered = GCP_ZONES.get(gpu.gcp.accelerator, {}).get(region) if gpu and gpu.gcp else None
    if offered is None:
        return None
    return [z for z in (zones or offered) if z in offered]


Loc = tuple[int | str, ...]

ANY_RESERVATION = (
    "a ComputeClass consumes any reservation only with on-demand right after it: "
    "name the reservations (reservation.names) or write [reserved, on-demand, ...]"
)


def _any_reservation_falls_back(order: tuple[str, ...]) -> bool:
    """`reservations.affinity: AnyBestEffort` falls back to on-demand VMs in the same priority; only named
    (`Specific`) reservations stand alone (ComputeClass reference, `priorities[].reservations`)."""
    i = order.index("reserved")
    return order[i + 1 : i + 2] == ("on-demand",)


def _order_problem(rules: CapacityRules, platform: str, order: tuple[str, ...]) -> str | None:
    if len(set(order)) != len(order):
        return "capacity types must not repeat"
    bad = [c for c in order if c not in rules.types]
    if bad:
        return f"{platform} has no {', '.join(bad)} capacity (it offers: {', '.join(rules.types)})"
    if rules.single and len(order) > 1 and order not in rules.pairs:
        return (
            f"{rules.how} is one type, so a pool takes one capacity type here (use one pool per type, "
            "or an auto-provisioning platform for a fallback order)"
        )
    if rules.fixed_order and list(order) != [c for c in rules.fixed_order if c in order]:
        wanted = [c for c in rules.fixed_order if c in order]
        return f"{rules.how} always prefer {' > '.join(rules.fixed_order)}; write {wanted}"
    return None


def _pool_problems(cfg: StackConfig, i: int, pool: GpuPool) -> list[tuple[Loc, str]]:
    platform = cfg.platform
    rules = RULES[platform]
    cloud = cfg.platform_spec.cloud
    order = capacity_order(platform, pool)
    here: list[tuple[Loc, str]] = []
    at = ("gpuPools", i)
    if pool.capacity is not None:
        problem = _order_problem(rules, platform, order)
        if problem:
            return [((*at, "capacity"), problem)]
    here += unsold_capacity(cloud, at, pool, order)
    dws = [c for c in order if c in DWS]
    if dws and pool.minNodes > 0:
        here.append(((*at, "minNodes"), f"{dws[0]} capacity starts every node on demand: minNodes must be 0"))
    if pool.maxRunDuration is not None and not dws:
        here.append(((*at, "maxRunDuration"), "applies to flex-start and queued capacity only"))
    r = pool.reservation
    if r is None:
        if "reserved" in order and platform in RESERVATION_KEYS:
            keys = RESERVATION_KEYS[platform]
            here.append(((*at, "capacity"), f"reserved capacity needs a reservation ({keys})"))
        if "reserved" in order and platform in COMPUTE_CLASS_PLATFORMS and not _any_reservation_falls_back(order):
            here.append(((*at, "capacity"), ANY_RESERVATION))
        return here
    if "reserved" not in order:
        if r.type == "capacity-block":
            what = "a spot-only class" if order == ("spot",) or set(order) == {"spot"} else f"capacity {list(order)}"
            here.append(
                ((*at, "reservation"), f"Capacity Blocks are reserved capacity, not {what}: add reserved to capacity")
            )
        else:
            here.append(((*at, "reservation"), f"is unused: capacity {list(order)} has no reserved"))
        return here
    foreign = [k for k in sorted(r.model_fields_set) if k not in rules.reservation_keys]
    for key in foreign:
        here.append(((*at, "reservation", key), f"does not apply on {platform}"))
    if foreign:
        return here
    here += _reservation_problems(cfg, at, pool, r, cloud, order)
    return here


def _reservation_problems(
    cfg: StackConfig, at: Loc, pool: GpuPool, r: Reservation, cloud: str, order: tuple[str, ...]
) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    platform = cfg.platform
    if platform == "eks-karpenter" and not (r.ids or r.tags):
        out.append(((*at, "reservation"), "Karpenter selects reservations by ids or tags: set one of them"))
    if platform == "eks-karpenter" and r.ids and r.tags:
        # EC2NodeClass CEL: "'id' is mutually exclusive, cannot be set along with other fields".
        out.append(((*at, "reservation", "tags"), "select by ids or by tags, not both"))
    if platform == "eks-managed" and len(r.ids) != 1:
        out.append(((*at, "reservation", "ids"), "a launch template targets exactly one capacity reservation"))
    if platform == "eks-managed" and r.type == "capacity-block" and r.zone is None:
        out.append(((*at, "reservation", "zone"), "a Capacity Block lives in one Availability Zone: name it"))
    if platform == "eks-managed" and r.type != "capacity-block" and r.zone is None and not pool.zones:
        # A targeted ODCR serves only its own AZ: a group over every subnet launches elsewhere on demand.
        out.append(
            (
                (*at, "reservation", "zone"),
                "a capacity reservation lives in one Availability Zone: name it, so the group's subnets are there",
            )
        )
    if platform == "eks-managed" and r.type == "capacity-block" and pool.minNodes > 0:
        # EKS user guide capacity-blocks-mng: update such groups only at desired size 0; the block's
        # instances exist only from its start, and EKS scales the group to 0 before it ends.
        out.append(
            (
                (*at, "minNodes"),
                "a Capacity Block group must be able to sit at 0 nodes (AWS updates it only at desired size 0, and "
                "scales it to 0 before the block ends): minNodes must be 0",
            )
        )
    if cloud == "gcp" and r.names and len(order) > 1 and not RULES[platform].named_fallback:
        out.append(
            ((*at, "reservation", "names"), "GKE has no fallback from specific reservations: drop on-demand or names")
        )
    if platform in COMPUTE_CLASS_PLATFORMS and not r.names and not _any_reservation_falls_back(order):
        out.append(((*at, "reservation", "names"), ANY_RESERVATION))
    if r.zone is not None:
        out += _zone_problems(cfg, at, pool, r.zone)
    if r.machineType is not None:
        machines = pool_machines(cloud, pool)
        if machines and r.machineType not in machines:
            out.append(
                (
                    (*at, "reservation", "machineType"),
                    f"the reservation holds {r.machineType}, but the pool runs {', '.join(machines)}",
                )
            )
    return out


def _zone_problems(cfg: StackConfig, at: Loc, pool: GpuPool, zone: str) -> list[tuple[Loc, str]]:
    loc = (*at, "reservation", "zone")
    if cfg.gcp is not None:
        zones = gcp_pool_zones(pool, cfg.gcp.region, cfg.gcp.zones) or list(cfg.gcp.zones)
        if zones and zone not in zones:
            return [(loc, f"the reservation is in {zone}, but the pool's nodes run in {', '.join(zones)}")]
        if not zones and not zone.startswith(cfg.gcp.region + "-"):
            return [(loc, f"{zone} is not a zone of region {cfg.gcp.region}")]
    if cfg.aws is not None:
        region = re.escape(cfg.aws.region)
        local = is_local_zone(zone) and zone.startswith(cfg.aws.region + "-")
        if not local and not re.fullmatch(rf"{region}[a-z]", zone):
            return [(loc, f"{zone} is not an Availability Zone of region {cfg.aws.region}")]
        if local and cfg.platform != "eks-managed":
            return [
                (
                    loc,
                    f"{zone} is a Local Zone: gpuplane places only eks-managed node groups there (through "
                    "aws.nodeSubnetIds); Karpenter and Auto Mode launch into the cluster's subnets",
                )
            ]
        if local and not cfg.aws.nodeSubnetIds:
            return [
                (
                    loc,
                    f"{zone} is a Local Zone: the EKS control plane and the system pool can't use subnets there, and "
                    "the VPC gpuplane creates has none; use your VPC (aws.vpcId, aws.privateSubnetIds) and name its "
                    "private subnet in that zone in aws.nodeSubnetIds",
                )
            ]
    if pool.zones and zone not in pool.zones:  # needs no region: also when a component's is unknown
        return [(loc, f"the reservation is in {zone}, but the pool's nodes run in {', '.join(pool.zones)}")]
    return []


def capacity_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """Every pool's impossible capacity settings on this platform: one (key, reason) per bad key."""
    if cfg.platform not in RULES:
        return []
    found = [p for i, pool in enumerate(cfg.gpuPools) for p in _pool_problems(cfg, i, pool)]
    return found + queued_run_duration_problems(cfg)
