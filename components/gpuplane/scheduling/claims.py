"""GPU claims: what a pod on a DRA pool takes instead of `nvidia.com/gpu` limits (a ResourceClaimTemplate and
the pod's `resourceClaims`), and the ComputeDomain a multi-node job on a GB200 / GB300 NVL72 pool shares.

Shapes follow the Kubernetes API (`resource.k8s.io/v1` ResourceClaimTemplate: `spec.spec.devices.requests[]`
with `exactly.deviceClassName`, `allocationMode: ExactCount`, `count`, CEL `selectors`; PodSpec
`resourceClaims[].resourceClaimTemplateName`, container `resources.claims[].name`) and the NVIDIA DRA driver
(DeviceClasses and attributes in `catalog.dra`; ComputeDomain `resource.nvidia.com/v1beta1`: `numNodes`,
`channel.resourceClaimTemplate.name`, whose template the driver's controller creates).
"""

from __future__ import annotations

from typing import Any

from ..args.inputs import GpuNodes
from ..catalog import lookup
from ..catalog.dra import ATTRIBUTE_DOMAIN, GPU_CLASS, MIG_CLASS
from ..config import ConfigError
from .multinode import JOB_LABEL
from .nodes import GPU_LABEL

CLAIM = "gpus"
"""Name of the GPU claim in the pod spec (`resourceClaims[].name`, `resources.claims[].name`)."""
CHANNEL = "channel"
"""Name of the ComputeDomain channel claim in the pod spec."""
COMPUTE_DOMAIN_API = "resource.nvidia.com/v1beta1"


MIG_CONFIG_LABEL = "nvidia.com/mig.config"
"""The node label the gpu-operator's MIG manager partitions a node's GPUs by (a mig-parted config name such as
`all-1g.23gb`; NVIDIA GPU Operator docs, "GPU Operator with MIG"). The DRA driver publishes MIG devices that
exist (static MIG); its DynamicMIG gate, which would create them per claim, is alpha and off."""
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
MIG_ON_GKE = (
    'GKE partitions GPUs only for its own GPU sharing, which a DRA pool can\'t use (GKE "Set up DRA"), and the '
    "driver's DynamicMIG gate is alpha: a GKE DRA pool has no MIG devices to claim"
)


def claims_on(nodes: GpuNodes) -> bool:
    """The pool's pods claim GPUs (DRA) rather than count them."""
    return str(nodes.get("allocation") or "device-plugin") == "dra"


def serves(nodes: GpuNodes) -> bool:
    """The NVIDIA DRA driver's kubelet plugin serves the pool: it claims GPUs or spans NVLink domains."""
    return claims_on(nodes) or bool(nodes.get("nvlink_nodes"))


def _template_name(pool: str, gpus: int, mig: str | None) -> str:
    return f"{pool}-{gpus}x-" + (f"mig-{mig}" if mig else "gpu")


def claim_template(nodes: GpuNodes, gpus: int, mig: str | None = None, selector: str | None = None) -> dict[str, Any]:
    """A ResourceClaimTemplate for `gpus` whole GPUs of the pool (or `gpus` MIG devices of profile `mig`), with
    an optional CEL `selector` on the driver's device attributes (e.g.
    `device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0`)."""
    problems = []
    gpu = lookup(str(dict(nodes["labels"]).get(GPU_LABEL, "")))
    if mig is not None:
        profiles = list(gpu.mig_profiles) if gpu is not None else []
        labels = dict(nodes["labels"])
        if mig not in profiles:
            problems.append(("mig", f"{mig!r} is not a MIG profile of {gpu.name if gpu else 'this GPU'} ({profiles})"))
        elif GKE_ACCELERATOR in labels:
            problems.append(("mig", MIG_ON_GKE))
        elif MIG_CONFIG_LABEL not in labels:
            problems.append(
                (
                    "mig",
                    f"{nodes['pool']}'s GPUs are not partitioned, so there are no {mig} devices to claim: give the "
                    f"pool the gpu-operator MIG manager's label {MIG_CONFIG_LABEL} (e.g. all-{mig}) in its labels",
                )
            )
    if selector is not None and not selector.strip():
        problems.append(("selector", "must be a CEL expression over the device (e.g. device.attributes[...])"))
    if problems:
        raise ConfigError(problems)
    exprs = [f"device.attributes['{ATTRIBUTE_DOMAIN}'].profile == '{mig}'"] if mig else []
    if selector:
        exprs.append(selector)
    exactly: dict[str, Any] = {
        "deviceClassName": MIG_CLASS if mig else GPU_CLASS,
        "allocationMode": "ExactCount",
        "count": gpus,
    }
    if exprs:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": _template_name(nodes["pool"], gpus, mig)},
        "spec": {"spec": {"devices": {"requests": [{"name": CLAIM, "exactly": exactly}]}}},
    }


def claim_fragment(template: dict[str, Any]) -> dict[str, Any]:
    """The pod-spec parts that take the template's claim: `resourceClaims` and the container's `resources.claims`."""
    return {
        "resourceClaims": [{"name": CLAIM, "resourceClaimTemplateName": template["metadata"]["name"]}],
        "claims": [{"name": CLAIM}],
    }


def compute_domain(nodes: GpuNodes, name: str, job_nodes: int) -> dict[str, Any]:
    """A ComputeDomain for a job of `job_nodes` nodes of a GB200 / GB300 pool, and the pod-spec parts every pod
    of the job takes: the channel claim (whose template the driver creates) and a required pod affinity that
    keeps the job's pods in one NVLink domain (nodes with one value of the pool's `nvlink_label`)."""
    span = nodes.get("nvlink_nodes")
    if not span or not nodes.get("nvlink_label"):
        raise ConfigError(
            [("pool", f"{nodes['pool']}'s NVLink domain ends at the node: a ComputeDomain is for GB200 / GB300 pools")]
        )
    if not 1 <= job_nodes <= int(span):
        raise ConfigError([("nodes", f"one NVLink domain of {nodes['pool']} spans 1 to {span} nodes, not {job_nodes}")])
    channel = f"{name}-channel"
    domain = {
        "apiVersion": COMPUTE_DOMAIN_API,
        "kind": "ComputeDomain",
        "metadata": {"name": name},
        # numNodes only sets the domain's Ready status (the CRD: daemons start without waiting for peers).
        "spec": {"numNodes": job_nodes, "channel": {"resourceClaimTemplate": {"name": channel}}},
    }
    affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {JOB_LABEL: name}}, "topologyKey": str(nodes["nvlink_label"])}
        ]
    }
    return {
        "computeDomain": domain,
        "resourceClaims": [{"name": CHANNEL, "resourceClaimTemplateName": channel}],
        "claims": [{"name": CHANNEL}],
        "labels": {JOB_LABEL: name},
        "podAffinity": affinity,
    }


__all__ = ["CHANNEL", "CLAIM", "claim_fragment", "claim_template", "claims_on", "compute_domain", "serves"]
