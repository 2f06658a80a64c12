"""The rules `gpuplane rightsize` decides by, as data with their sources, and the pure functions that apply
them: which shapes fit a workload's observed peaks, what a pod's workload is called, how confident a verdict is.

- **Margin**: a shape fits when it holds the observed peak memory and peak utilisation plus `margin`
  (default 20%, `--margin`). Peaks, not averages: memory beyond a slice's size is an out-of-memory error, and
  the issue asks for the cheapest shape that fits the peak.
- **MIG** (NVIDIA MIG user guide, "Supported MIG Profiles"): a profile `<g>g.<m>gb` has `g` of the GPU's
  compute slices (7 on A100/H100/H200/B200, 4 on RTX PRO 6000: the largest `g` the catalog lists for the
  GPU) and `m` GB of memory. gpuplane lays out one profile per GPU (`all-<profile>`, GKE's
  `gpu_partition_size`), so one instance costs 1 / (instances per GPU) of the GPU (`Gpu.mig_profiles`). On
  GKE only the profiles GKE accepts (`Gpu.gke_mig_profiles`). MIG instances share no NVLink or P2P (MIG user
  guide, "Application Considerations"), so pods holding several GPUs never get MIG or sharing.
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

HOURS_PER_MONTH = 730
"""Average hours in a month (8,760 / 12), as cloud pricing pages use it: $/month = $/h x 730."""

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


def mig_shape(gpu: Gpu, profile: str) -> tuple[float, float, Shape]:
    """(memory GiB, percent of the GPU's compute, shape) of one MIG profile of `gpu`."""
    m = MIG_PROFILE.match(profile)
    assert m is not None, profile
    slices = max(int(MIG_PROFILE.match(p)[1]) for p in gpu.mig_profiles)  # type: ignore[index]
    return float(m[2]), 100.0 * int(m[1]) / slices, Shape("mig", gpu.name, profile, 1 / gpu.mig_profiles[profile])


def share_shape(gpu: Gpu, need: Need, platform_sharing: tuple[str, ...]) -> Shape | None:
    """The widest time-slicing or MPS share of `gpu` each pod of which still fits `need`, or None."""
    strategy = next((s for s in ("mps", "time-slicing") if s in platform_sharing), None)
    if strategy is None:
        return None
    by_memory = math.floor(gpu.memory_gib / need.memory_gib) if need.memory_gib > 0 else MAX_SHARE
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
        other = GPUS[name]
        tflops = COMPUTE_TFLOPS.get(name)
        if name == current.name or tflops is None:
            continue
        if other.memory_gib >= need.memory_gib and tflops >= base * need.util_percent / 100:
            out.append(Shape("gpu", name))
    return out


def fitting_shapes(
    gpu_name: str, need: Need, cloud: str, platform_sharing: tuple[str, ...], gpus_per_pod: int
) -> list[Shape]:
    """Every shape that holds `need`: MIG instances of the GPU (or, without MIG, a share of it), and whole
    GPUs of other types. Pods with several GPUs keep whole GPUs of their type (no NVLink between slices)."""
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
        share = share_shape(gpu, need, platform_sharing)
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
        (r"h200", "h200"),
        (r"h100", "h100"),
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
    return next((name for pattern, name in _MODELS if pattern.search(model)), None)


_RAND = "[bcdfghjklmnpqrstvwxz2456789]"
"""Kubernetes' random-name alphabet (k8s.io/apimachinery pkg/util/rand: no vowels, no 0, 1 or 3)."""
_REPLICA_SET = re.compile(rf"^(.+)-{_RAND}{{6,10}}-{_RAND}{{5}}$")
_RANDOM = re.compile(rf"^(.+)-{_RAND}{{5}}$")
_ORDINAL = re.compile(r"^(.+)-[0-9]+$")
WORKLOAD_RULE = (
    "a ReplicaSet's pod (Deployment) drops -<pod-template-hash>-<5 random>; else a Job's or DaemonSet's pod "
    "drops -<5 random>, then an indexed Job's -<index> or a CronJob's -<scheduled minute>; a StatefulSet's pod "
    "drops -<ordinal>; a bare pod keeps its name"
)
"""How a pod's name becomes its workload's (the suffixes the controllers add; random parts in `_RAND`)."""


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
    "HOURS_PER_MONTH",
    "MAX_SHARE",
    "Need",
    "Shape",
    "fitting_shapes",
    "gpu_of_model",
    "verdict",
    "workload_name",
]
