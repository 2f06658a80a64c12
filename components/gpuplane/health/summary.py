"""The `gpuHealth` stack output: per pool, what detects a GPU fault, what repairs the node and whether that
waits for protected work; the post-deploy checks; and warnings the plan must show (repair that kills queued
jobs without a drain, pools where the platform cannot detect GPU faults). From `catalog.health`."""

from __future__ import annotations

from typing import Any

from ..catalog.health import (
    GKE_FAULT_LABEL,
    GKE_FAULTY_HOST_MACHINES,
    GKE_MAINTENANCE_LABEL,
    HEALTH,
    NMA_DCGM_ARCH,
    NMA_DCGM_INSTANCE_TYPES,
)
from ..catalog.images import arch_of
from ..config.capacity import DWS, capacity_order, pool_machines
from ..config.model import GpuPool, StackConfig
from .repair import agent_wanted
from .validation import checks


def _repair(cfg: StackConfig, pool: GpuPool) -> tuple[str | None, str]:
    """(what repairs the pool's nodes, or None; why none)."""
    path = HEALTH[cfg.platform]
    if cfg.platform == "gke-standard" and capacity_order(cfg.platform, pool)[0] in DWS:
        return None, (
            "flex-start and queued nodes are created with auto-repair off (GKE's DWS guides); a failed node is "
            "returned when its run ends"
        )
    if path.repair_setting is not None and not cfg.health.repair:
        return None, "gpuplane:health.repair is off"
    return path.repair, ""


def _detection(cfg: StackConfig, pool: GpuPool) -> tuple[str | None, str]:
    path = HEALTH[cfg.platform]
    if path.addon is None:
        return path.detection, ""
    if not agent_wanted(cfg):
        return None, "gpuplane:health.detection is off: nothing sets AcceleratedHardwareReady"
    machines = pool_machines("aws", pool)
    arm = [m for m in machines if arch_of("aws", m) != "x86_64"]
    if arm:
        return None, (
            f"{', '.join(arm)} are arm64: the agent turns NVIDIA monitoring off there and the add-on runs no "
            "dcgm-server (aws/eks-node-monitoring-agent monitors/nvidia/monitor.go, values.yaml dcgmAgent)"
        )
    unlisted = [m for m in machines if m not in NMA_DCGM_INSTANCE_TYPES]
    if unlisted:
        return (
            None,
            f"{', '.join(unlisted)} are not among the add-on's dcgm-server instance types ({NMA_DCGM_ARCH} list)",
        )
    return path.detection, ""


def pool_health(cfg: StackConfig, pool: GpuPool) -> dict[str, Any]:
    path = HEALTH[cfg.platform]
    detection, undetected = _detection(cfg, pool)
    repair, unrepaired = _repair(cfg, pool)
    row: dict[str, Any] = {
        "pool": pool.name,
        "detection": detection,
        "condition": (path.condition or None) if detection else None,
        "repair": repair,
        "honoursPodDisruptionBudgets": path.honours_pdb if repair else None,
        "protectedWork": path.protected_work if repair else None,
    }
    if undetected:
        row["notDetected"] = undetected
    if unrepaired:
        row["notRepaired"] = unrepaired
    if cfg.platform_spec.cloud == "gcp":
        faulty = [m for m in pool_machines("gcp", pool) if m in GKE_FAULTY_HOST_MACHINES]
        if faulty and pool.reservation is not None:
            row["reportFaultyHost"] = f"kubectl label node NODE {GKE_FAULT_LABEL}=XID (or PERFORMANCE, SDC)"
        row["maintenanceLabel"] = GKE_MAINTENANCE_LABEL
    return row


def warnings(cfg: StackConfig) -> list[str]:
    """What the plan must say about repair and protected work."""
    path = HEALTH[cfg.platform]
    out = []
    repairs = any(_repair(cfg, p)[0] for p in cfg.gpuPools)
    if repairs and path.honours_pdb is False:
        queued = " Jobs Kueue admitted there are killed without a drain and requeued." if cfg.queues else ""
        out.append(f"{cfg.platform}: node repair is {path.protected_work}.{queued}")
    if repairs and path.honours_pdb is None and cfg.queues:
        out.append(f"{cfg.platform}: {path.protected_work}; Kueue-admitted jobs on a repaired node may be stopped.")
    return out


def health_summary(cfg: StackConfig) -> dict[str, Any]:
    """The `gpuHealth` output."""
    return {
        "platform": cfg.platform,
        "pools": [pool_health(cfg, p) for p in cfg.gpuPools],
        "checks": [c.to_json() for c in checks(cfg)],
        "warnings": warnings(cfg),
    }


__all__ = ["health_summary", "pool_health", "warnings"]
