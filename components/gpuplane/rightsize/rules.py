"""The rules `gpuplane rightsize` decides by, as data with their sources, and the pure functions that apply
them: which shapes fit a workload's observed peaks, what a pod's workload is called, how confident a verdict is.

- **Margin**: a shape fits when it holds the observed peak memory and peak utilisation plus `margin`
  (default 20%, `--margin`). Peaks, not averages: memory beyond a slice's size is an out-of-memory error, and
  the issue asks for the cheapest shape that fits the peak.
- **MIG** (NVIDIA MIG user guide, "Supported MIG Profiles"): a profile `<g>g.<m>gb` has `g` of the GPU's
  compute slices (7 on A100/H100/H200/B200, 4 on RTX PRO 6000: the largest `g` the catalog lists for the
  GPU) and nominally `m` GB of memory. What a workload can allocate is less: the usable GiB the driver
  lists (`MIG_USABLE_GIB`, `nvidia-smi mig -lgip`), so `1g.5gb` holds 4.75 GiB, not 5. gpuplane lays out one
  profile per GPU (`all-<profile>`, GKE's `gpu_partition_size`), so one instance costs 1 / (instances per
  GPU) of the GPU (`Gpu.mig_profiles`). On GKE only the profiles GKE accepts (`Gpu.gke_mig_profiles`). MIG
  instances share no NVLink or P2P (MIG user guide, "Application Considerations"), so pods holding several
  GPUs never get MIG or sharing.
- **Usable memory** of a whole GPU: the total its exporter reports while held (`FB_USED + FB_FREE`), else
  `USABLE_GIB` (the total `nvidia-smi` reports), else the nominal GB read as decimal gigabytes.
- **Utilisation unknown** (MIG instances: dcgm-exporter reports no `DCGM_FI_DEV_GPU_UTIL` for them,
  NVIDIA/dcgm-exporter #50, #105, #216, #430): never taken as 0. The workload is assumed to use all the
  compute of what it holds (`compute_percent`), so memory alone can shrink it.
- **Sharing** (time-slicing or MPS), only on a GPU without MIG on the platform: N pods per GPU when each
  fits 1/N of its memory and 1/N of its compute. MPS where the platform offers it (each client's memory
  can be limited, CUDA MPS `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT`), else time-slicing (no memory isolation:
  the N pods must fit together, which 1/N each guarantees). At most `MAX_SHARE` pods per GPU.
- **Another GPU** of the stack's cloud: whole, with the memory, and with the dense FP16/BF16 tensor
  throughput the peak needs (`COMPUTE_TFLOPS`, NVIDIA datasheets): peak% of this GPU's TFLOPS, plus margin.
  A GPU missing from that table is never compared (no guessing), nor one the stack's region does not offer
  (`stack.fleet.offered`, checked where the shape is priced).
- **Spot** only for workloads the user names interruption-tolerant (`--interruptible`), never guessed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..catalog import GPUS, Gpu, gpus_on, lookup

DEFAULT_MARGIN = 0.20
"""Headroom over the observed peaks a new shape must keep (`--margin` in percent)."""

UTIL_QUANTILE = 0.95
"""The utilisation quantile reported next to the peak (context only: decisions use the peak)."""

MAX_SHARE = 8
"""Most pods per GPU a sharing recommendation proposes: gpuplane's choice, since every further client
adds time-slicing's context switches and widens MPS' shared failure domain (one fault ends every client)."""

RESOLUTION = 2016
"""Subquery steps per window (7d at 5m): the step is `window / RESOLUTION`, never below the scrape interval."""

COMPUTE_TFLOPS: Mapping[str, float] = MappingProxyType(
    {
        "t4": 65.0,  # T4 datasheet: mixed-precision FP16/FP32 65 TFLOPS
        "v100": 125.0,  # V100 SXM2 datasheet (GCP and P3 carry SXM2): tensor 125 TFLOPS
        "l4": 121.0,  # L4 datasheet: FP16 tensor 242 TFLOPS with sparsity
        "l40s": 362.0,  # L40S datasheet: FP16 tensor 362.05 TFLOPS (733 with sparsity)
        "a100-40gb": 312.0,  # A100 datasheet: FP16 tensor 312 TFLOPS (624 with sparsity)
        "a100-80gb": 312.0,
        "h100": 989.0,  # H100 SXM datasheet: FP16 tensor 1,979 TFLOPS with sparsity (A3, P5: SXM)
        "h200": 989.0,  # H200 datasheet: as H100 SXM
        "b200": 2250.0,  # HGX B200 datasheet: FP16/BF16 4.5 PFLOPS per GPU with sparsity
    }
)
"""Dense (no sparsity) FP16/BF16 tensor TFLOPS per catalog GPU, from NVIDIA's datasheets: the yardstick for
moving a workload to another GPU. Absent (P100, A10G, GB200, GB300, B300, RTX PRO 6000): not compared."""

MIG_PROFILE = re.compile(r"^([1-7])g\.([0-9]+)gb$")

MIG_USABLE_GIB: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        # MIG user guide, "Getting Started with MIG" > "List GPU Instance Profiles" (A100-SXM4-40GB); older
        # drivers list 9.75 / 19.62 / 39.50 for 2g.10gb / 3g.20gb / 7g.40gb: the lower figure is kept.
        "a100-40gb": MappingProxyType(
            {"1g.5gb": 4.75, "1g.10gb": 9.62, "2g.10gb": 9.62, "3g.20gb": 19.5, "4g.20gb": 19.5, "7g.40gb": 39.25}
        ),
        # `nvidia-smi mig -lgip` on an A100-SXM4-80GB (98 SMs in 7g.80gb).
        "a100-80gb": MappingProxyType(
            {"1g.10gb": 9.5, "1g.20gb": 19.5, "2g.20gb": 19.5, "3g.40gb": 39.25, "4g.40gb": 39.25, "7g.80gb": 79.0}
        ),
        # `nvidia-smi mig -lgip` on an H100 80GB HBM3 (132 SMs in 7g.80gb; the H100 PCIe lists the same memory).
        "h100": MappingProxyType(
            {"1g.10gb": 9.75, "1g.20gb": 19.62, "2g.20gb": 19.62, "3g.40gb": 39.5, "4g.40gb": 39.5, "7g.80gb": 79.25}
        ),
        # `nvidia-smi mig -lgip` on an H200 141GB: 1g.18gb 16.00, 2g.35gb 32.50, 7g.141gb 140.00; 1g.35gb has the
        # same two memory slices as 2g.35gb ("Supported MIG Profiles": 2/8 of the memory each), so the same GiB,
        # as every listing above shows for profiles of equal memory.
        "h200": MappingProxyType({"1g.18gb": 16.0, "1g.35gb": 32.5, "2g.35gb": 32.5, "7g.141gb": 140.0}),
    }
)
"""Catalog GPU -> MIG profile -> GiB a workload can allocate in one instance, as `nvidia-smi mig -lgip` lists
it (its "Memory GiB" column): below the nominal `<m>gb` of the profile's name."""

MIG_UNLISTED_FRACTION = 0.85
"""A profile missing from `MIG_USABLE_GIB` holds its nominal GB x this: below every ratio listed there (the
lowest, H200 1g.18gb, is 16.00 / 18 = 0.89), so an unlisted profile is never credited with more than it has."""

USABLE_GIB: Mapping[str, float] = MappingProxyType(
    {
        # The total `nvidia-smi` reports ("Memory-Usage", MiB) on each GPU, / 1024.
        "t4": 15360 / 1024,  # Tesla T4
        "v100": 16384 / 1024,  # Tesla V100-SXM2-16GB
        "a10g": 23028 / 1024,  # NVIDIA A10G
        "l4": 23034 / 1024,  # NVIDIA L4
        "l40s": 46068 / 1024,  # NVIDIA L40S
        "a100-40gb": 40960 / 1024,  # NVIDIA A100-SXM4-40GB
        "a100-80gb": 81920 / 1024,  # NVIDIA A100-SXM4-80GB
        "h100": 81559 / 1024,  # NVIDIA H100 80GB HBM3
        "h200": 143771 / 1024,  # NVIDIA H200
        "b200": 183359 / 1024,  # NVIDIA B200
    }
)
"""Catalog GPU -> GiB of a whole GPU, where the exporter does not say (a GPU the workload does not hold)."""

GB_IN_GIB = 1e9 / 2**30
"""A GPU missing from `USABLE_GIB` holds its nominal GB read as decimal gigabytes: below every total listed
there (the L4's 24 GB is 22.35 GiB this way, 22.49 reported)."""

CONFIDENCE: tuple[tuple[str, float, float], ...] = (("high", 7 * 24.0, 0.05), ("medium", 24.0, 0.20))
"""(verdict, at least this many hours observed, at most this fraction of samples missing), first match wins;
otherwise `low`. A week covers weekly cycles; under a day a daily peak may be missing."""


@dataclass(frozen=True)
class Need:
    """What a new shape must hold: the observed peaks with the margin added."""

    memory_gib: float
    util_percent: float
    """Percent of the current GPU's compute."""

    @classmethod
    def of(cls, memory_gib: float, util_percent: float, margin: float) -> Need:
        return cls(memory_gib * (1 + margin), util_percent * (1 + margin))


@dataclass(frozen=True)
class Shape:
    """What a workload holds: a whole GPU, a MIG instance, a share of a GPU, or a whole GPU of another type."""

    kind: str
    """`whole`, `mig`, `share` (time-slicing or MPS) or `gpu` (a whole GPU of another type)."""
    gpu: str
    detail: str = ""
    """The MIG profile (`1g.10gb`), the sharing (`mps x4`), or empty."""
    fraction: float = 1.0
    """Share of one GPU's price this shape costs."""

    @property
    def label(self) -> str:
        if self.kind == "mig":
            return f"mig {self.detail} ({self.gpu})"
        if self.kind == "share":
            return f"{self.detail} ({self.gpu})"
        return f"whole {self.gpu}"


def mig_profiles(gpu: Gpu, cloud: str, platform_sharing: tuple[str, ...]) -> tuple[str, ...]:
    """The MIG profiles a pool of `gpu` can use on this cloud and platform (none without MIG)."""
    if "mig" not in platform_sharing:
        return ()
    return tuple(gpu.gke_mig_profiles if cloud == "gcp" else gpu.mig_profiles)


def mig_memory_gib(gpu: Gpu, profile: str) -> float:
    """GiB one `profile` instance of `gpu` holds: `MIG_USABLE_GIB`, else nominal x `MIG_UNLISTED_FRACTION`."""
    listed = MIG_USABLE_GIB.get(gpu.name, {}).get(profile)
    if listed is not None:
        return listed
    m = MIG_PROFILE.match(profile)
    assert m is not None, profile
    return int(m[2]) * MIG_UNLISTED_FRACTION


def gpu_memory_gib(gpu: Gpu) -> float:
    """GiB of a whole `gpu` where no exporter says: `USABLE_GIB`, else its nominal GB in GiB."""
    return USABLE_GIB.get(gpu.name, gpu.memory_gib * GB_IN_GIB)


def mig_compute_percent(gpu: Gpu, profile: str) -> float:
    """Percent of `gpu`'s compute one `profile` instance has (its `g` slices over the GPU's)."""
    m = MIG_PROFILE.match(profile)
    assert m is not None, profile
    slices = max(int(MIG_PROFILE.match(p)[1]) for p in gpu.mig_profiles)  # type: ignore[index]
    return 100.0 * int(m[1]) / slices


def mig_shape(gpu: Gpu, profile: str) -> tuple[float, float, Shape]:
    """(usable memory GiB, percent of the GPU's compute, shape) of one MIG profile of `gpu`."""
    shape = Shape("mig", gpu.name, profile, 1 / gpu.mig_profiles[profile])
    return mig_memory_gib(gpu, profile), mig_compute_percent(gpu, profile), shape


def compute_percent(shape: Shape) -> float:
    """Percent of its GPU's compute `shape` holds: a MIG instance its slices, a share its fraction, else all."""
    gpu = lookup(shape.gpu)
    if shape.kind == "mig" and gpu is not None and shape.detail in gpu.mig_profiles:
        return mig_compute_percent(gpu, shape.detail)
    return 100.0 * shape.fraction if shape.kind == "share" else 100.0


def share_shape(gpu: Gpu, need: Need, platform_sharing: tuple[str, ...], memory_gib: float) -> Shape | None:
    """The widest time-slicing or MPS share of `gpu` (holding `memory_gib`) each pod of which still fits
    `need`, or None."""
    strategy = next((s for s in ("mps", "time-slicing") if s in platform_sharing), None)
    if strategy is None:
        return None
    by_memory = math.floor(memory_gib / need.memory_gib) if need.memory_gib > 0 else MAX_SHARE
    by_compute = math.floor(100.0 / need.util_percent) if need.util_percent > 0 else MAX_SHARE
    n = min(MAX_SHARE, by_memory, by_compute)
    return Shape("share", gpu.name, f"{strategy} x{n}", 1 / n) if n >= 2 else None


def other_gpus(current: Gpu, need: Need, cloud: str) -> list[Shape]:
    """Whole GPUs of another type on `cloud` with the memory and the throughput the need asks for."""
    base = COMPUTE_TFLOPS.get(current.name)
    if base is None:
        return []
    out = []
    for name in gpus_on(cloud):
        tflops = COMPUTE_TFLOPS.get(name)
        if name == current.name or tflops is None:
            continue
        if gpu_memory_gib(GPUS[name]) >= need.memory_gib and tflops >= base * need.util_percent / 100:
            out.append(Shape("gpu", name))
    return out


def fitting_shapes(
    gpu_name: str,
    need: Need,
    cloud: str,
    platform_sharing: tuple[str, ...],
    gpus_per_pod: int,
    observed_gib: float | None = None,
) -> list[Shape]:
    """Every shape that holds `need`: MIG instances of the GPU (or, without MIG, a share of it), and whole
    GPUs of other types. Pods with several GPUs keep whole GPUs of their type (no NVLink between slices).
    `observed_gib`: the usable memory the exporter reported for the whole GPU (else `gpu_memory_gib`)."""
    gpu = lookup(gpu_name)
    if gpu is None or gpus_per_pod > 1:
        return []
    out: list[Shape] = []
    profiles = mig_profiles(gpu, cloud, platform_sharing)
    for profile in profiles:
        memory, compute, shape = mig_shape(gpu, profile)
        if memory >= need.memory_gib and compute >= need.util_percent and shape.fraction < 1:
            out.append(shape)
    if not profiles:
        whole = gpu_memory_gib(gpu) if observed_gib is None else observed_gib
        share = share_shape(gpu, need, platform_sharing, whole)
        out += [share] if share is not None else []
    return out + other_gpus(gpu, need, cloud)


_MODELS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), name)
    for p, name in (
        (r"gb300", "gb300"),
        (r"b300", "b300"),
        (r"gb200", "gb200"),
        (r"b200", "b200"),
        (r"rtx pro 6000", "rtx-pro-6000"),
        (r"\bgh200\b", ""),  # Grace Hopper: an H100 (96 or 144 GB) the catalog does not carry, not an H200
        (r"\bh200\b", "h200"),
        (r"\bh100\b", "h100"),
        (r"a100.*80\s*gb", "a100-80gb"),
        (r"a100", "a100-40gb"),
        (r"l40s", "l40s"),
        (r"\bl4\b", "l4"),
        (r"a10g", "a10g"),
        (r"\bt4\b", "t4"),
        (r"v100", "v100"),
        (r"p100", "p100"),
    )
)
"""NVML product names (dcgm-exporter's `modelName`, GKE's device plugin's `model`: "NVIDIA H100 80GB HBM3",
"NVIDIA A100-SXM4-80GB", "Tesla T4") -> catalog GPU, most specific first."""


def gpu_of_model(model: str) -> str | None:
    """The catalog GPU an exporter's model name names, or None."""
    return next((name for pattern, name in _MODELS if pattern.search(model)), None) or None


_RAND = "[bcdfghjklmnpqrstvwxz2456789]"
"""Kubernetes' random-name alphabet (k8s.io/apimachinery pkg/util/rand: no vowels, no 0, 1 or 3)."""
_REPLICA_SET = re.compile(rf"^(.+)-{_RAND}{{6,10}}-{_RAND}{{5}}$")
_RANDOM = re.compile(rf"^(.+)-{_RAND}{{5}}$")
_ORDINAL = re.compile(r"^(.+)-[0-9]+$")
WORKLOAD_RULE = (
    "kube-state-metrics' kube_pod_owner where it has the pod: its controller, or for a ReplicaSet its Deployment "
    "(kube_replicaset_owner) and for a Job its CronJob (kube_job_owner); else from the pod's name: a ReplicaSet's "
    "pod (Deployment) drops -<pod-template-hash>-<5 random>; else a Job's or DaemonSet's pod drops -<5 random>, "
    "then an indexed Job's -<index> or a CronJob's -<scheduled minute>; a StatefulSet's pod drops -<ordinal>; a "
    "bare pod keeps its name"
)
"""How a pod becomes its workload: its owners, else its name's suffixes (random parts in `_RAND`)."""


def workload_name(pod: str) -> str:
    """The workload a pod belongs to, by `WORKLOAD_RULE`: `chat-7d9f8b6c4d-x2m4q` -> `chat`, `train-0` ->
    `train`, `eval-8x2kq` -> `eval`, `nightly-29012345-8x2kq` -> `nightly`, `notebook` -> `notebook`."""
    m = _REPLICA_SET.match(pod)
    if m is not None:
        return m[1]
    name = pod
    m = _RANDOM.match(name)
    if m is not None:
        name = m[1]
    m = _ORDINAL.match(name)
    return m[1] if m is not None else name


def verdict(observed_hours: float, gaps: float) -> str:
    """`high`, `medium` or `low` by `CONFIDENCE`."""
    return next((v for v, hours, missing in CONFIDENCE if observed_hours >= hours and gaps <= missing), "low")


def confidence_rule() -> str:
    parts = [f"{v}: observed >= {hours:g} h with <= {missing:.0%} samples missing" for v, hours, missing in CONFIDENCE]
    return "; ".join(parts) + "; low: otherwise"


__all__ = [
    "COMPUTE_TFLOPS",
    "DEFAULT_MARGIN",
    "MAX_SHARE",
    "MIG_USABLE_GIB",
    "USABLE_GIB",
    "Need",
    "Shape",
    "compute_percent",
    "fitting_shapes",
    "gpu_memory_gib",
    "gpu_of_model",
    "mig_memory_gib",
    "verdict",
    "workload_name",
]
