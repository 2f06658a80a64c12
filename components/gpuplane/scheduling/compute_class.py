"""GKE ComputeClasses for GPU classes whose capacity order NAP or Autopilot can only carry out through one:
reserved and flex-start capacity, and fallback orders. Pure: the platforms register what `compute_classes`
returns (gcp/platform.py, gcp/autopilot.py), and the placement helper selects the class by its label.

Fields are those of Google's ComputeClass reference (cloud.google.com/v1;
cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass): each priority names the machine type
and `gpu: {type, count}`, and one capacity type: `reservations` (`affinity: Specific` with the reservation
names, or `AnyBestEffort`, which falls back to on-demand VMs itself), `flexStart: {enabled: true}` (with
`maxRunDurationSeconds`), `spot: true`, or neither (on-demand). GKE tries the priorities in order. The same
shape is what Google's accelerated-platforms ships per GPU (GoogleCloudPlatform/accelerated-platforms, its custom
compute class templates `gpu-*.yaml`).
"""

from __future__ import annotations

from typing import Any

from ..catalog import lookup
from ..config.capacity import capacity_order, duration_seconds, pool_machines, uses_compute_class
from ..config.model import GpuPool, StackConfig

LABEL = "cloud.google.com/compute-class"
"""The node label (and, on nodes GKE creates for a class, the NoSchedule taint key) that selects a class
(GKE docs, "About custom ComputeClasses": request a class with a nodeSelector on this label; GKE taints
auto-created nodes `cloud.google.com/compute-class=NAME:NoSchedule` and tolerates it for pods that select it)."""

AUTO_CREATES = ("gke-nap",)
"""Standard clusters (NAP) create node pools for a class only with `nodePoolAutoCreation.enabled`;
Autopilot always does (reference: "nodePoolAutoCreation ... Standard clusters")."""


def class_name(pool: GpuPool) -> str:
    """The pool's ComputeClass: cluster-scoped, and no class name may start with `gke` or `autopilot`
    (GKE docs, node-attributes-compute-classes, "Limitations")."""
    return f"gpuplane-{pool.name}"


def _reservations(pool: GpuPool) -> dict[str, Any]:
    names = pool.reservation.names if pool.reservation is not None else []
    if not names:
        return {"affinity": "AnyBestEffort"}
    specific = []
    for n in names:
        parts = n.split("/")  # projects/P/reservations/NAME: a shared reservation of project P
        specific.append({"name": parts[3], "project": parts[1]} if len(parts) == 4 else {"name": n})
    return {"affinity": "Specific", "specific": specific}


def priorities(platform: str, pool: GpuPool) -> list[dict[str, Any]]:
    """One priority per capacity type, in the pool's order. `[reserved, on-demand]` without reservation
    names is one `AnyBestEffort` priority (it already falls back to on-demand)."""
    gpu = lookup(pool.gpu)
    assert gpu is not None and gpu.gcp is not None
    machine: dict[str, Any] = {"gpu": {"type": gpu.gcp.accelerator, "count": pool.gpusPerNode}}
    machines = pool_machines("gcp", pool)
    if machines:
        machine = {"machineType": machines[0], **machine}
    out: list[dict[str, Any]] = []
    merged = False
    for capacity in capacity_order(platform, pool):
        if capacity == "on-demand" and merged:
            continue
        entry = dict(machine)
        if capacity == "reserved":
            entry["reservations"] = _reservations(pool)
            merged = entry["reservations"]["affinity"] == "AnyBestEffort"
        elif capacity == "flex-start":
            entry["flexStart"] = {"enabled": True}
            if pool.maxRunDuration is not None:
                entry["maxRunDurationSeconds"] = duration_seconds(pool.maxRunDuration)
        elif capacity == "spot":
            entry["spot"] = True
        out.append(entry)
    return out


def compute_class(platform: str, pool: GpuPool) -> dict[str, Any]:
    """The pool's ComputeClass. `DoNotScaleUp`: when no priority can be met, pods wait rather than land on
    nodes outside the order (reference, `whenUnsatisfiable`)."""
    spec: dict[str, Any] = {"priorities": priorities(platform, pool), "whenUnsatisfiable": "DoNotScaleUp"}
    if platform in AUTO_CREATES:
        spec = {"nodePoolAutoCreation": {"enabled": True}, **spec}
    return {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClass",
        "metadata": {"name": class_name(pool), "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
        "spec": spec,
    }


def compute_classes(cfg: StackConfig) -> list[dict[str, Any]]:
    """The stack's ComputeClasses: one per GPU class that needs one (`uses_compute_class`)."""
    return [compute_class(cfg.platform, p) for p in cfg.gpuPools if uses_compute_class(cfg.platform, p)]
