"""The CNCF Kubernetes AI Conformance checklist, v1.36: each requirement's section, ID and level, restated
from cncf/k8s-ai-conformance @ b2c8969 docs/AIConformance-1.36.yaml (`spec.<section>[].id` / `level`).
`gpuplane conformance` says how a stack meets each (`health.conformance`)."""

from __future__ import annotations

from dataclasses import dataclass

VERSION = "v1.36"
SOURCE = "cncf/k8s-ai-conformance @ b2c8969 docs/AIConformance-1.36.yaml"


@dataclass(frozen=True)
class Requirement:
    section: str
    id: str
    level: str
    """MUST or SHOULD."""
    title: str
    """A short paraphrase of the requirement's description."""


CHECKLIST: tuple[Requirement, ...] = (
    Requirement("accelerators", "driver_runtime_management", "SHOULD", "verifiable driver and runtime installation"),
    Requirement("accelerators", "gpu_sharing", "SHOULD", "at least one GPU sharing strategy"),
    Requirement("accelerators", "virtualized_accelerator", "SHOULD", "virtualized accelerators (vGPU) exposed"),
    Requirement("networking", "ai_inference", "MUST", "Gateway API implementation for inference traffic"),
    Requirement("networking", "advanced_inference_ingress", "SHOULD", "Gateway API Inference Extension"),
    Requirement("networking", "high_performance_networking", "SHOULD", "high-performance pod networking exposed"),
    Requirement("networking", "disaggregated_inference", "SHOULD", "disaggregated (prefill/decode) inference"),
    Requirement("schedulingOrchestration", "gang_scheduling", "MUST", "a gang scheduler (e.g. Kueue) runs"),
    Requirement("schedulingOrchestration", "cluster_autoscaling", "MUST", "node autoscaling on pending GPU pods"),
    Requirement("schedulingOrchestration", "pod_autoscaling", "MUST", "HPA on custom metrics for GPU pods"),
    Requirement("observability", "accelerator_metrics", "MUST", "per-accelerator metrics endpoint"),
    Requirement("observability", "ai_service_metrics", "MUST", "discover and collect workloads' metrics"),
    Requirement("security", "secure_accelerator_access", "MUST", "accelerator access mediated and isolated"),
    Requirement("operator", "robust_controller", "MUST", "a complex AI operator with CRDs and webhooks runs"),
)
"""Every requirement of the checklist, in its order."""

__all__ = ["CHECKLIST", "SOURCE", "VERSION", "Requirement"]
