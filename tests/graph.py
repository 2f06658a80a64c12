"""Read facts back out of a planned graph (the engine's view), independent of the code that built it: the
toleration and node-affinity matchers are written here from the Kubernetes API reference, not imported
from the deploy simulator (`tests/test_oracles.py` holds the simulator's to them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from gpuplane.plan import Plan, PlannedResource
from gpuplane.plan.monitor import SECRET

GKE_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
NODE_POOL = "gcp:container/nodePool:NodePool"
RELEASE = "kubernetes:helm.sh/v3:Release"


def kube_objects(plan: Plan) -> Iterator[PlannedResource]:
    """Kubernetes objects gpuplane emits directly (not Helm releases, not providers). A Secret's data, which
    pulumi-kubernetes always marks secret (so the engine view masks the whole map), stands as one masked key."""
    for r in plan.resources:
        if r.custom and r.type.startswith("kubernetes:") and r.type != RELEASE:
            masked = [k for k in ("data", "stringData") if r.inputs.get(k) == SECRET]
            if r.inputs.get("kind") == "Secret" and masked:
                r = dataclasses.replace(r, inputs={**r.inputs, **{k: {"masked": SECRET} for k in masked}})
            yield r


def gpu_node_pools(plan: Plan) -> list[PlannedResource]:
    return [r for r in plan.by_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")]


def node_taints(pool: PlannedResource) -> set[tuple[str, str, str]]:
    """(key, value, Kubernetes effect) of a GKE node pool's taints."""
    return {
        (t["key"], t.get("value", ""), GKE_EFFECTS[t["effect"]]) for t in pool.inputs["nodeConfig"].get("taints", [])
    }


EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
"""The EKS API's Taint effects (botocore eks service-2 TaintEffect) in Kubernetes' spelling."""
MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
POOL = "gpuplane.io/pool"


def gpu_pool_taints(plan: Plan) -> dict[str, set[tuple[str, str, str]]]:
    """gpuplane pool (its `gpuplane.io/pool` node label) -> (key, value, Kubernetes effect) of the taints its
    nodes start with: GKE node pools (`nodeConfig.taints`), EKS managed node groups (`taints`) and Karpenter or
    Auto Mode NodePools (`spec.template.spec.taints`, already in Kubernetes' spelling). GKE's auto-provisioners
    (NAP, Autopilot) taint their nodes themselves and have no entry."""
    out: dict[str, set[tuple[str, str, str]]] = {}
    for r in plan.resources:
        if r.type == NODE_POOL:
            labels, taints = r.inputs["nodeConfig"].get("labels") or {}, node_taints(r)
        elif r.type == MANAGED_NODE_GROUP:
            labels = r.inputs.get("labels") or {}
            taints = {(t["key"], t.get("value", ""), EKS_EFFECTS[t["effect"]]) for t in r.inputs.get("taints") or []}
        elif r.type == KARPENTER_NODE_POOL:
            template = r.inputs["spec"]["template"]
            labels = (template.get("metadata") or {}).get("labels") or {}
            taints = {(t["key"], t.get("value", ""), t["effect"]) for t in template["spec"].get("taints") or []}
        else:
            continue
        if POOL in labels:
            out[labels[POOL]] = taints
    return out


def tolerates(tolerations: list[dict[str, Any]] | None, taint: tuple[str, str, str]) -> bool:
    """Whether tolerations admit a (key, value, effect) taint: written here from the Kubernetes API reference
    (core/v1 Toleration), not the simulator's matcher, so a bug in one is caught by the other.

    - `effect` empty matches every effect, else it must equal the taint's;
    - `operator` defaults to `Equal`: the key and the value must equal the taint's;
    - `Exists` matches any value of the key, and with an empty key every taint."""
    key, value, effect = taint
    for t in tolerations or []:
        if (t.get("effect") or effect) != effect:
            continue
        operator = t.get("operator") or "Equal"
        if operator == "Exists" and (not t.get("key") or t["key"] == key):
            return True
        if operator == "Equal" and t.get("key") == key and (t.get("value") or "") == value:
            return True
    return False


def _expression_holds(e: dict[str, Any], labels: dict[str, str]) -> bool:
    """One NodeSelectorRequirement on a node's labels (core/v1 NodeSelectorRequirement: In, NotIn, Exists,
    DoesNotExist; Gt and Lt compare integers)."""
    key, op, values = e["key"], e["operator"], [str(v) for v in e.get("values") or []]
    here = key in labels
    if op == "In":
        return here and labels[key] in values
    if op == "NotIn":
        return not here or labels[key] not in values
    if op == "Exists":
        return here
    if op == "DoesNotExist":
        return not here
    if op in ("Gt", "Lt"):
        if not here or not labels[key].lstrip("-").isdigit():
            return False
        return int(labels[key]) > int(values[0]) if op == "Gt" else int(labels[key]) < int(values[0])
    raise AssertionError(f"unknown operator {op}")


def matches(affinity: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether required node affinity admits a node with these labels, from the Kubernetes API reference
    (core/v1 NodeSelector: the terms are ORed, a term's matchExpressions ANDed), not the simulator's."""
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms
    return any(all(_expression_holds(e, labels) for e in t.get("matchExpressions") or []) for t in terms)


def children(plan: Plan, parent: PlannedResource) -> list[PlannedResource]:
    return [r for r in plan.resources if r.parent == parent.urn]


def exporter_facts(plan: Plan) -> dict[str, Any]:
    """What the exporter Service and pods will carry, derived from the planned Helm release and the
    charts' templates (read from the charts, not from gpuplane's code):

    - dcgm-exporter chart: selectorLabels = name (chart or nameOverride), instance (release name),
      component (= name); Service port and container port are both named `metrics`; pods add `podLabels`.
    - gpu-operator v26.7.0: Service `nvidia-dcgm-exporter` in the operator namespace, label
      `app: nvidia-dcgm-exporter`, port `gpu-metrics`; pods labelled `app: nvidia-dcgm-exporter`.
    """
    for r in plan.by_type(RELEASE):
        i = r.inputs
        if i["chart"] == "dcgm-exporter":
            name = i["values"].get("nameOverride") or i["chart"]
            sel = {
                "app.kubernetes.io/name": name,
                "app.kubernetes.io/instance": i["name"],
                "app.kubernetes.io/component": name,
            }
            return {
                "role": "endpoints",
                "namespace": i["namespace"],
                "service_labels": sel,
                "service_port": "metrics",
                # The DaemonSet's pod template carries the selector labels (plus podLabels).
                "pod_labels": {**sel, **i["values"].get("podLabels", {})},
                "container_port": "metrics",
            }
        if i["chart"] == "gpu-operator":
            assert i["values"]["dcgmExporter"]["enabled"] is True
            app = {"app": "nvidia-dcgm-exporter"}
            return {
                "role": "endpoints",
                "namespace": i["namespace"],
                "service_labels": app,
                "service_port": "gpu-metrics",
                "pod_labels": app,
                "container_port": "metrics",
            }
    for c in plan.by_type("gcp:container/cluster:Cluster"):
        if c.inputs.get("enableAutopilot"):
            # GKE's own nvidia-gpu-device-plugin DaemonSet (reference README): kube-system, :2112/metrics.
            return {
                "role": "pod",
                "namespace": "kube-system",
                "pod_labels": {"k8s-app": "nvidia-gpu-device-plugin"},
                "pod_port": 2112,
            }
    raise AssertionError("no GPU exporter release in the plan")


def selects(match_labels: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in match_labels.items())


GKE_SHARING = {"TIME_SHARING": "time-sharing", "MPS": "mps"}
EKS_CAPACITY = {"SPOT": "SPOT", "ON_DEMAND": "ON_DEMAND", "CAPACITY_BLOCK": "CAPACITY_BLOCK"}
"""A managed node group's `capacityType` -> its nodes' `eks.amazonaws.com/capacityType` label (EKS user guide,
capacity-blocks-mng: Capacity Block nodes are labelled CAPACITY_BLOCK)."""


Model = tuple[dict[str, set[str]], set[tuple[str, str, str]]]


def node_models(plan: Plan) -> dict[tuple[str, str], Model]:
    """(cluster, pool) -> (label -> values a node of it can carry, its taints), read from the planned node
    pools, node groups or NodePools plus the labels each platform adds to the nodes it creates."""
    models: dict[tuple[str, str], Model] = {}
    for r in gpu_node_pools(plan):  # GKE
        nc = r.inputs["nodeConfig"]
        acc = nc["guestAccelerators"][0]
        labels = {k: {v} for k, v in nc["labels"].items()}
        labels["cloud.google.com/gke-nodepool"] = {r.inputs["name"]}
        labels["cloud.google.com/gke-accelerator"] = {acc["type"]}
        if nc.get("spot"):
            labels["cloud.google.com/gke-spot"] = {"true"}
        if "gpuSharingConfig" in acc:
            sc = acc["gpuSharingConfig"]
            labels["cloud.google.com/gke-gpu-sharing-strategy"] = {GKE_SHARING[sc["gpuSharingStrategy"]]}
            labels["cloud.google.com/gke-max-shared-clients-per-gpu"] = {str(sc["maxSharedClientsPerGpu"])}
        if "gpuPartitionSize" in acc:
            labels["cloud.google.com/gke-gpu-partition-size"] = {acc["gpuPartitionSize"]}
        models[(nc["labels"]["gpuplane.io/cluster"], r.inputs["name"])] = (labels, node_taints(r))
    for r in plan.by_type("eks:index:ManagedNodeGroup"):
        i = r.inputs
        if "gpuplane.io/pool" not in i["labels"]:
            continue
        labels = {k: {v} for k, v in i["labels"].items()}
        labels["eks.amazonaws.com/capacityType"] = {EKS_CAPACITY[i["capacityType"]]}
        if "nodeGroupName" in i:  # a nodeGroupNamePrefix is completed at create, so no label value is known
            labels["eks.amazonaws.com/nodegroup"] = {i["nodeGroupName"]}
        taints = {(t["key"], t.get("value", ""), GKE_EFFECTS[t["effect"]]) for t in i.get("taints", [])}
        models[(i["labels"]["gpuplane.io/cluster"], i["labels"]["gpuplane.io/pool"])] = (labels, taints)
    for r in plan.resources:
        if r.inputs.get("kind") != "NodePool":
            continue
        t = r.inputs["spec"]["template"]
        labels = {k: {v} for k, v in t["metadata"]["labels"].items()}
        labels["karpenter.sh/nodepool"] = {r.inputs["metadata"]["name"]}
        for req in t["spec"]["requirements"]:
            if req["operator"] == "In":
                labels[req["key"]] = set(req["values"])
        taints = {(x["key"], x.get("value", ""), x["effect"]) for x in t["spec"].get("taints", [])}
        models[(t["metadata"]["labels"]["gpuplane.io/cluster"], r.inputs["metadata"]["name"])] = (labels, taints)
    return models


def could_match(affinity: dict[str, Any], labels: dict[str, set[str]]) -> bool:
    """Whether some node of a pool (labels may take any of several values) satisfies required affinity."""
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return any(
        all(e["operator"] == "In" and labels.get(e["key"], set()) & set(e["values"]) for e in term["matchExpressions"])
        for term in terms
    )
