"""Kueue objects as plain manifests (kueue.x-k8s.io/v1beta2, Kueue v0.19.2), from the pools' `gpu_nodes`.

A ResourceFlavor per pool carries the labels that select the pool's nodes, taken from the very node
affinity `placement()` puts on pods (`placement.affinity_of`), and the pool's taints as `nodeTaints`.
Kueue assigns a flavor only when the pod's required node affinity agrees with the flavor's
`nodeLabels` and its tolerations cover `nodeTaints` (kubernetes-sigs/kueue v0.19.2
pkg/scheduler/flavorassigner/flavorassigner.go, `checkFlavorForPodSets`), and then copies
`nodeLabels` into the pod's nodeSelector (pkg/podset/podset.go `FromAssignment`). So a pod built by
`placement()` for a pool is admissible on that pool's flavor by construction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..args.inputs import GpuNodes, TaintArgs, TaintEffect
from ..args.kueue import KueueTeamArgs, KueueTopologyArgs
from ..catalog.dra import CHANNEL_CLASS, GPU_CLASS, MIG_CLASS
from ..scheduling.nodes import POOL_LABEL, QUEUED_TAINTS
from ..scheduling.placement import affinity_of
from ..text import yamltext

API_VERSION = "kueue.x-k8s.io/v1beta2"
"""The storage version of every Kueue v0.19.2 CRD (config/components/crd/bases)."""
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
"""Label naming a job's LocalQueue (kueue pkg/controller/constants/constants.go `QueueLabel`)."""
POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
"""Plain pods admitted as one gang: the group-name label and the total-count annotation on every pod
(kueue pkg/controller/jobs/pod/constants/constants.go `GroupNameLabel`, `GroupTotalCountAnnotation`)."""
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
"""AdmissionCheck controller of Kueue's ProvisioningRequest check (kueue apis/kueue/v1beta2
provisioningrequestconfig_types.go `ProvisioningRequestControllerName`)."""
QUEUED_CLASS = "queued-provisioning.gke.io"
"""GKE Dynamic Workload Scheduler's ProvisioningRequest class (GKE docs, "Deploy GPUs for batch and AI
workloads with ProvisioningRequest", Kueue section)."""
QUEUED_TAINT = TaintArgs(
    key=QUEUED_TAINTS["gcp"].key, value=QUEUED_TAINTS["gcp"].value, effect=TaintEffect(QUEUED_TAINTS["gcp"].effect)
)
"""Taint GKE puts on queued-provisioning nodes (`nodes.QUEUED_TAINTS`, where pools take it from), as a
`gpu_nodes` taint for pools a user hands `KueueQueues` without it."""
DWS_CHECK = "gpuplane-dws"
"""Name of the AdmissionCheck and its ProvisioningRequestConfig."""
MAX_FLAVOR_TAINTS = 8
"""ResourceFlavor `spec.nodeTaints` maxItems (kueue.x-k8s.io_resourceflavors.yaml v0.19.2)."""


def meta(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}}
    if namespace is not None:
        md["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": md}


def queued(nodes: GpuNodes) -> GpuNodes:
    """A queued-provisioning pool's nodes: its own taints plus GKE's queued taint (placement and flavor
    both read this, so the toleration and the flavor's taint agree)."""
    taints = list(nodes["taints"])
    if all(t["key"] != QUEUED_TAINT["key"] for t in taints):
        taints.append(QUEUED_TAINT)
    out = GpuNodes(**nodes)
    out["taints"] = taints
    return out


def selecting_labels(nodes: GpuNodes) -> dict[str, str]:
    """Labels that select exactly this pool's nodes: the single-valued `In` expressions of its affinity."""
    return {
        e["key"]: str(e["values"][0])
        for e in affinity_of(nodes)
        if e.get("operator") == "In" and len(e.get("values") or []) == 1
    }


def taint_dicts(nodes: GpuNodes) -> list[dict[str, str]]:
    """The pool's taints as Kueue `nodeTaints` (corev1.Taint): TaintArgs' defaults spelled out (value "",
    effect NoSchedule); a TaintEffect is a StrEnum, so `str` is its Kubernetes spelling."""
    return [
        {"key": t["key"], "value": t.get("value", ""), "effect": str(t.get("effect") or "NoSchedule")}
        for t in nodes["taints"]
    ]


def resource_flavor(nodes: GpuNodes, topology: str | None = None) -> dict[str, Any]:
    """The pool's ResourceFlavor, labelled with the pool (`gpuplane.io/pool`) and named after it. On a topology
    the name also carries a digest of the fields Kueue's CRD makes immutable once `topologyName` is set
    (`nodeLabels`, `tolerations`, `topologyName`: kueue.x-k8s.io_resourceflavors.yaml v0.19.2, "... are
    immutable when topologyName is set"). Changing one, or the pool leaving the topology, then makes a new
    flavor, moves the ClusterQueues to it in place and deletes the old one last: an update in place would be
    refused, and a flavor deleted first would stay Terminating until the delete timed out, since Kueue keeps a
    flavor a ClusterQueue names (finalizer `kueue.x-k8s.io/resource-in-use`,
    pkg/controller/core/resourceflavor_controller.go). Joining a topology renames too (Kueue would allow that
    in place; the name follows the fields). Jobs admitted on the old flavor leave the queue's accounting:
    `gpuplane diff` says so (drain the queue first)."""
    spec: dict[str, Any] = {"nodeLabels": selecting_labels(nodes), "nodeTaints": taint_dicts(nodes)}
    name = nodes["pool"]
    if topology is not None:
        spec["topologyName"] = topology
        fixed = {k: spec[k] for k in ("nodeLabels", "topologyName")}  # gpuplane sets no flavor tolerations
        name = f"{name}-{hashlib.sha256(json.dumps(fixed, sort_keys=True).encode()).hexdigest()[:8]}"
    obj = {**meta("ResourceFlavor", name), "spec": spec}
    obj["metadata"]["labels"][POOL_LABEL] = nodes["pool"]
    return obj


def flavor_names(flavors: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Pool -> the name of its ResourceFlavor among `flavors`."""
    return {f["metadata"]["labels"][POOL_LABEL]: f["metadata"]["name"] for f in flavors}


def topology_object(topo: KueueTopologyArgs) -> dict[str, Any]:
    return {**meta("Topology", topo["name"]), "spec": {"levels": [{"nodeLabel": k} for k in topo["levels"]]}}


def provisioning_objects(resources: Sequence[str], max_run_seconds: int | None = None) -> list[dict[str, Any]]:
    """The ProvisioningRequestConfig for GKE queued provisioning and the AdmissionCheck that uses it. Kueue
    copies the config's `parameters` into each ProvisioningRequest (kueue provisioning admission check), and
    GKE reads `maxRunDurationSeconds` there (GKE docs, "Deploy GPUs for batch and AI workloads with
    ProvisioningRequest")."""
    spec: dict[str, Any] = {"provisioningClassName": QUEUED_CLASS, "managedResources": sorted(set(resources))}
    if max_run_seconds is not None:
        spec["parameters"] = {"maxRunDurationSeconds": str(max_run_seconds)}
    config = {**meta("ProvisioningRequestConfig", DWS_CHECK), "spec": spec}
    parameters = {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": DWS_CHECK}
    check = {
        **meta("AdmissionCheck", DWS_CHECK),
        "spec": {"controllerName": PROVISIONING_CONTROLLER, "parameters": parameters},
    }
    return [config, check]


def namespace_of(team: KueueTeamArgs) -> str:
    return team.get("namespace") or team["name"]


def cluster_queue(
    team: KueueTeamArgs,
    nodes: Sequence[GpuNodes],
    cohort: str | None = None,
    queued_pools: Sequence[str] = (),
    flavors: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The team's ClusterQueue: one resource group per resource name, a flavor per pool with its nominal
    quota. In a cohort every pool is listed (0 where the team has no quota), so it can borrow there.
    `flavors` maps a pool to its flavor's name (`flavor_names`; by default the pool's name)."""
    flavor = dict(flavors or {})
    groups: dict[str, list[dict[str, Any]]] = {}
    for n in nodes:
        quota = team["quota"].get(n["pool"])
        if quota is None and cohort is None:
            continue
        res, name = n["resource"], flavor.get(n["pool"], n["pool"])
        groups.setdefault(res, []).append({"name": name, "resources": [{"name": res, "nominalQuota": quota or 0}]})
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace_of(team)}},
        "resourceGroups": [{"coveredResources": [res], "flavors": flavors} for res, flavors in groups.items()],
    }
    if cohort is not None:
        spec["cohortName"] = cohort
        # A lender takes its quota back when it needs it (kueue docs, concepts/cluster_queue "Preemption").
        spec["preemption"] = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    listed = {f["name"] for fl in groups.values() for f in fl}
    on = [flavor.get(p, p) for p in queued_pools if flavor.get(p, p) in listed]
    if on:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": DWS_CHECK, "onFlavors": on}]}
    return {**meta("ClusterQueue", team["name"]), "spec": spec}


def local_queue_of(team: KueueTeamArgs) -> str:
    return team.get("local_queue") or team["name"]


def local_queue(team: KueueTeamArgs) -> dict[str, Any]:
    return {**meta("LocalQueue", local_queue_of(team), namespace_of(team)), "spec": {"clusterQueue": team["name"]}}


def overcommitted(teams: Sequence[KueueTeamArgs], ceilings: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """Pool -> (sum of the teams' nominal quotas, ceiling) where the sum is above the ceiling."""
    out = {}
    for pool, ceiling in ceilings.items():
        total = sum(t["quota"].get(pool, 0) for t in teams)
        if total > ceiling:
            out[pool] = (total, ceiling)
    return out


# --- The chart's values ---------------------------------------------------------------------------------

IMAGE = {"repository": "registry.k8s.io/kueue/kueue", "tag": "v0.19.2", "pullPolicy": "IfNotPresent"}
"""The released image (the chart in git points at a staging tag; the release rewrites it:
kubernetes-sigs/kueue Makefile `IMAGE_REPO`, `GIT_TAG`)."""

CHART_CONFIG: Mapping[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {
        "groupKindConcurrency": {
            "Job.batch": 5,
            "Pod": 5,
            "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1,
        }
    },
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {
        "frameworks": [
            "batch/job",
            "kubeflow.org/mpijob",
            "ray.io/rayjob",
            "ray.io/rayservice",
            "ray.io/raycluster",
            "jobset.x-k8s.io/jobset",
            "workload.codeflare.dev/appwrapper",
            "trainer.kubeflow.org/trainjob",
            "pod",
            "deployment",
            "statefulset",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ]
    },
}
"""The chart's own `managerConfig.controllerManagerConfigYaml` (kueue charts/kueue/values.yaml v0.19.2),
as data: the value is one YAML string, so setting any key means restating it whole."""


DRA_MAPPINGS = (
    {"name": "nvidia.com/gpu", "deviceClassNames": [GPU_CLASS]},
    {"name": "nvidia.com/mig-devices", "deviceClassNames": [MIG_CLASS]},
    {"name": "resource.nvidia.com/compute-domain-channel", "deviceClassNames": [CHANNEL_CLASS]},
)
"""Kueue counts the devices a workload's ResourceClaimTemplates request of a mapped DeviceClass as the named
quota resource (`resources.deviceClassMappings`, apis/config/v1beta2 configuration_types.go; feature gate
KueueDRAIntegration, beta and on by default since 0.18: pkg/features/kube_features.go), and marks a workload
with a claim of an unmapped class inadmissible (pkg/dra/claims.go "DeviceClass %s is not mapped"). So every
class a gpuplane placement claims is mapped: whole GPUs count against the same `nvidia.com/gpu` quota as a
device-plugin pool's; MIG devices and ComputeDomain channels get names of their own, which no ClusterQueue
covers, so `quotaCheckStrategy: IgnoreUndeclared` lets them through unchecked."""


MULTIKUEUE_FRAMEWORKS = ("batch/job", "pod", "deployment", "statefulset")
"""The frameworks of a MultiKueue fleet's Kueue, manager and workers alike: kueue v0.19.2
test/e2e/config/multikueue/baseline/controller_manager_config.yaml. A manager watches every enabled framework with a
MultiKueue adapter on every worker, and one watch that fails (no CRD there, or RBAC) fails the whole connection
(pkg/controller/admissionchecks/multikueue/multikueuecluster.go; extended-shard-0's config: "The MultiKueue remote
client requires every enabled framework to have its CRDs installed on every worker cluster"). These need no CRD."""


def manager_config(
    pods_ready_timeout: str, dra: bool = False, frameworks: Sequence[str] | None = None
) -> dict[str, Any]:
    """The chart's configuration plus gang admission and GPU-only quota:
    - `waitForPodsReady`: an admitted workload whose pods are not all ready within `timeout` is evicted
      and requeued (apis/config/v1beta2 configuration_types.go `WaitForPodsReady`);
    - `resources.quotaCheckStrategy: IgnoreUndeclared`: only resources a ClusterQueue covers (the GPUs)
      count against quota, so CPU and memory requests need no quota (`QuotaCheckIgnoreUndeclared`,
      feature gate QuotaCheckStrategy, beta and on by default in 0.19: pkg/features/kube_features.go);
    - `integrations.frameworks`: `frameworks` where given, else the chart's."""
    resources: dict[str, Any] = {"quotaCheckStrategy": "IgnoreUndeclared"}
    if dra:
        resources["deviceClassMappings"] = [dict(m) for m in DRA_MAPPINGS]
    out = {
        **CHART_CONFIG,
        "waitForPodsReady": {"timeout": pods_ready_timeout, "blockAdmission": False},
        "resources": resources,
    }
    if frameworks is not None:
        out["integrations"] = {"frameworks": list(frameworks)}
    return out


def chart_values(
    pods_ready_timeout: str,
    node_selector: Mapping[str, str],
    tolerations: Sequence[Mapping[str, str]] = (),
    dra: bool = False,
    frameworks: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Values of the kueue chart: the released image, the controller on the system nodes, the config (with
    `dra`: DRA GPU claims counted as `nvidia.com/gpu`; `frameworks`: Kueue's integrations, default the chart's)."""
    manager: dict[str, Any] = {"nodeSelector": dict(node_selector)}
    if tolerations:
        manager["tolerations"] = [dict(t) for t in tolerations]
    return {
        "controllerManager": {**manager, "manager": {"image": dict(IMAGE)}},
        "managerConfig": {
            "controllerManagerConfigYaml": yamltext.dump(
                manager_config(pods_ready_timeout, dra, frameworks), sort_keys=False
            )
        },
    }
