"""A pool's estimated cold start for the capacity summary: which pull method its cold-start settings give, the
disk it writes to, and which published (or assumed) boot and driver figures apply (`catalog.coldstart.RATES`)."""

from __future__ import annotations

from typing import Any

from ..catalog import NODE_IMAGES
from ..catalog.coldstart import RATES, Estimate, estimate, gke_disk_mibps
from ..config import coldstart
from ..config.model import GpuPool, StackConfig


def pool_estimate(cfg: StackConfig, pool: GpuPool) -> Estimate:
    """Node boot + driver ready + image pull of one new node of `pool` (`coldStart.imageSizeGb` of image)."""
    ami = cfg.karpenter.amiVersion if cfg.karpenter is not None else "latest"
    cold = coldstart.plan(cfg.platform, pool, cfg.gpuPools, ami)
    method = cold.method
    disk: float | None
    if cfg.platform_spec.cloud == "aws":
        boot = "boot-eks"
        image = NODE_IMAGES.get(pool.amiType)
        driver = (
            "driver-operator" if image is not None and not image.driver and not cold.built_in else "driver-in-image"
        )
        # Auto Mode's nodes and their disks are AWS's (its parallel pull writes to local NVMe): no disk bound
        disk = None if cold.built_in else float(cold.throughput or RATES["gp3-baseline"].value)
    else:
        boot, driver = "boot-gke", "driver-gke"
        method = "default-gke" if method == "default" else method
        if cfg.platform == "gke-standard":
            disk = gke_disk_mibps(pool.diskType, pool.diskSizeGb)
        elif cfg.autoProvisioning is not None:  # NAP's pools: its defaults' pd-balanced boot disk
            disk = gke_disk_mibps("pd-balanced", cfg.autoProvisioning.diskSizeGb)
        else:
            disk = None
    return estimate(method, pool.coldStart.imageSizeGb, disk, boot, driver)


def estimate_json(e: Estimate) -> dict[str, Any]:
    """The `capacity` output's `coldStart` of a row (camelCase keys, seconds)."""
    return {
        "nodeBootS": e.node_boot_s,
        "driverReadyS": e.driver_ready_s,
        "imagePullS": e.image_pull_s,
        "totalS": e.total_s,
        "method": e.method,
        "imageGb": e.image_gb,
        "diskMiBps": e.disk_mibps,
        "rate": e.rate,
        "assumed": list(e.assumed),
    }


COLUMNS = (
    ("method", "method"),
    ("imageGb", "image GB"),
    ("diskMiBps", "disk MiB/s"),
    ("rate", "pull rate"),
    ("nodeBootS", "boot s"),
    ("driverReadyS", "driver s"),
    ("imagePullS", "pull s"),
    ("totalS", "total s"),
)
"""The cold-start table's columns: `coldStart` key -> heading."""


def _cell(v: object) -> str:
    return "-" if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def cold_start_table(rows: list[dict[str, Any]]) -> str:
    """Each pool's estimated cold start as an aligned text table, and which figures are assumptions."""
    head = ["region", "pool", *(h for _, h in COLUMNS)]
    cells = [head] + [[r["region"], r["pool"], *(_cell(r["coldStart"][k]) for k, _ in COLUMNS)] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    assumed = sorted({k for r in rows for k in r["coldStart"]["assumed"]})
    note = "Estimate from published rates (docs/cold-start.md has each source)"
    if assumed:
        note += f"; assumed, no published figure: {', '.join(assumed)}"
    return "\n".join([*lines, note + "."])


__all__ = ["COLUMNS", "cold_start_table", "estimate_json", "pool_estimate"]
