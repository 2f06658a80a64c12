"""The routine changes: edits platform teams make every week, as functions of a stack's config."""

from __future__ import annotations

import copy
import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...catalog import PLATFORMS
from ...config import ConfigError, parse_config

Config = dict[str, Any]


def raw(config: Config) -> dict[str, Any]:
    return {k.removeprefix("gpuplane:"): v for k, v in config.items() if k.startswith("gpuplane:")}


def _pools(c: Config) -> list[dict[str, Any]]:
    return list(c.get("gpuplane:gpuPools") or [])


def _with_pools(c: Config, pools: list[dict[str, Any]]) -> Config:
    return {**c, "gpuplane:gpuPools": pools}


def _first_pool(c: Config, edit: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Config | None:
    pools = copy.deepcopy(_pools(c))
    for i, p in enumerate(pools):
        changed = edit(p)
        if changed is not None:
            pools[i] = changed
            return _with_pools(c, pools)
    return None


def _raise_min(p: dict[str, Any]) -> dict[str, Any] | None:
    if "maxNodes" not in p:
        return None
    low = int(p.get("minNodes", 0)) + 1
    return {**p, "minNodes": low, "maxNodes": max(int(p["maxNodes"]), low)}


def _lower_min(p: dict[str, Any]) -> dict[str, Any] | None:
    return {**p, "minNodes": int(p["minNodes"]) - 1} if int(p.get("minNodes", 0)) > 0 else None


def _raise_max(p: dict[str, Any]) -> dict[str, Any] | None:
    return {**p, "maxNodes": int(p["maxNodes"]) + 2} if "maxNodes" in p else None


def _lower_max(p: dict[str, Any]) -> dict[str, Any] | None:
    if "maxNodes" not in p or int(p["maxNodes"]) - 1 < max(int(p.get("minNodes", 0)), 1):
        return None
    return {**p, "maxNodes": int(p["maxNodes"]) - 1}


def _fleet_ceiling(c: Config, nodes: int) -> Config | None:
    """On a fleet, a pool's ceiling is its share of `fleet.totals` (its `maxNodes` is overridden per region):
    the first pool with a total, moved by `nodes` nodes' worth of GPUs."""
    totals = (c.get("gpuplane:fleet") or {}).get("totals") or {}
    for p in _pools(c):
        if p["name"] in totals:
            total = int(totals[p["name"]]) + nodes * int(p.get("gpusPerNode", 1))
            if total <= 0:
                return None
            out = copy.deepcopy(c)
            out["gpuplane:fleet"]["totals"][p["name"]] = total
            return out
    return None


def _ceiling(nodes: int, edit: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Callable[[Config], Config | None]:
    """Move a pool's ceiling: fleet totals on a fleet, else the first pool's `maxNodes`."""
    return lambda c: _fleet_ceiling(c, nodes) if c.get("gpuplane:fleet") else _first_pool(c, edit)


def without_pool(c: Config, gone: str) -> Config:
    """`c` without pool `gone`, its Kueue quotas and its fleet totals (references to a missing pool are refused)."""
    out = copy.deepcopy(c)
    out["gpuplane:gpuPools"] = [p for p in out["gpuplane:gpuPools"] if p["name"] != gone]
    for team in (out.get("gpuplane:queues") or {}).get("teams", []):
        team.get("quota", {}).pop(gone, None)
    (out.get("gpuplane:fleet") or {}).get("totals", {}).pop(gone, None)
    return out


def _add_pool(c: Config) -> Config | None:
    pools = _pools(c)
    if not pools:
        return None
    # A reservation belongs to one pool: the copy takes the rest of its capacity order.
    extra = {k: v for k, v in copy.deepcopy(pools[0]).items() if k != "reservation"}
    if "capacity" in extra:
        extra["capacity"] = [c for c in extra["capacity"] if c != "reserved"] or ["spot"]
    extra.update(name="added", minNodes=0)
    out = _with_pools(c, [*copy.deepcopy(pools), extra])
    totals = (out.get("gpuplane:fleet") or {}).get("totals")
    if totals is not None and pools[0]["name"] in totals:
        out = copy.deepcopy(out)
        out["gpuplane:fleet"]["totals"]["added"] = 1
    return out


def _remove_pool(c: Config) -> Config | None:
    pools = _pools(c)
    return without_pool(c, pools[0]["name"]) if len(pools) > 1 else None


def _reorder_pools(c: Config) -> Config | None:
    pools = _pools(c)
    return _with_pools(c, list(reversed(copy.deepcopy(pools)))) if len(pools) > 1 else None


def _bump_kubernetes(c: Config) -> Config | None:
    cluster = dict(c.get("gpuplane:cluster") or {})
    version = cluster.get("kubernetesVersion")
    m = re.match(r"^1\.(\d+)$", str(version)) if version else None
    if m is None:
        return None
    return {**c, "gpuplane:cluster": {**cluster, "kubernetesVersion": f"1.{int(m.group(1)) + 1}"}}


def _bump_node_image(c: Config) -> Config | None:
    karpenter = c.get("gpuplane:karpenter")
    if c.get("gpuplane:platform") != "eks-karpenter":
        return None
    version = str((karpenter or {}).get("amiVersion", "latest"))
    m = re.match(r"^v(\d{8})$", version)
    if m is None:
        return None  # `latest` follows every release on its own: nothing to bump (pin one to control it)
    day = datetime.datetime.strptime(m.group(1), "%Y%m%d").date() + datetime.timedelta(days=7)
    bumped = f"v{day:%Y%m%d}"
    return {**c, "gpuplane:karpenter": {**(karpenter or {}), "amiVersion": bumped}}


def _switch_monitoring(c: Config) -> Config | None:
    platform = PLATFORMS[str(c["gpuplane:platform"])]
    monitoring = dict(c.get("gpuplane:monitoring") or {})
    now = monitoring.get("integration", platform.integrations[0])
    others = [i for i in platform.integrations if i != now]
    return {**c, "gpuplane:monitoring": {**monitoring, "integration": others[0]}} if others else None


def _valid(c: Config) -> bool:
    try:
        parse_config(raw(c))
    except ConfigError:
        return False
    return True


def _add_region(c: Config) -> Config | None:
    """The fleet plus the first region (alphabetically) of its cloud that the config accepts for its pools."""
    from ...catalog.regions import cloud_regions

    fleet = c.get("gpuplane:fleet")
    if not fleet:
        return None
    used = {r["region"] for r in fleet["regions"]}
    for region in sorted(cloud_regions(PLATFORMS[str(c["gpuplane:platform"])].cloud) - used):
        extra = {k: v for k, v in copy.deepcopy(fleet["regions"][-1]).items() if k != "zones"}
        extra["region"] = region
        # The region comes with GPUs of its own: each pool's total grows by the region's quota of its GPU.
        gpu_of = {p["name"]: p.get("gpu") for p in _pools(c)}
        totals = {k: v + int(extra.get("quota", {}).get(gpu_of.get(k), 0)) for k, v in fleet.get("totals", {}).items()}
        edited = {**c, "gpuplane:fleet": {**fleet, "regions": [*fleet["regions"], extra], "totals": totals}}
        if _valid(edited):
            return edited
    return None


def _other_instance(p: dict[str, Any]) -> dict[str, Any] | None:
    """An EKS pool with one more instance type carrying the same GPUs per node (cluster-autoscaler and
    Karpenter pick among them)."""
    from ...catalog import lookup

    gpu = lookup(str(p.get("gpu", "")))
    if gpu is None or gpu.aws is None or "machineType" in p:
        return None
    count = int(p.get("gpusPerNode", 1))
    current = list(p.get("instanceTypes") or [gpu.aws.default_instance(count)])
    options = [i for i, n in gpu.aws.instances.items() if n == count and i not in current]
    return {**p, "instanceTypes": [*current, options[0]]} if options else None


STORE = {"name": "datasets", "readers": [{"namespace": "training", "serviceAccount": "trainer"}]}
"""The store `add-store` adds: gpuplane creates its bucket, claims and grants."""


def _add_store(c: Config) -> Config | None:
    """One more store (a created bucket read by one service account), where the stack may have stores."""
    if c.get("gpuplane:fleet"):
        return None
    storage = copy.deepcopy(c.get("gpuplane:storage") or {"stores": []})
    storage["stores"].append(copy.deepcopy(STORE))
    edited = {**c, "gpuplane:storage": storage}
    return edited if _valid(edited) else None


def _remove_store(c: Config) -> Config | None:
    """The last store dropped, with the Deployments' mounts of it (the whole section with its last store)."""
    storage = c.get("gpuplane:storage")
    if not storage:
        return None
    gone = storage["stores"][-1]["name"]
    kept = [s for s in storage["stores"] if s["name"] != gone]
    edited = {k: v for k, v in c.items() if k != "gpuplane:storage"}
    if kept:
        edited["gpuplane:storage"] = {**storage, "stores": kept}
    autoscaling = copy.deepcopy(c.get("gpuplane:autoscaling"))
    for w in (autoscaling or {}).get("workloads", []):
        d = w.get("deployment") or {}
        if gone in (d.get("stores") or {}):
            del d["stores"][gone]
            if not d["stores"]:
                d.pop("stores")
                d.pop("serviceAccount", None)
    if autoscaling is not None:
        edited["gpuplane:autoscaling"] = autoscaling
    return edited if _valid(edited) else None


@dataclass(frozen=True)
class RoutineChange:
    id: str
    what: str
    apply: Callable[[Config], Config | None]
    """The stack's config after the change, or None where the change does not apply to the stack."""
    start: Callable[[Config], Config | None] | None = None
    """Where the change starts from, when not the stack as shipped (lowering `minNodes` starts raised)."""


CATALOGUE: tuple[RoutineChange, ...] = (
    RoutineChange("raise-min-nodes", "raise a pool's minNodes by one", lambda c: _first_pool(c, _raise_min)),
    RoutineChange(
        "lower-min-nodes",
        "lower a pool's minNodes by one (from the stack with it raised)",
        lambda c: _first_pool(c, _lower_min),
        start=lambda c: _first_pool(c, _raise_min),
    ),
    RoutineChange(
        "raise-max-nodes", "raise a pool's maxNodes (a fleet: its total) by two nodes", _ceiling(2, _raise_max)
    ),
    RoutineChange(
        "lower-max-nodes", "lower a pool's maxNodes (a fleet: its total) by one node", _ceiling(-1, _lower_max)
    ),
    RoutineChange("add-pool", "add a pool (a copy of the first, without its reservation)", _add_pool),
    RoutineChange("remove-pool", "remove the first pool", _remove_pool),
    RoutineChange("reorder-pools", "reverse the order of the pools", _reorder_pools),
    RoutineChange("bump-kubernetes", "raise kubernetesVersion by one minor", _bump_kubernetes),
    RoutineChange("bump-node-image", "move Karpenter's AMI to a newer release", _bump_node_image),
    RoutineChange("switch-monitoring", "switch monitoring.integration", _switch_monitoring),
    RoutineChange("add-region", "add a fleet region", _add_region),
    RoutineChange("add-store", "add a model store (a bucket gpuplane creates, one reader)", _add_store),
    RoutineChange("remove-store", "remove the last model store (and the Deployments' mounts of it)", _remove_store),
    RoutineChange(
        "change-instance-types",
        "add an instance type to an EKS pool",
        lambda c: _first_pool(c, _other_instance) if PLATFORMS[str(c["gpuplane:platform"])].cloud == "aws" else None,
    ),
)
