"""Readiness rules of a real `pulumi up`, as data: each table row says what a resource type needs to
exist before it is created, or what must hold of its name, with the upstream source of the claim.

The simulator (`gpuplane.plan.deploy.check`) walks a plan against these tables; nothing here is
per-stack logic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ...catalog.names import AUTONAME_SUFFIX as AUTONAME_SUFFIX  # re-exported: the simulator's tables
from ...catalog.names import GLOBAL_NAMES as GLOBAL_NAMES
from ...catalog.names import PREFIXED_UNIQUE_ID as PREFIXED_UNIQUE_ID
from ...catalog.names import GlobalName as GlobalName

# --- Clusters, and what must wait for one ---------------------------------------------------------------


@dataclass(frozen=True)
class ClusterType:
    """A resource type that is a Kubernetes cluster, and the input that holds its name."""

    name_input: str
    id_format: str
    """How other resources may refer to it by ID (`{name}`, `{project}`, `{location}` from its inputs)."""


CLUSTERS: Mapping[str, ClusterType] = MappingProxyType(
    {
        "eks:index:Cluster": ClusterType("name", "{name}"),
        "aws:eks/cluster:Cluster": ClusterType("name", "{name}"),
        "gcp:container/cluster:Cluster": ClusterType("name", "projects/{project}/locations/{location}/clusters/{name}"),
    }
)


@dataclass(frozen=True)
class ClusterScoped:
    """A cloud resource created inside a cluster: its API call fails until the cluster is ACTIVE, so the
    cluster resource must be among its transitive dependencies (a config string naming it is not)."""

    cluster_input: str
    source: str


_EKS_API = "the EKS API rejects it until the cluster exists (ResourceNotFoundException)"
CLUSTER_SCOPED: Mapping[str, ClusterScoped] = MappingProxyType(
    {
        "aws:eks/addon:Addon": ClusterScoped(
            "clusterName", f"terraform-provider-aws internal/service/eks/addon.go (CreateAddon): {_EKS_API}"
        ),
        "aws:eks/accessEntry:AccessEntry": ClusterScoped(
            "clusterName",
            f"terraform-provider-aws internal/service/eks/access_entry.go (CreateAccessEntry): {_EKS_API}",
        ),
        "aws:eks/podIdentityAssociation:PodIdentityAssociation": ClusterScoped(
            "clusterName",
            "terraform-provider-aws internal/service/eks/pod_identity_association.go (CreatePodIdentityAssociation): "
            + _EKS_API,
        ),
        "aws:eks/nodeGroup:NodeGroup": ClusterScoped(
            "clusterName", f"terraform-provider-aws internal/service/eks/node_group.go (CreateNodegroup): {_EKS_API}"
        ),
        "eks:index:ManagedNodeGroup": ClusterScoped(
            "cluster", "pulumi-eks nodejs/eks/nodes/nodegroup.ts (createManagedNodeGroup reads the cluster's outputs)"
        ),
        "gcp:container/nodePool:NodePool": ClusterScoped(
            "cluster",
            "terraform-provider-google services/container/resource_container_node_pool.go "
            "(nodePools.create on projects/*/locations/*/clusters/*: 404 until the cluster exists)",
        ),
    }
)

# --- Custom resources and their CRDs -------------------------------------------------------------------

BUILTIN_GROUPS = frozenset(
    {
        "core",
        "apps",
        "batch",
        "policy",
        "autoscaling",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "node.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        # DRA, served as resource.k8s.io/v1 from Kubernetes 1.34 (config.dra requires that version for claims)
        "resource.k8s.io",
        "certificates.k8s.io",
        "helm.sh",
    }
)
"""API groups the API server serves without a CRD (kubernetes/kubernetes pkg/controlplane); `helm.sh`
is pulumi-kubernetes' Helm Release, not a Kubernetes object."""


@dataclass(frozen=True)
class ChartCrds:
    """API groups a chart installs CRDs for; `unless_skip_crds` when they live in its `crds/` folder
    (which Helm skips with `--skip-crds`), `enabled` a values switch (path, default)."""

    groups: tuple[str, ...]
    source: str
    unless_skip_crds: bool = False
    enabled: tuple[str, bool] | None = None


CHART_CRDS: Mapping[str, ChartCrds] = MappingProxyType(
    {
        # Both also ship autoscaling.x-k8s.io CapacityBuffer; that group is left out because it also holds
        # ProvisioningRequest, which Karpenter does not install.
        "karpenter-crd": ChartCrds(
            ("karpenter.sh", "karpenter.k8s.aws"), "aws/karpenter-provider-aws charts/karpenter-crd/templates (v1.14.1)"
        ),
        "karpenter": ChartCrds(
            ("karpenter.sh", "karpenter.k8s.aws"),
            "aws/karpenter-provider-aws charts/karpenter/crds (v1.14.1)",
            unless_skip_crds=True,
        ),
        "kube-prometheus-stack": ChartCrds(
            ("monitoring.coreos.com",),
            "prometheus-community/helm-charts kube-prometheus-stack 88.5.3: subchart charts/crds (condition "
            "`crds.enabled`), CRDs in its crds/ folder",
            unless_skip_crds=True,
            enabled=("crds.enabled", True),
        ),
        "prometheus-operator-crds": ChartCrds(
            ("monitoring.coreos.com",), "prometheus-community/helm-charts prometheus-operator-crds templates"
        ),
        # Kueue keeps its CRDs as chart templates (not crds/), so --skip-crds leaves them in.
        "kueue": ChartCrds(
            ("kueue.x-k8s.io",),
            "kubernetes-sigs/kueue charts/kueue/templates/crd (v0.19.2: admissionchecks, clusterqueues, cohorts, "
            "localqueues, provisioningrequestconfigs, resourceflavors, topologies, workloads, ...)",
        ),
        # The node-feature-discovery subchart's nfd.k8s-sigs.io CRDs come only with `nfd.enabled`; gpuplane
        # creates no NodeFeature objects, so they are left out rather than modelled conditionally.
        "gpu-operator": ChartCrds(
            ("nvidia.com", "resource.nvidia.com"),
            "NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/crds (clusterpolicies, gpuclusters, nvidiadrivers; "
            "computedomains, computedomaincliques)",
            unless_skip_crds=True,
        ),
        # KEDA keeps its CRDs as chart templates behind `crds.install` (not crds/), so --skip-crds leaves them in.
        "keda": ChartCrds(
            ("keda.sh",),
            "kedacore/charts @ cbb9bb8 keda 2.20.2 templates/crds (scaledobjects, scaledjobs, triggerauthentications, "
            "clustertriggerauthentications, cloudeventsources, clustercloudeventsources) behind crds.install",
            enabled=("crds.install", True),
        ),
        "dra-driver-nvidia-gpu": ChartCrds(
            ("resource.nvidia.com",),
            "kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 deployments/helm/dra-driver-nvidia-gpu/crds "
            "(computedomains, computedomaincliques)",
            unless_skip_crds=True,
        ),
    }
)


@dataclass(frozen=True)
class PlatformCrds:
    """CRDs a cluster resource brings when an input has a value (the platform installs them)."""

    when: tuple[str, object]
    groups: tuple[str, ...]
    source: str


PLATFORM_CRDS: Mapping[str, tuple[PlatformCrds, ...]] = MappingProxyType(
    {
        "gcp:container/cluster:Cluster": (
            PlatformCrds(
                ("monitoringConfig.managedPrometheus.enabled", True),
                ("monitoring.googleapis.com",),
                "GKE docs, Managed Service for Prometheus: managed collection installs the PodMonitoring CRDs",
            ),
            PlatformCrds(
                ("enableMultiNetworking", True),
                ("networking.gke.io",),
                "GKE docs, Set up multi-network support for Pods: a multi-networking cluster has the Network and "
                "GKENetworkParamSet (networking.gke.io/v1) CRDs",
            ),
            PlatformCrds(
                ("enableAutopilot", True),
                ("monitoring.googleapis.com",),
                "GKE docs: managed collection is on by default in Autopilot clusters (1.25+)",
            ),
            # ComputeClass (cloud.google.com/v1) is on every GKE cluster from 1.30.3-gke.1451000 (GKE docs,
            # "About custom ComputeClasses"); gpuplane creates classes only on NAP and Autopilot clusters.
            PlatformCrds(
                ("enableAutopilot", True),
                ("cloud.google.com",),
                "GKE docs, About custom ComputeClasses: the ComputeClass CRD comes with GKE (1.30.3+)",
            ),
            PlatformCrds(
                ("clusterAutoscaling.enabled", True),
                ("cloud.google.com",),
                "GKE docs, About custom ComputeClasses: the ComputeClass CRD comes with GKE (1.30.3+)",
            ),
        ),
        "eks:index:Cluster": (
            PlatformCrds(
                ("autoMode.enabled", True),
                ("karpenter.sh", "eks.amazonaws.com"),
                "EKS docs, Auto Mode: AWS runs Karpenter; NodePool (karpenter.sh/v1) and NodeClass "
                "(eks.amazonaws.com/v1) CRDs are part of the cluster",
            ),
        ),
    }
)


@dataclass(frozen=True)
class ChartNeeds:
    """A chart value that makes the release create objects of a CRD it does not install."""

    path: str
    default: object
    group: str
    source: str


CHART_NEEDS: Mapping[str, tuple[ChartNeeds, ...]] = MappingProxyType(
    {
        "gpu-operator": (
            ChartNeeds(
                "dcgmExporter.serviceMonitor.enabled",
                True,
                "monitoring.coreos.com",
                "gpu-operator v26.7.0 values.yaml: dcgmExporter.serviceMonitor.enabled defaults to true",
            ),
        ),
        "dcgm-exporter": (
            ChartNeeds(
                "serviceMonitor.enabled",
                True,
                "monitoring.coreos.com",
                "dcgm-exporter 4.8.2 values.yaml: serviceMonitor.enabled defaults to true",
            ),
        ),
    }
)

# --- Names that are global in an account, project or region ---------------------------------------------


# --- Node security groups: kubelet <-> control plane ----------------------------------------------------


@dataclass(frozen=True)
class SecurityGroupKind:
    """What a security group on a node lets through between the node and the EKS control plane."""

    reaches_control_plane: bool
    source: str


NODE_SECURITY_GROUPS: Mapping[str, SecurityGroupKind] = MappingProxyType(
    {
        "eks-cluster": SecurityGroupKind(
            True,
            "EKS user guide sec-group-reqs: the cluster security group EKS creates is on the control plane's ENIs "
            "and lets all traffic through between them and every node that carries it",
        ),
        "pulumi-eks-cluster": SecurityGroupKind(
            False,
            "pulumi/pulumi-eks nodejs/eks/cluster/securitygroup.ts createClusterSecurityGroup: egress only, and "
            "443 in from pulumi-eks's own node security group; nothing admits a node that carries it",
        ),
        "self-only": SecurityGroupKind(
            False, "a security group whose rules only name itself (an EFA group) admits nothing else"
        ),
    }
)
"""Kinds of security groups a launch template can name. A launch template that names security groups
replaces the cluster security group EKS would add (EKS user guide launch-templates, "Security groups"), so
at least one of them must reach the control plane, or the nodes never join (NodeCreationFailure)."""


CLUSTER_SCOPED_KINDS = frozenset(
    {
        # built-in (kubectl api-resources --namespaced=false)
        "Namespace",
        "Node",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "StorageClass",
        "PriorityClass",
        "RuntimeClass",
        "IngressClass",
        "CSIDriver",
        "APIService",
        "DeviceClass",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        # published CRDs with `scope: Cluster` (../shared/reference/crds: Karpenter, Kueue, GMP, GKE networking,
        # gpu-operator) and GKE's ComputeClass (cloud.google.com/v1, cluster-scoped)
        "EC2NodeClass",
        "NodeOverlay",
        "NodePool",
        "AdmissionCheck",
        "ClusterQueue",
        "Cohort",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "ProvisioningRequestConfig",
        "ResourceFlavor",
        "Topology",
        "WorkloadPriorityClass",
        "ClusterPodMonitoring",
        "GKENetworkParamSet",
        "Network",
        "ClusterPolicy",
        "GPUCluster",
        "NVIDIADriver",
        "ComputeClass",
    }
)
"""Kinds without a namespace: the API server clears `metadata.namespace` of such an object on create
(k8s.io/apiserver pkg/registry/rest/create.go BeforeCreate), so two of one name are one object."""
