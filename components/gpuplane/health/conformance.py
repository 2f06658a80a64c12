"""`gpuplane conformance STACK`: each CNCF AI Conformance requirement (`catalog.conformance`, v1.36) with how
the stack meets it: `met` (the resources in the plan that provide it), `manual` (a step gpuplane does not
take) or `not met` (and what would meet it). Judged from the config and the planned resources (anything
with `type`, `name` and `inputs`, as `gpuplane.plan.Plan.resources`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..catalog.conformance import CHECKLIST, SOURCE, VERSION
from ..catalog.platforms import Source
from ..config.model import StackConfig

RELEASE = "kubernetes:helm.sh/v3:Release"
POOL_TYPES = frozenset(
    {
        "eks:index:ManagedNodeGroup",
        "gcp:container/nodePool:NodePool",
        "kubernetes:karpenter.sh/v1:NodePool",
        "kubernetes:cloud.google.com/v1:ComputeClass",
    }
)


@dataclass(frozen=True)
class Finding:
    status: str
    """`met`, `manual` or `not met`."""
    how: str
    evidence: tuple[str, ...] = field(default_factory=tuple)
    """Resources of the plan that provide it (`type name`)."""


@dataclass(frozen=True)
class Ctx:
    cfg: StackConfig
    resources: Sequence[Any]

    def of(self, test: Callable[[Any], bool]) -> tuple[str, ...]:
        return tuple(f"{r.type} {r.name}" for r in self.resources if test(r))

    def chart(self, *names: str) -> tuple[str, ...]:
        def is_chart(r: Any) -> bool:
            return bool(r.type == RELEASE and str(r.inputs.get("chart", "")).rstrip("/").rsplit("/", 1)[-1] in names)

        return self.of(is_chart)

    def types(self, *types: str) -> tuple[str, ...]:
        return self.of(lambda r: r.type in types)

    def gpu_nodes(self) -> tuple[str, ...]:
        """The resources that bring GPU nodes (pools, node groups, NodePools, classes, or the Autopilot cluster):
        where a platform's own software (its device plugin, its metrics) runs."""
        return self.types(*POOL_TYPES) + self.autopilot()

    def autopilot(self) -> tuple[str, ...]:
        return self.of(lambda r: r.type == "gcp:container/cluster:Cluster" and bool(r.inputs.get("enableAutopilot")))


def _found(ev: tuple[str, ...], how: str, missing: str, status: str = "not met") -> Finding:
    return Finding("met", how, ev) if ev else Finding(status, missing)


def driver_runtime(c: Ctx) -> Finding:
    p = c.cfg.platform_spec
    what = f"driver: {p.drivers}; container toolkit: {p.toolkit}"

    def check_job(kind: str) -> Callable[[Any], bool]:
        def test(r: Any) -> bool:
            if r.type != "kubernetes:batch/v1:Job":
                return False
            labels = (r.inputs.get("metadata") or {}).get("labels") or {}
            return bool(labels.get("gpuplane.io/check") == kind or (kind == "gpus" and "gpuplane.io/pool" in labels))

        return test

    diag, gpus = c.of(check_job("diag")), c.of(check_job("gpus"))
    if diag:
        how = f"{what}; gpuplane:validation's Jobs prove both per pool (nvidia-smi sees the GPUs, dcgmi diag passes)"
        return Finding("met", how, diag + gpus)
    if gpus:
        return Finding("met", f"{what}; the smoke Jobs prove both per pool (nvidia-smi sees the GPUs)", gpus)
    operator = c.chart("gpu-operator")
    if operator:
        return Finding("met", f"{what}; the gpu-operator's validator checks them on every GPU node", operator)
    return Finding("manual", f"{what}; turn on gpuplane:validation to prove them per pool after deploy")


def gpu_sharing(c: Ctx) -> Finding:
    shared = [f"{p.name}: {p.sharing.strategy}" for p in c.cfg.gpuPools if p.sharing is not None]
    claims = [p.name for p in c.cfg.gpuPools if p.gpuAllocation == "dra"]
    if not (shared or claims):
        return Finding("not met", "no pool shares GPUs: set gpuPools[].sharing (time-slicing, mps or mig)")
    parts = [", ".join(shared)] if shared else []
    if claims:
        parts.append(f"DRA claims (MIG devices) on {', '.join(claims)}")
    names = {p.name for p in c.cfg.gpuPools if p.sharing is not None or p.gpuAllocation == "dra"}
    pools = c.of(lambda r: r.type in POOL_TYPES and any(str(r.name).endswith(f"-{n}") for n in names))
    return Finding("met", f"shared or partitioned GPUs: {'; '.join(parts)}", pools)


def virtualized(c: Ctx) -> Finding:
    return Finding("not met", "gpuplane exposes no virtualized accelerators (vGPU): GPUs are passed through whole")


def ai_inference(c: Ctx) -> Finding:
    step = (
        "enable the GKE Gateway controller (cluster gateway_api_config.channel CHANNEL_STANDARD)"
        if c.cfg.platform_spec.cloud == "gcp"
        else "install a Gateway API implementation (e.g. the AWS Load Balancer Controller's Gateway API support)"
    )
    return Finding("not met", f"gpuplane installs no Gateway API implementation: {step}")


def inference_ingress(c: Ctx) -> Finding:
    return Finding("not met", "install a Gateway API Inference Extension implementation (an InferencePool controller)")


def fast_network(c: Ctx) -> Finding:
    fabrics = [p.name for p in c.cfg.gpuPools if p.network in ("efa", "gpudirect")]
    ev = c.chart("aws-efa-k8s-device-plugin") + c.types("kubernetes:networking.gke.io/v1:Network")
    if fabrics and ev:
        return Finding("met", f"EFA or GPUDirect NICs exposed to pods on {', '.join(fabrics)}", ev)
    return Finding("not met", "no pool has a multi-node fabric: set gpuPools[].network (efa, gpudirect)")


def disaggregated(c: Ctx) -> Finding:
    return Finding(
        "manual",
        "install llm-d, Dynamo or vLLM with separate prefill and decode Deployments; place each with placement()",
    )


def gang(c: Ctx) -> Finding:
    return _found(
        c.chart("kueue"),
        "Kueue admits each job's pods all or nothing (waitForPodsReady)",
        "set gpuplane:queues: gpuplane installs Kueue with all-or-nothing admission",
    )


def cluster_autoscaling(c: Ctx) -> Finding:
    ev = (
        c.chart("cluster-autoscaler", "karpenter")
        + c.types("kubernetes:karpenter.sh/v1:NodePool", "gcp:container/nodePool:NodePool")
        + c.autopilot()
        + c.of(
            lambda r: (
                r.type == "gcp:container/cluster:Cluster"
                and bool((r.inputs.get("clusterAutoscaling") or {}).get("enabled"))
            )
        )
        + c.of(lambda r: r.type == "eks:index:Cluster" and bool((r.inputs.get("autoMode") or {}).get("enabled")))
    )
    return _found(ev, f"{c.cfg.platform_spec.provisioning}: pending GPU pods add nodes of their pool", "no autoscaler")


def pod_autoscaling(c: Ctx) -> Finding:
    scaled = c.types("kubernetes:keda.sh/v1alpha1:ScaledObject")
    if c.chart("keda") and scaled:
        signals = sorted(
            {w.metric.name or w.metric.kind for w in (c.cfg.autoscaling.workloads if c.cfg.autoscaling else [])}
        )
        how = (
            "KEDA's external metrics API feeds the HorizontalPodAutoscalers of GPU Deployments from Prometheus queries "
            f"({', '.join(signals) or 'GPU or serving metrics'}; gpuplane:autoscaling, docs/autoscaling.md)"
        )
        return Finding("met", how, c.chart("keda") + scaled)
    ev = c.chart("keda", "prometheus-adapter")
    return _found(
        ev,
        "a custom metrics API serves the GPU series to HorizontalPodAutoscalers",
        "no custom or external metrics API is installed: set gpuplane:autoscaling (KEDA on a serving or GPU "
        "metric, docs/autoscaling.md; CPU-based HPA works on GPU pods)",
    )


def accelerator_metrics(c: Ctx) -> Finding:
    p = c.cfg.platform_spec
    ev = c.chart("gpu-operator", "dcgm-exporter") + c.types(
        "kubernetes:monitoring.coreos.com/v1:ServiceMonitor", "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
    )
    dcgm = bool(c.chart("gpu-operator", "dcgm-exporter")) or c.cfg.monitoring.integration == "gke-managed"
    what = (
        "DCGM: per-GPU utilisation, memory, temperature, power and interconnect"
        if dcgm
        else "GKE's device plugin metrics: per-GPU duty cycle and memory"
    )
    how = f"{p.metrics}; {what} (Prometheus exposition)"
    if ev or p.metrics == Source.PLATFORM:
        return Finding("met", how, ev or c.gpu_nodes())
    return Finding("not met", "no GPU metrics exporter in the plan")


def service_metrics(c: Ctx) -> Finding:
    integration = c.cfg.monitoring.integration
    if integration == "scrape-config":
        return Finding(
            "manual",
            "your Prometheus must discover workload pods (kubernetes_sd_configs); gpuplane "
            "adds only the GPU job (set monitoring.integration: install for a full stack)",
        )
    ev = c.chart("kube-prometheus-stack", "prometheus-operator-crds") + c.types(
        "kubernetes:monitoring.googleapis.com/v1:PodMonitoring", "gcp:container/cluster:Cluster"
    )
    objects = "PodMonitoring / ClusterPodMonitoring" if integration == "gke-managed" else "ServiceMonitor / PodMonitor"
    return _found(ev, f"{integration}: any workload is scraped through {objects} objects", "no Prometheus integration")


def secure_access(c: Ctx) -> Finding:
    p = c.cfg.platform_spec
    plugin = c.chart("gpu-operator", "nvidia-device-plugin", "dra-driver-nvidia-gpu")
    if p.cloud == "gcp":
        how = (
            f"GPUs reach containers only through the device plugin ({p.device_plugin}) or DRA claims: GKE's plugin "
            "mounts the device nodes of the GPUs a container was given; privileged pods (gpuplane's own agents and "
            "checks) see all"
        )
        return Finding("met", how, plugin or c.gpu_nodes())
    how = (
        f"GPUs are allocated through the device plugin ({p.device_plugin}) or DRA claims, but with the NVIDIA "
        "container toolkit's defaults an unprivileged pod that sets NVIDIA_VISIBLE_DEVICES=all sees every GPU: set the "
        "toolkit's accept-nvidia-visible-devices-envvar-when-unprivileged to false and the device plugin's "
        "deviceListStrategy to volume-mounts or cdi, and verify with a pod that asks for none"
    )
    return Finding("manual", how, plugin)


def robust_controller(c: Ctx) -> Finding:
    ev = c.chart("kueue", "gpu-operator", "karpenter")
    names = sorted({e.rsplit(" ", 1)[-1] for e in ev})
    return _found(
        ev,
        f"operators with CRDs and admission webhooks run and reconcile: {', '.join(names)}",
        "install an AI operator with CRDs and webhooks (e.g. Kueue via gpuplane:queues, KubeRay, Kubeflow Trainer)",
        "manual",
    )


RULES: dict[str, Callable[[Ctx], Finding]] = {
    "driver_runtime_management": driver_runtime,
    "gpu_sharing": gpu_sharing,
    "virtualized_accelerator": virtualized,
    "ai_inference": ai_inference,
    "advanced_inference_ingress": inference_ingress,
    "high_performance_networking": fast_network,
    "disaggregated_inference": disaggregated,
    "gang_scheduling": gang,
    "cluster_autoscaling": cluster_autoscaling,
    "pod_autoscaling": pod_autoscaling,
    "accelerator_metrics": accelerator_metrics,
    "ai_service_metrics": service_metrics,
    "secure_accelerator_access": secure_access,
    "robust_controller": robust_controller,
}


def report(cfg: StackConfig, resources: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per checklist requirement, in the checklist's order."""
    ctx = Ctx(cfg, resources)
    rows = []
    for req in CHECKLIST:
        f = RULES[req.id](ctx)
        rows.append(
            {
                "section": req.section,
                "id": req.id,
                "level": req.level,
                "status": f.status,
                "how": f.how,
                "evidence": list(f.evidence),
            }
        )
    return rows


def to_text(stack: str, rows: list[dict[str, Any]]) -> str:
    lines = [f"CNCF Kubernetes AI Conformance {VERSION} ({SOURCE}) for stack {stack}:", ""]
    lines.append("| requirement | level | status | how |")
    lines.append("|---|---|---|---|")
    for r in rows:
        ev = f" ({len(r['evidence'])} resources)" if r["evidence"] else ""
        lines.append(f"| `{r['id']}` | {r['level']} | {r['status']} | {r['how']}{ev} |")
    must = [r for r in rows if r["level"] == "MUST"]
    met = sum(1 for r in must if r["status"] == "met")
    lines += ["", f"MUST: {met} of {len(must)} met by the plan."]
    return "\n".join(lines)


__all__ = ["RULES", "Finding", "report", "to_text"]
