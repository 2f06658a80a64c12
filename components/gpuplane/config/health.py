"""GPU node health and post-deploy validation sections of the stack config: `gpuplane:health` and
`gpuplane:validation` (docs/health.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ..catalog.dra import version_tuple
from .base import Model as _Model
from .base import suggest

if TYPE_CHECKING:
    from .model import StackConfig
    from .pool import GpuPool

DEFAULT_CUDA_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
DEFAULT_DCGM_IMAGE = "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"
"""The DCGM image with `dcgmi`: gpu-operator's default DCGM (NVIDIA/gpu-operator a22dbf67,
deployments/gpu-operator/values.yaml `dcgm.image`/`version`)."""


class HealthConfig(_Model):
    """How GPU faults are detected and failed nodes repaired (`gpuplane:health`)."""

    detection: bool = True
    """Run the cloud's GPU health signal where gpuplane manages nodes (EKS: the node monitoring agent
    add-on, which sets the `AcceleratedHardwareReady` node condition from XID and DCGM faults). GKE's
    device plugin and EKS Auto Mode detect GPU faults themselves; this changes nothing there."""
    repair: bool = True
    """Replace (or reboot) nodes whose GPUs failed: managed node groups' `nodeRepairConfig`, Karpenter's
    `nodeRepair` feature gate. GKE node auto-repair and EKS Auto Mode repair are always on. Needs
    `detection` on EKS: without the agent, nothing reports a GPU fault to repair."""
    maxParallelRepairs: int = Field(default=1, ge=1, le=100)
    """Managed node groups: at most this many nodes repaired at once (`maxParallelNodesRepairedCount`)."""
    maxUnhealthyPercent: int | None = Field(default=None, ge=1, le=100)
    """Managed node groups: stop repairing when more than this share of a group is unhealthy
    (`maxUnhealthyNodeThresholdPercentage`). Unset: EKS's default, which halts above 20% only in groups of
    more than 5 nodes (EKS user guide node-repair.adoc); a percentage set here applies to small groups too, so
    20 would stop repair at the first faulty node of a 2-node group."""


class ValidationConfig(_Model):
    """Post-deploy checks per GPU pool (`gpuplane:validation`; off by default). They replace and extend
    `smokeTest`: every GPU visible, DCGM diagnostics, and an NCCL all-reduce across nodes on EFA and
    GPUDirect pools. `gpuplane validate STACK --from LOGFILE` reads their output."""

    enabled: bool = False
    """Create the checks' Jobs; `pulumi up` then waits until each pool ran them."""
    image: str = DEFAULT_CUDA_IMAGE
    """A CUDA base image with `nvidia-smi` (the GPU count check)."""
    dcgmImage: str = DEFAULT_DCGM_IMAGE
    """An image with `dcgmi` (DCGM diagnostics level 1)."""
    diagnostics: bool = True
    """Run `dcgmi diag -r 1` on one node of each pool."""
    nccl: bool = True
    """Run an NCCL all-reduce over `ncclNodes` nodes of each EFA or GPUDirect RDMA pool."""
    ncclNodes: int = Field(default=2, ge=2, le=64)
    """Nodes the NCCL test spans (each pool needs `maxNodes` at least this)."""
    ncclMinBusBandwidth: dict[str, float] = Field(default_factory=dict)
    """Pool name -> the bus bandwidth (GB/s) the NCCL test must reach, for pools whose machine has no
    cited floor in the catalog (`gpuplane.catalog.health.NCCL_FLOORS`) or to hold one higher."""


NCCL_IMAGES = {
    "efa": "public.ecr.aws/hpc-cloud/nccl-tests:cuda13.0.2-efa1.48.0-ofiv1.19.0-ncclv2.30.4-1-testsv2.18.3",
    "rdma": "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.1.1",
}
"""The NCCL test image per fabric: AWS's nccl-tests with Open MPI, EFA and aws-ofi-nccl (EKS user guide
ml/node-efa.adoc, aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests); Google's gIB
diagnostic image for GPUDirect RDMA (GoogleCloudPlatform/container-engine-accelerators 992db812
gpudirect-rdma/nccl-test.yaml)."""


def nccl_fabric(cloud: str, pool: GpuPool) -> tuple[str | None, str]:
    """The fabric the pool's NCCL test runs over (`efa`, `rdma`), or None and why the pool gets none."""
    from ..catalog.network import GPUDIRECT
    from .capacity import pool_machines

    if cloud == "aws" and pool.network == "efa":
        return "efa", ""
    if cloud == "gcp" and pool.network == "gpudirect":
        machines = pool_machines("gcp", pool)
        kinds = {GPUDIRECT[m].kind for m in machines if m in GPUDIRECT}
        if kinds == {"rdma"}:
            return "rdma", ""
        return None, (
            "GPUDirect-TCPX(O) pods need GKE's tcpxo-daemon sidecar, which the check does not add: "
            "run Google's NCCL test for A3 Mega"
        )
    return None, "no multi-node fabric (network: efa or gpudirect)"


def nccl_pools(cfg: StackConfig) -> dict[str, tuple[str | None, str]]:
    """Pool -> (its NCCL test's fabric, or None and why it has none) when the stack's checks run NCCL."""
    checks = cfg.checks
    if checks is None or not checks.nccl:
        return {}
    cloud = cfg.platform_spec.cloud
    out: dict[str, tuple[str | None, str]] = {}
    for p in cfg.gpuPools:
        fabric, why = nccl_fabric(cloud, p)
        if fabric is not None and p.maxNodes < checks.ncclNodes:
            fabric, why = None, f"maxNodes {p.maxNodes} < validation.ncclNodes {checks.ncclNodes}"
        out[p.name] = (fabric, why)
    return out


NCCL_MIN_KUBERNETES = (1, 31)
"""The NCCL test's Job needs `successPolicy` (JobSuccessPolicy: beta and on by default from Kubernetes 1.31, GA
in 1.33; kubernetes/enhancements KEP-3998)."""


def health_problems(cfg: StackConfig) -> list[tuple[tuple[str, ...], str]]:
    """`gpuplane:health` keys that the platform gives gpuplane nothing to do with are refused, not ignored."""
    from ..catalog.health import HEALTH

    h, path = cfg.health, HEALTH[cfg.platform]
    out: list[tuple[tuple[str, ...], str]] = []
    given = h.model_fields_set
    if "repair" in given and not h.repair and path.repair_setting is None:
        out.append(
            (
                ("health", "repair"),
                f"{cfg.platform}'s node repair is the platform's own ({path.repair}); gpuplane keeps it on and has "
                "no setting to turn it off",
            )
        )
    if "detection" in given and not h.detection and path.addon is None:
        out.append((("health", "detection"), f"{cfg.platform} detects GPU faults itself; gpuplane installs nothing"))
    for key in ("maxParallelRepairs", "maxUnhealthyPercent"):
        if key in given and cfg.platform != "eks-managed":
            out.append((("health", key), f"only EKS managed node groups take it (eks-managed), not {cfg.platform}"))
    return out


def validation_problems(cfg: StackConfig) -> list[tuple[tuple[str, ...], str]]:
    """`validation.ncclMinBusBandwidth` names pools that exist and run the NCCL test; the NCCL test needs a
    Kubernetes version with Job success policies."""
    if cfg.validation is None:
        return []
    names = [p.name for p in cfg.gpuPools]
    runs = nccl_pools(cfg)
    out: list[tuple[tuple[str, ...], str]] = []
    found = version_tuple(cfg.cluster.kubernetesVersion or "")
    if found is not None and found < NCCL_MIN_KUBERNETES and any(fabric for fabric, _ in runs.values()):
        out.append(
            (
                ("validation", "nccl"),
                f"the NCCL test's Indexed Job needs Job success policies (Kubernetes 1.31 or newer; the cluster is "
                f"{cfg.cluster.kubernetesVersion}): raise cluster.kubernetesVersion or set nccl: false",
            )
        )
    short = [f"{p} ({why})" for p, (fabric, why) in runs.items() if fabric is None and why.startswith("maxNodes")]
    if "ncclNodes" in cfg.validation.model_fields_set and short:
        out.append(
            (
                ("validation", "ncclNodes"),
                f"more nodes than these multi-node pools can have, so they would get no NCCL test: {', '.join(short)}",
            )
        )
    for pool, gbps in cfg.validation.ncclMinBusBandwidth.items():
        where = ("validation", "ncclMinBusBandwidth", pool)
        if pool not in names:
            out.append((where, f"no such pool{suggest(pool, names)} (pools: {', '.join(names) or 'none'})"))
        elif gbps <= 0:
            out.append((where, "must be above 0 GB/s"))
        elif not runs.get(pool, (None, ""))[0]:
            why = runs.get(pool, (None, "validation.nccl is off or validation is not enabled"))[1]
            out.append((where, f"pool {pool} runs no NCCL test: {why}"))
    return out
