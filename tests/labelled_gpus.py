"""One cluster's GPUs (idle, allocated, MIG, time-shared, several namespaces and nodes), as the series each
integration stores for them according to `gpuplane.monitoring.labels`, and the answers every rule must give.

Shared by the promtool tests (input series) and the real-Prometheus test (the fake exporter's exposition).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.monitoring.labels import WORKLOAD, LabelModel
from gpuplane.monitoring.rules import METRIC_SETS

CLUSTER, REGION = "c1", "r1"
EXPORTER_NAMESPACE = "gpu-monitoring"
EXPORTER_POD = "dcgm-exporter-x7k2p"


@dataclass(frozen=True)
class Gpu:
    """One device dcgm-exporter reports: a GPU, a MIG instance, or one pod's share of a time-shared GPU."""

    node: str
    gpu: str
    util: float
    workload: tuple[str, str, str] | None = None
    """(namespace, pod, container) of the pod holding it (dcgm-exporter kubernetes.go), None when free."""
    extra: tuple[tuple[str, str], ...] = ()
    """Device labels: MIG `GPU_I_ID`/`GPU_I_PROFILE`, time-sharing `vgpu`."""


GPUS = (
    Gpu("gpu-1", "0", 1, ("ml", "notebook-0", "jupyter")),  # allocated and idle: the one alert
    Gpu("gpu-1", "1", 95, ("ml", "trainer-0", "trainer")),
    Gpu("gpu-2", "0", 0),  # free and idle: no alert
    Gpu("gpu-2", "1", 60, ("team-b", "infer-0", "server")),
    Gpu("gpu-3", "0", 3, ("ml", "mig-a", "worker"), (("GPU_I_ID", "1"), ("GPU_I_PROFILE", "1g.10gb"))),  # idle MIG
    Gpu("gpu-3", "0", 0, None, (("GPU_I_ID", "2"), ("GPU_I_PROFILE", "1g.10gb"))),  # free MIG slice
    # Time-shared (dcgm-exporter with KubernetesVirtualGPUs: one series per sharing pod, `vgpu` names the replica).
    Gpu("gpu-4", "0", 30, ("team-b", "share-0", "server"), (("vgpu", "0"),)),
    Gpu("gpu-4", "0", 30, ("team-b", "share-1", "server"), (("vgpu", "1"),)),
)

IDLE_ALLOCATED = (GPUS[0], GPUS[4])
"""What `GpuAllocatedButIdle` must fire for, on every integration."""
COUNT_BY_NAMESPACE = {"ml": 3, "team-b": 3}
AVG_BY_NAMESPACE = {"ml": 33, "team-b": 40}
AVG_BY_POD = {(g.workload[0], g.workload[1]): g.util for g in GPUS if g.workload}
AVG_BY_NODE = {"gpu-1": 48, "gpu-2": 30, "gpu-3": 1.5, "gpu-4": 30}


def _target(model: LabelModel) -> dict[str, str]:
    """Labels the collector puts on every series of the exporter target (after the integration's relabelling)."""
    out = {"job": "gpu-metrics", "instance": "10.0.0.9:9400", model.cluster: CLUSTER, model.region: REGION}
    for label in model.idle:  # the exporter pod's own metadata, which stays where no exporter label replaces it
        out[label] = {"namespace": EXPORTER_NAMESPACE, "pod": EXPORTER_POD, "container": "exporter"}[label]
    return out


def device_labels(model: LabelModel, g: Gpu) -> dict[str, str]:
    """The labels dcgm-exporter itself writes for `g` (render_metrics.go + kubernetes.go), by canonical name."""
    gpu_label = METRIC_SETS[model.metrics].gpu_label
    out = {gpu_label: g.gpu, "UUID": f"GPU-{g.node}-{g.gpu}", "modelName": "NVIDIA A100", **dict(g.extra)}
    if g.workload:
        out.update(dict(zip(WORKLOAD, g.workload, strict=True)))
    return out


def stored(model: LabelModel, g: Gpu, per_gpu: bool = False) -> dict[str, str]:
    """The labels a stored series of `g` carries on an integration (`per_gpu`: a node-level series without
    workload labels, e.g. GKE's `duty_cycle_gpu_node`)."""
    own = device_labels(model, g)
    if per_gpu:
        own = {k: v for k, v in own.items() if k not in WORKLOAD}
    out = _target(model)
    out[model.node] = g.node
    for k, v in own.items():
        # Without honor_labels a clash renames the exporter's label to exported_<name> (Prometheus scrape).
        out[model.stored(k) if k in WORKLOAD else k] = v
    return out


def selector(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def series(model: LabelModel) -> list[tuple[str, float]]:
    """(series selector, value) of every stored series the rules read, for this model."""
    m = METRIC_SETS[model.metrics]
    out: list[tuple[str, float]] = []
    if model.metrics == "dcgm":
        out += [(selector(m.util, stored(model, g)), g.util) for g in GPUS]
    else:  # GKE device plugin: per-container utilisation while allocated, per-GPU node series always
        out += [(selector(m.util, stored(model, g)), g.util) for g in GPUS if g.workload]
        seen: set[tuple[str, ...]] = set()
        for g in GPUS:
            labels = stored(model, g, per_gpu=True)
            labels.pop("vgpu", None)
            key = tuple(sorted(labels.items()))
            if key not in seen:
                seen.add(key)
                out.append((selector(m.util_node, labels), g.util))
    return out


def exposition(model: LabelModel) -> str:
    """The exporter's /metrics body (exporter labels only), for the real-Prometheus test."""
    m = METRIC_SETS[model.metrics]
    lines = [f"# TYPE {m.util} gauge"]
    lines += [selector(m.util, device_labels(model, g)).replace(", ", ",") + f" {g.util:g}" for g in GPUS]
    return "\n".join(lines) + "\n"


def expected_idle_alert_labels(model: LabelModel, g: Gpu) -> dict[str, str]:
    """Labels of `GpuAllocatedButIdle` for `g`: its stored series with canonical workload labels added."""
    labels = stored(model, g)
    assert g.workload
    labels.update(dict(zip(WORKLOAD, g.workload, strict=True)))
    return labels


def workload_of(g: Gpu) -> str:
    """`namespace/pod` of an allocated device."""
    assert g.workload is not None
    return f"{g.workload[0]}/{g.workload[1]}"
