"""The replacement table's Kubernetes rows: pulumi-kubernetes' own replace rules, Karpenter drift, and the
fields the API server refuses to change (custom resources' CEL transition rules). Same row format as
`replacement_table`, which merges these in."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

RawRule = tuple[str, ...]

R, D, F, W = "replaces", "disrupts nodes", "refused by the API server", "disrupts admitted workloads"

K8S_DIFF = "pulumi/pulumi-kubernetes provider/pkg/provider/diff.go"

KARPENTER_DRIFT = "kubernetes-sigs/karpenter website/content/en/docs/concepts/disruption.md (Drift)"
KUEUE_CRD = "kubernetes-sigs/kueue config/components/crd/bases/kueue.x-k8s.io_{}.yaml (v0.19.2)"
KARPENTER_CRD = "aws/karpenter-provider-aws pkg/apis/crds/karpenter.sh_nodepools.yaml (v1.14.1)"
COMPUTE_DOMAIN_CRD = (
    "kubernetes-sigs/dra-driver-nvidia-gpu deployments/helm/dra-driver-nvidia-gpu/crds/"
    "resource.nvidia.com_computedomains.yaml (v0.4.1)"
)


def immutable(
    source: str, *paths: str, why: str = "the CRD marks the field immutable", flags: tuple[str, ...] = ()
) -> list[RawRule]:
    """Custom resource fields with a CEL transition rule (`self == oldSelf` or the like) in `source`."""
    return [(path, F, why, f"{source} `{path}` x-kubernetes-validations", *flags) for path in paths]


def forcenew(
    source: str, *fields: tuple[str, str], why: str = "immutable: a new value is a new resource"
) -> list[RawRule]:
    """(pulumi path, terraform field) pairs that are ForceNew / RequiresReplace in `source`."""
    return [(path, R, why, f"{source} `{tf}` ForceNew") for path, tf in fields]


KUBERNETES: Mapping[str, list[RawRule]] = MappingProxyType(
    {
        "kubernetes:helm.sh/v3:Release": forcenew(
            "pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go Diff forceNewFields",
            ("name", ".name"),
            ("namespace", ".namespace"),
            why="a new release name or namespace is a new release",
        ),
        "kubernetes:core/v1:ConfigMap": [
            (
                k,
                R,
                "ConfigMap data is immutable unless the provider sets enableConfigMapMutable (gpuplane does not)",
                f"pulumi/pulumi-kubernetes provider/pkg/provider/diff.go forceNewProperties `.{k}`",
            )
            for k in ("data", "binaryData")
        ],
        "kubernetes:apps/v1:DaemonSet": [
            (
                "spec.selector",
                R,
                "a DaemonSet's selector is immutable",
                "pulumi/pulumi-kubernetes provider/pkg/provider/diff.go forceNewProperties apps/v1 DaemonSet "
                "`.spec.selector`",
            )
        ],
        "kubernetes:apps/v1:Deployment": [
            (
                "spec.selector",
                R,
                "a Deployment's selector is immutable",
                f"{K8S_DIFF} forceNewProperties apps/v1 Deployment `.spec.selector`",
            )
        ],
        "kubernetes:core/v1:Service": [
            (
                "spec.clusterIP",
                R,
                "a Service's cluster IP is immutable",
                f"{K8S_DIFF} forceNewProperties `.spec.clusterIP`",
            )
        ],
        # A PersistentVolume's source and a claim's binding are immutable: replaced, and with their fixed names deleted
        # first, so a volume a claim still holds (or a claim a pod uses) waits on its protection finalizer
        # (kubernetes.io/pv-protection, pvc-protection) and the `up` waits out its timeout: scale the pods down first.
        "kubernetes:core/v1:PersistentVolume": [
            (
                "spec.csi",
                R,
                "a volume's source is immutable",
                f"{K8S_DIFF} forceNewProperties PersistentVolume `.spec.csi`",
            )
        ],
        "kubernetes:core/v1:PersistentVolumeClaim": [
            (k, R, "a claim's binding is immutable", f"{K8S_DIFF} forceNewProperties PersistentVolumeClaim `.{k}`")
            for k in ("spec.accessModes", "spec.storageClassName", "spec.volumeName", "spec.selector")
        ],
        "kubernetes:core/v1:ResourceQuota": [
            (
                "spec.scopes",
                R,
                "a ResourceQuota's scopes are immutable",
                f"{K8S_DIFF} forceNewProperties `.spec.scopes`",
            )
        ],
        "kubernetes:core/v1:Secret": [
            (
                k,
                R,
                "a Secret is replaced, not patched, unless the provider sets enableSecretMutable (gpuplane does not)",
                f"{K8S_DIFF} forceNewProperties Secret `.{k}`",
            )
            for k in ("type", "data", "stringData")
        ],
        "kubernetes:batch/v1:Job": [
            (
                k,
                R,
                "a Job's pod template, selector and counts are immutable",
                f"pulumi/pulumi-kubernetes provider/pkg/provider/diff.go forceNewProperties batch/v1 Job `.{k}`",
            )
            for k in ("spec.completions", "spec.parallelism", "spec.selector", "spec.template")
        ],
        # Conservative: pulumi-kubernetes replaces the provider only when the kubeconfig's active cluster differs
        # (DiffConfig getActiveClusterFromConfig); a path diff cannot tell, so any change is taken as replacing.
        # Once `clusterIdentifier` is set, only a new identifier replaces it (DiffConfig: "we ignore replacements when
        # the identifier is unchanged"; adding one replaces nothing by itself).
        "pulumi:providers:kubernetes": [
            *(
                (
                    k,
                    R,
                    "a different active cluster replaces the provider and every object it manages",
                    "pulumi/pulumi-kubernetes provider/pkg/provider/provider.go DiffConfig getActiveClusterFromConfig",
                    "unless_kept=clusterIdentifier",
                )
                for k in ("kubeconfig", "context", "cluster")
            ),
            (
                "clusterIdentifier",
                R,
                "a new cluster identifier replaces the provider and every object it manages",
                "pulumi/pulumi-kubernetes provider/pkg/provider/provider.go DiffConfig clusterIdentifierKey",
                "old_has=clusterIdentifier",
            ),
        ],
        "kubernetes:karpenter.sh/v1:NodePool": [
            ("spec.template", D, "existing nodes drift and Karpenter replaces them", KARPENTER_DRIFT),
            *immutable(
                KARPENTER_CRD,
                "spec.template.spec.nodeClassRef.group",
                "spec.template.spec.nodeClassRef.kind",
                why="nodeClassRef.group and .kind are immutable",
            ),
        ],
        # A ClusterQueue moved to another flavor name (gpuplane renames a topology flavor whose immutable fields
        # change): Kueue keeps the admitted workloads' usage under the old name, so the new flavor is free to
        # over-admit until they finish, and it drops the DWS check of workloads admitted on the old flavor.
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue": [
            (
                path,
                W,
                "workloads admitted on a flavor the queue no longer names leave its accounting and lose its DWS "
                "check: hold the queue (stopPolicy: Hold) and let it drain first",
                "kubernetes-sigs/kueue pkg/cache/scheduler/clusterqueue.go updateQuotasAndResourceGroups; "
                "pkg/workload/workload.go AdmissionChecksForWorkload (v0.19.2)",
                f"when_gone={names}",
            )
            for path, names in (
                ("spec.resourceGroups", "spec.resourceGroups[*].flavors[*].name"),
                ("spec.admissionChecksStrategy", "spec.admissionChecksStrategy.admissionChecks[*].onFlavors[*]"),
            )
        ],
        "kubernetes:kueue.x-k8s.io/v1beta2:Topology": immutable(KUEUE_CRD.format("topologies"), "spec.levels"),
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue": immutable(KUEUE_CRD.format("localqueues"), "spec.clusterQueue"),
        "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck": immutable(
            KUEUE_CRD.format("admissionchecks"), "spec.controllerName"
        ),
        "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor": immutable(
            KUEUE_CRD.format("resourceflavors"),
            "spec.nodeLabels",
            "spec.tolerations",
            "spec.topologyName",
            why="nodeLabels, tolerations and topologyName are immutable once topologyName is set",
            flags=("old_has=spec.topologyName",),
        ),
        "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain": immutable(
            COMPUTE_DOMAIN_CRD, "spec", why="a ComputeDomain's spec is immutable"
        ),
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": [
            (
                "spec",
                D,
                "existing nodes drift and Karpenter replaces them",
                "aws/karpenter-provider-aws pkg/cloudprovider/drift.go; " + KARPENTER_DRIFT,
            ),
        ],
    }
)
