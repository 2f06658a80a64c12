"""GPU claims (DRA) and ComputeDomains in a stack config: the combinations that can't work, each refused with
its source (`catalog.dra`), on the key the user wrote."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog import NODE_IMAGES, lookup
from ..catalog.dra import MIN_KUBERNETES, NO_MANUAL_DRIVER, PLATFORM_DRA, version_tuple

if TYPE_CHECKING:
    from .model import GpuPool, StackConfig

Loc = tuple[str | int, ...]

SHARING_WITH_DRA = {
    "gcp": "GKE's GPU sharing (time-sharing, MPS, multi-instance GPUs) does not work with DRA (GKE docs, "
    '"Set up DRA", limitations)',
    "aws": "the gpu-operator's device-plugin sharing config does not reach GPUs claimed through DRA",
}
"""Cloud -> why a DRA pool can't take `sharing`."""


def allocation(pool: GpuPool) -> str:
    """The pool's `gpuAllocation` (the stack's default already applied): `device-plugin` or `dra`."""
    return pool.gpuAllocation or "device-plugin"


def claims_gpus(pool: GpuPool) -> bool:
    """Pods take this pool's GPUs through ResourceClaims (the NVIDIA DRA driver's `gpu.nvidia.com`)."""
    return allocation(pool) == "dra"


def compute_domains(pool: GpuPool) -> bool:
    """The pool's GPUs share an NVLink domain across nodes (GB200 / GB300 NVL72): a multi-node job needs a
    ComputeDomain (IMEX) from the DRA driver, whichever way it gets its GPUs."""
    gpu = lookup(pool.gpu)
    return gpu is not None and gpu.multi_node_nvlink


def needs_driver(pool: GpuPool) -> bool:
    """The DRA driver's kubelet plugin runs on the pool's nodes (GPU claims or ComputeDomains)."""
    return claims_gpus(pool) or compute_domains(pool)


def dra_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """Every DRA or ComputeDomain setting of `cfg` that can't work, on the key the user wrote."""
    out: list[tuple[Loc, str]] = []
    cloud = cfg.platform_spec.cloud
    refused = PLATFORM_DRA[cfg.platform].refused
    stack_wide = cfg.gpuAllocation == "dra"
    if stack_wide and refused:
        out.append((("gpuAllocation",), f"dra is not possible on {cfg.platform}: {refused}"))
    for i, pool in enumerate(cfg.gpuPools):
        at: Loc = ("gpuPools", i)
        if claims_gpus(pool):
            if refused and not stack_wide:
                out.append(((*at, "gpuAllocation"), f"dra is not possible on {cfg.platform}: {refused}"))
            out += _pool_problems(cloud, at, pool)
        elif compute_domains(pool) and refused:
            out.append(
                (
                    (*at, "gpu"),
                    f"{pool.gpu} spreads one NVLink domain over many nodes, so a multi-node job needs a ComputeDomain "
                    f"from the NVIDIA DRA driver, which is not possible on {cfg.platform}: {refused}",
                )
            )
    out += _mixed_problems(cfg)
    out += _version_problems(cfg)
    return out


def _pool_problems(cloud: str, at: Loc, pool: GpuPool) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    from .capacity import pool_machines

    for machine in pool_machines(cloud, pool) if cloud == "gcp" else []:
        for prefix, why in NO_MANUAL_DRIVER.items():
            if machine.startswith(prefix):
                out.append(((*at, "gpuAllocation"), f"dra disables GKE's driver installation on {machine}, and {why}"))
    if pool.sharing is not None:
        out.append(
            (
                (*at, "sharing"),
                f"{SHARING_WITH_DRA[cloud]}; with gpuAllocation: dra, claim MIG devices (mig.nvidia.com) or share one "
                "claim between pods instead (docs/gpu-claims.md)",
            )
        )
    image = NODE_IMAGES.get(pool.amiType)
    if cloud == "aws" and image is not None and image.device_plugin:
        out.append(
            (
                (*at, "amiType"),
                f"{image.ami_type} runs its own NVIDIA device plugin, which would offer the GPUs the DRA driver "
                "claims a second time; use the AL2023 NVIDIA image (AL2023_x86_64_NVIDIA, or AL2023_ARM_64_NVIDIA on "
                "Grace) for gpuAllocation: dra",
            )
        )
    if cloud == "aws" and pool.driver == "operator":
        out.append(
            (
                (*at, "driver"),
                "the DRA driver reads one driver root for the whole cluster, and gpuplane gives it the node image's "
                "(AL2023 NVIDIA); use driver: preinstalled with gpuAllocation: dra",
            )
        )
    return out


def _mixed_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    """With GPU claims on, the driver's GPU plugin runs wherever its kubelet plugin does: a ComputeDomain pool
    that counts GPUs through the device plugin would offer every GPU twice."""
    claiming = [p.name for p in cfg.gpuPools if claims_gpus(p)]
    if not claiming:
        return []
    return [
        (
            ("gpuPools", i, "gpuAllocation"),
            f"pools {', '.join(claiming)} claim GPUs through DRA, so the DRA driver's GPU plugin also runs on "
            f"{p.name}'s nodes (for its ComputeDomains) and would offer its GPUs a second time beside the device "
            "plugin: set gpuAllocation: dra here too",
        )
        for i, p in enumerate(cfg.gpuPools)
        if compute_domains(p) and not claims_gpus(p)
    ]


def _version_problems(cfg: StackConfig) -> list[tuple[Loc, str]]:
    pools = [p.name for p in cfg.gpuPools if needs_driver(p)]
    if not pools or PLATFORM_DRA[cfg.platform].refused:
        return []
    need = ".".join(map(str, MIN_KUBERNETES))
    why = (
        f"pools {', '.join(pools)} need the NVIDIA DRA driver, which needs resource.k8s.io/v1 (DRA is GA from "
        f"Kubernetes {need})"
    )
    version = cfg.cluster.kubernetesVersion
    if version is None:
        return [(("cluster", "kubernetesVersion"), f"required: {why}; set it to {need} or newer")]
    found = version_tuple(version)
    if found is not None and found < MIN_KUBERNETES:
        return [(("cluster", "kubernetesVersion"), f"{version} is too old: {why}")]
    return []


__all__ = ["allocation", "claims_gpus", "compute_domains", "dra_problems", "needs_driver"]
