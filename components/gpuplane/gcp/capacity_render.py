"""GKE Standard node-pool settings for a pool's capacity type: reservations, Dynamic Workload Scheduler
flex-start and queued provisioning. Pure: `gpu_pool_args` passes its arguments through `pool_capacity`.

Field names are pulumi-gcp's `container.NodePool` inputs (node_config.reservation_affinity,
node_config.flex_start, node_config.max_run_duration, queued_provisioning); enum values are the GKE API's
(container v1 discovery document, `ReservationAffinity.consumeReservationType`), checked by the tests.
"""

from __future__ import annotations

from typing import Any

from ..config.capacity import DWS, capacity_order, duration_seconds
from ..config.model import GpuPool

RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"
"""The reservation-affinity key that targets reservations by name (GKE API `ReservationAffinity.key`)."""


def reservation_affinity(pool: GpuPool) -> dict[str, Any] | None:
    """`node_config.reservation_affinity`: named reservations (SPECIFIC_RESERVATION); any matching one,
    with on-demand fallback when the order allows it (ANY_RESERVATION) or without (ANY_RESERVATION_THEN_FAIL);
    none for DWS capacity, which never comes from reservations (GKE's flex-start and queued provisioning
    guides create those pools with `--reservation-affinity=none`). Unset for plain on-demand and spot."""
    order = capacity_order("gke-standard", pool)
    if order[0] in DWS:
        return {"consume_reservation_type": "NO_RESERVATION"}
    if order[0] != "reserved":
        return None
    names = pool.reservation.names if pool.reservation is not None else []
    if names:
        return {"consume_reservation_type": "SPECIFIC_RESERVATION", "key": RESERVATION_NAME_KEY, "values": list(names)}
    return {"consume_reservation_type": "ANY_RESERVATION" if "on-demand" in order else "ANY_RESERVATION_THEN_FAIL"}


def pool_capacity(pool: GpuPool, args: dict[str, Any]) -> dict[str, Any]:
    """`args` of a GPU node pool with the pool's capacity settings applied (a new dict)."""
    out = dict(args)  # shallow: the arguments hold Outputs (cluster, service account)
    order = capacity_order("gke-standard", pool)
    nc = out["node_config"] = dict(args["node_config"])
    affinity = reservation_affinity(pool)
    if affinity is not None:
        nc["reservation_affinity"] = affinity
    if order[0] in DWS:
        # Flex-start VMs (and flex-start with queued provisioning): node_config.flex_start; queued pools
        # also take nodes only through ProvisioningRequests (queued_provisioning.enabled). Both start
        # from zero and are created with auto-repair off (GKE guides dws-flex-start-training and
        # provisioningrequest: `--no-enable-autorepair`), which would otherwise recreate nodes the
        # DWS run time ended.
        nc["flex_start"] = True
        out["management"] = {**out.get("management", {}), "auto_repair": False}
        if order[0] == "queued":
            out["queued_provisioning"] = {"enabled": True}
    if pool.maxRunDuration is not None:
        nc["max_run_duration"] = f"{duration_seconds(pool.maxRunDuration)}s"
    zone = pool.reservation.zone if pool.reservation is not None and "reserved" in order else None
    if zone is not None:
        out["node_locations"] = [zone]  # a reservation is zonal: nodes elsewhere could never use it
    return out
