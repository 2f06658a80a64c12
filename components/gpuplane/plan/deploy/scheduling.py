"""Can every pod gpuplane configures land on a node the stack has? Nodes and pod templates as data.

A node *shape* is what a node of a pool, node group or NodePool will carry: labels (each a set of
possible values, or any value) and taints. Pod templates come from the Kubernetes workloads gpuplane
emits and from the Helm releases' values, merged over the chart defaults that decide scheduling
(`CHART_PODS`, read from the pinned charts' values.yaml).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ...catalog.images import arch_of
from ..mocks_engine import kubernetes_name
from ..runner import Plan, PlannedResource
from .chart_pods import (
    ADDON_PODS as ADDON_PODS,
)
from .chart_pods import (  # re-exported: the simulator's tables stay readable here
    CHART_PODS as CHART_PODS,
)
from .chart_pods import (
    ChartPod as ChartPod,
)
from .chart_pods import (
    chart_key as chart_key,
)
from .chart_pods import (
    efa_plugin_affinity as efa_plugin_affinity,
)
from .graph import at_path, switch

ANY: frozenset[str] = frozenset({"*"})
"""Any value of a label (a Karpenter `Exists` requirement, a node name, a zone)."""

Taint = tuple[str, str, str]


@dataclass(frozen=True)
class NodeShape:
    """What every node of one pool/group/NodePool carries."""

    source: str
    labels: Mapping[str, frozenset[str]]
    taints: tuple[Taint, ...] = ()
    wildcard: bool = False
    """Autopilot: the platform makes a node for whatever a pod asks (within its rules)."""


COMMON_LABELS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "kubernetes.io/os": frozenset({"linux"}),
        "kubernetes.io/hostname": ANY,
        "topology.kubernetes.io/zone": ANY,
        "topology.kubernetes.io/region": ANY,
    }
)
"""Labels the kubelet and cloud controller set on every node (kubernetes.io well-known labels)."""

EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}

AUTO_MODE_BUILTIN: tuple[NodeShape, ...] = (
    NodeShape(
        "EKS Auto Mode built-in NodePool general-purpose",
        {
            "karpenter.sh/nodepool": frozenset({"general-purpose"}),
            "karpenter.sh/capacity-type": frozenset({"on-demand"}),
            "eks.amazonaws.com/compute-type": frozenset({"auto"}),
            "kubernetes.io/arch": frozenset({"amd64"}),
        },
    ),
    NodeShape(
        "EKS Auto Mode built-in NodePool system",
        {
            "karpenter.sh/nodepool": frozenset({"system"}),
            "karpenter.sh/capacity-type": frozenset({"on-demand"}),
            "eks.amazonaws.com/compute-type": frozenset({"auto"}),
            "kubernetes.io/arch": frozenset({"amd64", "arm64"}),
        },
        (("CriticalAddonsOnly", "", "NoSchedule"),),
    ),
)
"""EKS user guide, "Built-in NodePools" (create-node-pool / set-builtin-node-pools): `general-purpose`
(on-demand, amd64, no taints) and `system` (amd64 and arm64, tainted `CriticalAddonsOnly:NoSchedule`)."""

AUTOPILOT = NodeShape("GKE Autopilot (nodes provisioned per pod)", {}, wildcard=True)


def _requirements(reqs: list[dict[str, Any]]) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for r in reqs or []:
        if r.get("operator") == "In":
            out[r["key"]] = frozenset(str(v) for v in r.get("values", []))
        elif r.get("operator") in ("Exists", "NotIn", "Gt", "Lt"):
            out[r["key"]] = ANY
    return out


def _karpenter_pool(r: PlannedResource) -> list[NodeShape]:
    spec = r.inputs.get("spec", {}).get("template", {})
    labels = {
        **_requirements(spec.get("spec", {}).get("requirements", [])),
        **{k: frozenset({str(v)}) for k, v in (spec.get("metadata", {}).get("labels") or {}).items()},
        "karpenter.sh/nodepool": frozenset({kubernetes_name(r.inputs.get("metadata"), r.name)}),
    }
    # Karpenter labels every node with its instance type and architecture (well-known labels), whatever the
    # requirements constrain them to
    for key in ("node.kubernetes.io/instance-type", "kubernetes.io/arch"):
        labels.setdefault(key, ANY)
    # ... and its capacity type, on-demand where the requirements leave it open (Karpenter docs, NodePools:
    # "karpenter.sh/capacity-type ... If not included, ... default to on-demand")
    labels.setdefault("karpenter.sh/capacity-type", frozenset({"on-demand"}))
    if spec.get("spec", {}).get("nodeClassRef", {}).get("group") == "eks.amazonaws.com":
        labels["eks.amazonaws.com/compute-type"] = frozenset({"auto"})
    taints = tuple((t["key"], str(t.get("value", "")), t["effect"]) for t in spec.get("spec", {}).get("taints") or [])
    return [NodeShape(r.urn, labels, taints)]


def _ami_arch(ami_type: str) -> frozenset[str]:
    if "ARM_64" in ami_type:
        return frozenset({"arm64"})
    return frozenset({"amd64"}) if "x86_64" in ami_type else ANY


def _managed_node_group(r: PlannedResource) -> list[NodeShape]:
    i = r.inputs
    labels = {
        **{k: frozenset({str(v)}) for k, v in (i.get("labels") or {}).items()},
        # A prefixed name is completed by the provider at create: nothing can select it in advance.
        "eks.amazonaws.com/nodegroup": frozenset({str(i["nodeGroupName"])}) if "nodeGroupName" in i else ANY,
        "eks.amazonaws.com/capacityType": frozenset({str(i.get("capacityType", "ON_DEMAND"))}),
        "node.kubernetes.io/instance-type": frozenset(i.get("instanceTypes") or []) or ANY,
        # the AMI type names its architecture (botocore eks AMITypes: `..._ARM_64_...` or `..._x86_64_...`)
        "kubernetes.io/arch": _ami_arch(str(i.get("amiType", ""))),
    }
    taints = tuple((t["key"], str(t.get("value", "")), EFFECTS[t["effect"]]) for t in i.get("taints") or [])
    return [NodeShape(r.urn, labels, taints)]


GKE_SHARING_LABELS = {"TIME_SHARING": "time-sharing", "MPS": "mps"}
"""GKE's node label value per `gpuSharingStrategy` (GKE docs, "Share GPUs with multiple workloads using GPU
time-sharing" / "... NVIDIA MPS": `cloud.google.com/gke-gpu-sharing-strategy=time-sharing|mps`)."""


def gke_accelerator_labels(accelerators: list[dict[str, Any]]) -> dict[str, str]:
    """Labels GKE puts on a GPU node from its node pool's accelerator config: the accelerator; sharing
    (`gke-gpu-sharing-strategy`, `gke-max-shared-clients-per-gpu`) and MIG (`gke-gpu-partition-size`), per the GKE
    GPU sharing docs; and `gke-gpu-driver-version` (`default` / `latest`) where GKE installs the driver, which a
    pool with installation disabled lacks (GKE "Install NVIDIA GPU drivers"; the manual installer DaemonSet selects
    on its absence, container-engine-accelerators nvidia-driver-installer/cos/daemonset-preloaded.yaml)."""
    if not accelerators:
        return {}
    a = accelerators[0]
    out = {"cloud.google.com/gke-accelerator": str(a.get("type"))}
    sharing = a.get("gpuSharingConfig") or {}
    if sharing:
        out["cloud.google.com/gke-gpu-sharing-strategy"] = GKE_SHARING_LABELS[str(sharing["gpuSharingStrategy"])]
        out["cloud.google.com/gke-max-shared-clients-per-gpu"] = str(sharing["maxSharedClientsPerGpu"])
    if a.get("gpuPartitionSize"):
        out["cloud.google.com/gke-gpu-partition-size"] = str(a["gpuPartitionSize"])
    version = str((a.get("gpuDriverInstallationConfig") or {}).get("gpuDriverVersion") or "")
    if version in ("DEFAULT", "LATEST"):
        out["cloud.google.com/gke-gpu-driver-version"] = version.lower()
    return out


def _gke_node_pool(r: PlannedResource) -> list[NodeShape]:
    nc = r.inputs.get("nodeConfig", {})
    labels = {
        **{k: frozenset({str(v)}) for k, v in (nc.get("labels") or {}).items()},
        "cloud.google.com/gke-nodepool": frozenset({str(r.inputs.get("name", r.name))}),
        "node.kubernetes.io/instance-type": frozenset({str(nc.get("machineType", "*"))}),
        "kubernetes.io/arch": frozenset({"amd64"}),
    }
    for key, value in gke_accelerator_labels(nc.get("guestAccelerators") or []).items():
        labels[key] = frozenset({value})
    if arch_of("gcp", str(nc.get("machineType", ""))) == "arm64":
        labels["kubernetes.io/arch"] = frozenset({"arm64"})
    if nc.get("spot"):
        labels["cloud.google.com/gke-spot"] = frozenset({"true"})
    taints = tuple((t["key"], str(t.get("value", "")), EFFECTS[t["effect"]]) for t in nc.get("taints") or [])
    return [NodeShape(r.urn, labels, taints)]


def _gke_cluster(r: PlannedResource) -> list[NodeShape]:
    """Autopilot makes nodes per pod; node auto-provisioning makes GPU pools per accelerator in its
    resource limits, tainted `nvidia.com/gpu=present:NoSchedule` (and the spot taint for spot pods),
    and general-purpose pools for the rest (GKE docs, node auto-provisioning: GPU and Spot VMs)."""
    i = r.inputs
    if i.get("enableAutopilot"):
        return [AUTOPILOT]
    ca = i.get("clusterAutoscaling") or {}
    if not ca.get("enabled"):
        return []
    gpus = [x["resourceType"] for x in ca.get("resourceLimits", []) if str(x["resourceType"]).startswith("nvidia-")]
    shapes = [NodeShape(f"{r.urn} (NAP general-purpose)", {"kubernetes.io/arch": frozenset({"amd64"})})]
    for g in gpus:
        labels = {"cloud.google.com/gke-accelerator": frozenset({g}), "cloud.google.com/gke-nodepool": ANY}
        shapes.append(NodeShape(f"{r.urn} (NAP {g})", labels, (("nvidia.com/gpu", "present", "NoSchedule"),)))
        spot = {**labels, "cloud.google.com/gke-spot": frozenset({"true"})}
        taints = (("nvidia.com/gpu", "present", "NoSchedule"), ("cloud.google.com/gke-spot", "true", "NoSchedule"))
        shapes.append(NodeShape(f"{r.urn} (NAP {g}, spot)", spot, taints))
    return shapes


def _compute_class(r: PlannedResource) -> list[NodeShape]:
    """Nodes GKE auto-creates for a ComputeClass (NAP; Autopilot is a wildcard anyway): labelled and tainted
    with the class (`cloud.google.com/compute-class`, GKE docs "About custom ComputeClasses"), with a GPU
    priority's accelerator and GKE's GPU taint, and spot's label and taint on a spot priority."""
    name = str(at_path(r.inputs, "metadata.name"))
    shapes = []
    priorities = at_path(r.inputs, "spec.priorities")
    for p in priorities if isinstance(priorities, list) else []:
        labels: dict[str, frozenset[str]] = {
            "cloud.google.com/compute-class": frozenset({name}),
            "cloud.google.com/gke-nodepool": ANY,
            "kubernetes.io/arch": frozenset({"amd64"}),
        }
        taints: list[Taint] = [("cloud.google.com/compute-class", name, "NoSchedule")]
        if p.get("gpu"):
            labels["cloud.google.com/gke-accelerator"] = frozenset({str(p["gpu"]["type"])})
            taints.append(("nvidia.com/gpu", "present", "NoSchedule"))
        if p.get("spot"):
            labels["cloud.google.com/gke-spot"] = frozenset({"true"})
            taints.append(("cloud.google.com/gke-spot", "true", "NoSchedule"))
        shapes.append(NodeShape(f"{r.urn} (ComputeClass {name})", labels, tuple(taints)))
    return shapes


def _eks_cluster(r: PlannedResource) -> list[NodeShape]:
    return list(AUTO_MODE_BUILTIN) if (r.inputs.get("autoMode") or {}).get("enabled") else []


NODE_SOURCES: Mapping[str, Callable[[PlannedResource], list[NodeShape]]] = MappingProxyType(
    {
        "kubernetes:karpenter.sh/v1:NodePool": _karpenter_pool,
        "eks:index:ManagedNodeGroup": _managed_node_group,
        "aws:eks/nodeGroup:NodeGroup": _managed_node_group,  # `EksGpuNodeGroups` (same EKS API inputs)
        "gcp:container/nodePool:NodePool": _gke_node_pool,
        "gcp:container/cluster:Cluster": _gke_cluster,
        "eks:index:Cluster": _eks_cluster,
        "kubernetes:cloud.google.com/v1:ComputeClass": _compute_class,
    }
)
"""Resource type -> the node shapes it brings (platform-provided ones included)."""


def node_shapes(plan: Plan, resources: list[PlannedResource] | None = None) -> list[NodeShape]:
    out: list[NodeShape] = []
    for r in resources if resources is not None else plan.resources:
        source = NODE_SOURCES.get(r.type)
        for shape in source(r) if source is not None else []:
            out.append(NodeShape(shape.source, {**COMMON_LABELS, **shape.labels}, shape.taints, shape.wildcard))
    return out


# --- Pod templates ---------------------------------------------------------------------------------------


def merge(base: Any, over: Any) -> Any:
    """Helm's values merge: maps merge key by key, anything else (lists included) is replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = merge(base.get(k), v) if k in base else v
        return out
    return over if over is not None else base


@dataclass(frozen=True)
class PodTemplate:
    """Where a pod would run: `urn` and a human name of the template, and its scheduling constraints."""

    urn: str
    name: str
    spec: Mapping[str, Any]
    daemonset: bool = False
    """A DaemonSet's template: it must run on every node it selects."""
    optional: bool = False
    """It may select no node at all (`ChartPod.anywhere_or_nowhere`)."""


WORKLOAD_SPEC = {
    "Deployment": "spec.template.spec",
    "StatefulSet": "spec.template.spec",
    "DaemonSet": "spec.template.spec",
    "ReplicaSet": "spec.template.spec",
    "Job": "spec.template.spec",
    "CronJob": "spec.jobTemplate.spec.template.spec",
    "Pod": "spec",
}


def _values_pods(
    r: PlannedResource, values: Mapping[str, Any], pods: tuple[ChartPod, ...], where: str
) -> Iterator[PodTemplate]:
    """The pod templates of a chart (or EKS add-on) from its values: the chart's defaults at each pod's path,
    merged with what the values set there."""
    for pod in pods:
        if pod.enabled is not None and not switch(values, *pod.enabled):
            continue
        found = at_path(values, pod.path) if pod.path else values
        here: dict[str, Any] = found if isinstance(found, dict) else {}
        spec = {k: merge(pod.defaults.get(k), here.get(k)) for k in ("nodeSelector", "tolerations", "affinity")}
        if pod.derive is not None:
            spec.update(pod.derive(here))
        at = f"{where} `{pod.path}`" if pod.path else f"top-level {where}"
        yield PodTemplate(r.urn, f"{r.name}: {pod.name} ({at})", spec, pod.daemonset, pod.anywhere_or_nowhere)


def pod_templates(plan: Plan) -> Iterator[PodTemplate]:
    for r in plan.resources:
        if r.type == "kubernetes:helm.sh/v3:Release":
            pods = CHART_PODS.get(chart_key(str(r.inputs.get("chart", ""))), ())
            yield from _values_pods(r, r.inputs.get("values") or {}, pods, "values")
        elif r.type == "aws:eks/addon:Addon" and str(r.inputs.get("addonName")) in ADDON_PODS:
            try:
                values = json.loads(str(r.inputs.get("configurationValues") or "{}"))
            except ValueError:
                values = {}
            yield from _values_pods(r, values, ADDON_PODS[str(r.inputs["addonName"])], "configurationValues")
        elif r.type.startswith("kubernetes:") and r.type.rsplit(":", 1)[-1] in WORKLOAD_SPEC:
            pod_spec = at_path(r.inputs, WORKLOAD_SPEC[r.type.rsplit(":", 1)[-1]])
            if isinstance(pod_spec, dict):
                yield PodTemplate(r.urn, r.name, pod_spec, r.type.endswith(":DaemonSet"))


# --- Matching --------------------------------------------------------------------------------------------


def tolerated(tolerations: list[dict[str, Any]], taint: Taint) -> bool:
    key, value, effect = taint
    for t in tolerations or []:
        if t.get("effect") not in (None, "", effect):
            continue
        if t.get("operator") == "Exists" and t.get("key") in (None, "", key):
            return True
        if t.get("operator", "Equal") == "Equal" and t.get("key") == key and str(t.get("value", "")) == value:
            return True
    return False


def _has(shape: NodeShape, key: str) -> frozenset[str] | None:
    return shape.labels.get(key)


def _expression(shape: NodeShape, e: Mapping[str, Any]) -> bool:
    vals = _has(shape, e["key"])
    want = {str(v) for v in e.get("values", [])}
    op = e["operator"]
    if op == "In":
        return vals is not None and (vals == ANY or bool(vals & want))
    if op == "NotIn":
        return vals is None or vals == ANY or bool(vals - want)
    if op == "Exists":
        return vals is not None
    if op == "DoesNotExist":
        return vals is None
    return vals is not None  # Gt/Lt: any numeric label value could satisfy it


def fits(spec: Mapping[str, Any], shape: NodeShape) -> bool:
    """Whether a pod with this nodeSelector, required node affinity and tolerations can run there."""
    if shape.wildcard:
        return True
    return selects(spec, shape) and not untolerated(spec, shape)


def untolerated(spec: Mapping[str, Any], shape: NodeShape) -> list[Taint]:
    """The node's scheduling taints (NoSchedule, NoExecute) the pod does not tolerate."""
    hard = [t for t in shape.taints if t[2] in ("NoSchedule", "NoExecute")]
    return [t for t in hard if not tolerated(spec.get("tolerations") or [], t)]


def selects(spec: Mapping[str, Any], shape: NodeShape) -> bool:
    """Whether the pod's nodeSelector and required node affinity admit the node (taints aside)."""
    for k, v in (spec.get("nodeSelector") or {}).items():
        vals = _has(shape, k)
        if vals is None or (vals != ANY and str(v) not in vals):
            return False
    terms = at_path(spec.get("affinity") or {}, "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(terms, dict) and terms.get("nodeSelectorTerms"):
        if not any(
            all(_expression(shape, e) for e in t.get("matchExpressions", [])) for t in terms["nodeSelectorTerms"]
        ):
            return False
    return True
