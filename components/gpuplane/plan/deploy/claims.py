"""The deploy simulator's DRA rules: a GPU claim needs its DeviceClass, and a pod that claims GPUs needs nodes
where the DRA driver's kubelet plugin runs.

Upstream facts: a ResourceClaim whose DeviceClass does not exist is never allocated, so its pod stays Pending
(kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation, "DeviceClass"); the NVIDIA DRA
driver's chart creates its DeviceClasses per `resources.<kind>.enabled` (`catalog.dra.DEVICE_CLASSES`); a node's
devices are published only by the kubelet plugin running there (ResourceSlices per node).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ...catalog.dra import DEVICE_CLASSES
from ..runner import PlannedResource
from . import scheduling
from .graph import DeployGraph, at_path, provider_urn, switch

TEMPLATE_TYPE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
DRA_CHART = "dra-driver-nvidia-gpu"

Shapes = Callable[[DeployGraph, str], "list[scheduling.NodeShape] | None"]


def _driver_releases(g: DeployGraph, provider: str) -> list[PlannedResource]:
    return [
        r
        for r in g.plan.resources
        if r.type == "kubernetes:helm.sh/v3:Release"
        and scheduling.chart_key(str(r.inputs.get("chart", ""))) == DRA_CHART
        and provider_urn(r.provider) == provider
    ]


def device_classes(releases: list[PlannedResource]) -> set[str]:
    """DeviceClasses the driver releases create (chart defaults: both kinds on)."""
    out: set[str] = set()
    for r in releases:
        values = r.inputs.get("values") or {}
        for kind, classes in DEVICE_CLASSES.items():
            if switch(values, f"resources.{kind}.enabled", True):
                out.update(classes)
    return out


def _plugin_specs(g: DeployGraph, releases: list[PlannedResource]) -> list[dict[str, Any]]:
    urns = {r.urn for r in releases}
    return [dict(p.spec) for p in scheduling.pod_templates(g.plan) if p.urn in urns and p.daemonset]


def _templates(g: DeployGraph) -> dict[tuple[str, str], PlannedResource]:
    out = {}
    for r in g.plan.resources:
        if r.type == TEMPLATE_TYPE:
            md = r.inputs.get("metadata") or {}
            out[(str(md.get("namespace", "default")), str(md.get("name", "")))] = r
    return out


def _classes_of(template: PlannedResource) -> list[str]:
    found = at_path(template.inputs, "spec.spec.devices.requests")
    requests = found if isinstance(found, list) else []
    return [str(at_path(q, "exactly.deviceClassName")) for q in requests if isinstance(q, dict)]


def check_claims(g: DeployGraph, nodes_for: Shapes) -> Iterator[tuple[str, str, str, str]]:
    """(rule, urn, message, fix) for each claim that can't be allocated."""
    templates = _templates(g)
    for t in templates.values():
        provider = provider_urn(t.provider) or ""
        have = device_classes(_driver_releases(g, provider))
        for cls in _classes_of(t):
            if cls not in have:
                yield (
                    "claim-device-class-exists",
                    t.urn,
                    f"the claim asks for DeviceClass {cls!r}, which nothing on this cluster creates "
                    f"(DRA driver classes here: {', '.join(sorted(have)) or 'none'}): its pods stay Pending",
                    "install the NVIDIA DRA driver with that kind of resource on (a pool with gpuAllocation: dra)",
                )
    for pod in scheduling.pod_templates(g.plan):
        claims = pod.spec.get("resourceClaims") or []
        r = g.by_urn[pod.urn]
        namespace = str(at_path(r.inputs, "metadata.namespace") or "default")
        named = [templates.get((namespace, str(c.get("resourceClaimTemplateName")))) for c in claims]
        if not any(named):
            continue
        provider = provider_urn(r.provider) or ""
        shapes = nodes_for(g, provider) or []
        plugins = _plugin_specs(g, _driver_releases(g, provider))
        served = [s for s in shapes if scheduling.fits(pod.spec, s)]
        unserved = [s for s in served if not any(scheduling.fits(p, s) for p in plugins)]
        if unserved or not served:
            where = ", ".join(s.source.rsplit("::", 1)[-1] for s in unserved) or "no node at all"
            yield (
                "claim-lands-on-dra-pool",
                pod.urn,
                f"{pod.name} claims GPUs through DRA but may land on {where}, where no DRA driver kubelet plugin "
                "publishes devices: its claim is never allocated there",
                "place the pod on a pool with gpuAllocation: dra (gpuplane.placement on that pool)",
            )
