"""Volumes and pod identities in the deploy simulator: a claim binds (its StorageClass exists, or its static volume
is in the plan and reserved for it), a volume's CSI driver is installed on its cluster, and pods signing in through
EKS Pod Identity have the agent and one association per service account. Each rule cites its source."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..runner import PlannedResource
from .clusters import _cluster_for_provider, cluster_of
from .graph import DeployGraph, provider_urn

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
ADDON = "aws:eks/addon:Addon"
POD_IDENTITY = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
GKE = "gcp:container/cluster:Cluster"
EKS_TYPES = ("eks:index:Cluster", "aws:eks/cluster:Cluster")

Found = tuple[str, str, str, str]
"""(rule, URN, message, fix), as `Violation` takes them."""


@dataclass(frozen=True)
class CsiDriver:
    """What installs a CSI driver on a cluster of the plan."""

    installed: Any
    """(cluster resource, the plan's EKS add-on names on it) -> whether the cluster runs the driver."""
    how: str
    source: str


def _gke_addon(path: str) -> Any:
    def installed(cluster: PlannedResource, addons: frozenset[str]) -> bool:
        if cluster.type != GKE:
            return False
        i = {**cluster.filled, **cluster.inputs}
        if i.get("enableAutopilot"):  # Autopilot runs GKE's storage drivers itself
            return True
        node: Any = i
        for key in path.split("."):
            node = node.get(key) if isinstance(node, Mapping) else None
        return node is True

    return installed


def _eks_addon(name: str) -> Any:
    def installed(cluster: PlannedResource, addons: frozenset[str]) -> bool:
        return cluster.type in EKS_TYPES and name in addons

    return installed


CSI_DRIVERS: Mapping[str, CsiDriver] = MappingProxyType(
    {
        "s3.csi.aws.com": CsiDriver(
            _eks_addon("aws-mountpoint-s3-csi-driver"),
            "the aws-mountpoint-s3-csi-driver EKS add-on",
            "EKS user guide, s3-csi (Mountpoint for Amazon S3 CSI driver add-on)",
        ),
        "gcsfuse.csi.storage.gke.io": CsiDriver(
            _gke_addon("addonsConfig.gcsFuseCsiDriverConfig.enabled"),
            "the cluster's addonsConfig.gcsFuseCsiDriverConfig.enabled (on by default on Autopilot only)",
            "terraform-provider-google container_cluster docs `gcs_fuse_csi_driver_config` (disabled by default for "
            "Standard clusters)",
        ),
    }
)
"""CSI driver name -> what installs it. A volume of a driver nobody installed leaves its pods ContainerCreating."""

DEFAULT_STORAGE_CLASSES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        # GKE creates standard-rwo (default), standard and premium-rwo with the PD CSI driver
        # (cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/gce-pd-csi-driver)
        GKE: frozenset({"standard-rwo", "standard", "premium-rwo"}),
        # EKS clusters from 1.30 have no StorageClass at all (EKS user guide, storage classes: "gp2 ... no longer
        # created for clusters with Kubernetes version 1.30 and later")
        "eks:index:Cluster": frozenset(),
        "aws:eks/cluster:Cluster": frozenset(),
    }
)
"""Cluster type -> the StorageClasses it is created with."""


def _cluster(g: DeployGraph, r: PlannedResource) -> PlannedResource | None:
    provider = provider_urn(r.provider)
    return _cluster_for_provider(g, provider) if provider else None


def _spec(r: PlannedResource) -> Mapping[str, Any]:
    spec = r.inputs.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _meta(r: PlannedResource) -> Mapping[str, Any]:
    meta = r.inputs.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def check_claims_bind(g: DeployGraph) -> Iterator[Found]:
    """A claim with a StorageClass needs that class on its cluster (created in the plan, or one the cluster comes
    with); a static claim (`storageClassName: ""`) needs its volume in the plan, reserved for it (`claimRef`), with
    its access modes, created first. Otherwise the claim stays Pending and so do its pods (Kubernetes docs,
    Persistent Volumes: "Binding", "Reserving a PersistentVolume")."""
    for r in g.plan.resources:
        if r.type != PVC:
            continue
        spec, cluster = _spec(r), _cluster(g, r)
        same = [v for v in g.plan.resources if v.provider == r.provider]
        klass = spec.get("storageClassName")
        if klass:
            made = {str(_meta(s).get("name")) for s in same if s.type == STORAGE_CLASS}
            built_in = DEFAULT_STORAGE_CLASSES.get(cluster.type, frozenset()) if cluster is not None else frozenset()
            if klass not in made | built_in:
                yield (
                    "claim-binds",
                    r.urn,
                    f"StorageClass {klass!r} is neither in the plan nor one the cluster comes with "
                    f"({', '.join(sorted(built_in)) or 'none'}): the claim would stay Pending",
                    "create the StorageClass, or name one the cluster has",
                )
            continue
        name = spec.get("volumeName")
        volumes = [v for v in same if v.type == PV and _meta(v).get("name") == name]
        want = {"namespace": _meta(r).get("namespace", "default"), "name": _meta(r).get("name")}
        problem = ""
        if not volumes:
            problem = f"names volume {name!r}, which is not in the plan: the claim would stay Pending"
        else:
            v = volumes[0]
            ref = _spec(v).get("claimRef") or {}
            if {k: ref.get(k) for k in want} != want:
                problem = f"volume {name} is reserved for {ref.get('namespace')}/{ref.get('name')}, not this claim"
            elif not set(spec.get("accessModes") or []) <= set(_spec(v).get("accessModes") or []):
                problem = f"volume {name} does not offer the claim's access modes {spec.get('accessModes')}"
            elif (_spec(v).get("storageClassName") or "") != "":
                problem = (
                    f"volume {name} has a StorageClass; a claim with storageClassName '' binds only to one without"
                )
            elif not g.waits_for(r.urn, v.urn):
                problem = f"does not wait for volume {name}: the claim may be created first and bind to another"
        if problem:
            yield ("claim-binds", r.urn, problem, "create the volume (reserved with claimRef) before the claim")


def _addons(g: DeployGraph, cluster: PlannedResource) -> frozenset[str]:
    return frozenset(
        str(a.inputs.get("addonName")) for a in g.plan.resources if a.type == ADDON and cluster_of(g.plan, a) is cluster
    )


def check_volume_drivers(g: DeployGraph) -> Iterator[Found]:
    """Every CSI volume's driver runs on its cluster (`CSI_DRIVERS`)."""
    for r in g.plan.resources:
        if r.type != PV:
            continue
        csi = _spec(r).get("csi")
        driver = str(csi.get("driver")) if isinstance(csi, Mapping) else None
        cluster = _cluster(g, r)
        if driver is None or cluster is None:
            continue
        known = CSI_DRIVERS.get(driver)
        if known is None or not known.installed(cluster, _addons(g, cluster)):
            how = known.how if known is not None else "nothing in the plan"
            yield (
                "volume-driver-installed",
                r.urn,
                f"CSI driver {driver} is not installed on {cluster.name} ({how}): pods mounting it would never start",
                f"install {how}" if known is not None else "install the driver, or use one gpuplane knows",
            )


def _agent(g: DeployGraph, cluster: PlannedResource) -> bool:
    """The EKS Pod Identity agent runs: its add-on, or Auto Mode's nodes (EKS user guide, pod-id-agent-setup)."""
    i = {**cluster.filled, **cluster.inputs}
    auto = any(isinstance(i.get(k), Mapping) and i[k].get("enabled") is True for k in ("autoMode", "computeConfig"))
    return auto or "eks-pod-identity-agent" in _addons(g, cluster)


def check_pod_identities(g: DeployGraph) -> Iterator[Found]:
    """Pod Identity associations: one per cluster, namespace and service account (EKS refuses a second:
    CreatePodIdentityAssociation, ResourceInUseException), on a cluster running the Pod Identity agent (without it
    the pods' SDKs find no credentials)."""
    seen: dict[tuple[str, str, str], str] = {}
    for r in g.plan.resources:
        if r.type != POD_IDENTITY:
            continue
        cluster = cluster_of(g.plan, r)
        ns, sa = str(r.inputs.get("namespace")), str(r.inputs.get("serviceAccount"))
        key = (cluster.urn if cluster else str(r.inputs.get("clusterName")), ns, sa)
        if key in seen:
            yield (
                "pod-identity-unique",
                r.urn,
                f"{key[1]}/{key[2]} already has an association ({seen[key]}): EKS refuses a second one",
                "give the service account one role with every policy it needs",
            )
        seen.setdefault(key, r.urn)
        if cluster is not None and not _agent(g, cluster):
            yield (
                "pod-identity-agent",
                r.urn,
                f"{cluster.name} runs no EKS Pod Identity agent: {key[1]}/{key[2]}'s pods would get no credentials",
                "install the eks-pod-identity-agent add-on (Auto Mode clusters have it)",
            )
