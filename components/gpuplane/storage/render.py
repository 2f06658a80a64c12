"""Pure renders of a model store: the CSI driver each cloud mounts buckets with (a table), the static
PersistentVolume and PersistentVolumeClaim per namespace and access, the IAM grants, and the pod-spec fragment that
mounts a store (`volumes`, `volumeMounts`, annotations).

Sources: awslabs/mountpoint-s3-csi-driver v2.7.0 docs/CONFIGURATION.md ("Static Provisioning", "Pod-Level
Credentials") and examples/kubernetes/static_provisioning; awslabs/mountpoint-s3 doc/CONFIGURATION.md ("IAM
permissions", "Mounting a bucket prefix"); GoogleCloudPlatform/gcs-fuse-csi-driver examples/static and
docs/authentication.md, pkg/webhook/mutatingwebhook.go (the sidecar annotations).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..config.storage import Store

STORE_LABEL = "gpuplane.io/store"
CAPACITY = "1Ti"
"""A PersistentVolume must state a capacity; neither driver reads it (a bucket has no size)."""


@dataclass(frozen=True)
class Driver:
    """How one cloud mounts a bucket in pods."""

    csi: str
    """The CSIDriver's name."""
    attributes: Callable[[Any], dict[str, Any]]
    """Bucket name -> the PV's `csi.volumeAttributes`."""
    handle: Callable[[Any, str], Any]
    """(bucket name, the PV's name) -> `csi.volumeHandle`."""
    options: Callable[[Store, bool, str], list[str]]
    """(store, writes, region) -> the PV's `mountOptions`."""
    pod_annotations: Mapping[str, str]
    """Annotations a pod that mounts a store needs."""
    addon: str
    """What installs the driver on the cluster."""
    source: str


def _mountpoint_options(store: Store, writes: bool, region: str) -> list[str]:
    # The region: the nodes' IMDS hop limit is 1, so Mountpoint (not on the host network) can't ask the instance; a
    # bucket of yours elsewhere says its own (mountpoint-s3 config.rs: a region given wrongly is not corrected).
    opts = [f"region {store.region or region}", "allow-other"]
    if store.prefix:
        opts.append(f"prefix {store.prefix}")
    if writes:  # a downloader replaces and deletes files; without these Mountpoint only creates new ones
        opts += ["allow-delete", "allow-overwrite"]
    return opts


def _gcsfuse_options(store: Store, writes: bool, region: str) -> list[str]:
    # implicit-dirs: folders a tool wrote as `a/b/file` keys (no folder objects) show up (gcsfuse docs/semantics.md)
    opts = ["implicit-dirs"]
    if store.prefix:
        opts.append(f"only-dir={store.prefix.rstrip('/')}")
    return opts


DRIVERS: Mapping[str, Driver] = MappingProxyType(
    {
        "aws": Driver(
            csi="s3.csi.aws.com",
            # pod-level credentials: Mountpoint signs in as the pod's service account (EKS Pod Identity), so the grants
            # below are the only way in; driver-level ones would hand the driver's role to every pod with a claim.
            attributes=lambda bucket: {"bucketName": bucket, "authenticationSource": "pod"},
            handle=lambda bucket, pv: pv,  # must be unique across PVs (Kubernetes processes a handle once)
            options=_mountpoint_options,
            pod_annotations=MappingProxyType({}),
            addon="the aws-mountpoint-s3-csi-driver EKS add-on",
            source="awslabs/mountpoint-s3-csi-driver v2.7.0 docs/CONFIGURATION.md",
        ),
        "gcp": Driver(
            csi="gcsfuse.csi.storage.gke.io",
            attributes=lambda bucket: {},
            handle=lambda bucket, pv: bucket,  # the bucket's name (examples/static/pv-pvc-deployment.yaml)
            options=_gcsfuse_options,
            # the webhook injects the gcsfuse sidecar into pods that ask (pkg/webhook/mutatingwebhook.go)
            pod_annotations=MappingProxyType({"gke-gcsfuse/volumes": "true"}),
            addon="GKE's GcsFuseCsiDriver add-on",
            source="GoogleCloudPlatform/gcs-fuse-csi-driver examples/static, docs/authentication.md",
        ),
    }
)
"""Cloud -> the CSI driver that mounts its buckets."""


def claim_name(store: str, writes: bool) -> str:
    """The PersistentVolumeClaim pods name: `<store>` read-only, `<store>-rw` read-write."""
    return f"{store}-rw" if writes else store


def volume_name(cluster: str, store: str, namespace: str, writes: bool) -> str:
    """The PersistentVolume (cluster-scoped) bound to one namespace's claim."""
    return f"{cluster}-{store}-{namespace}-{'rw' if writes else 'ro'}"


def access_modes(writes: bool) -> list[str]:
    return ["ReadWriteMany" if writes else "ReadOnlyMany"]


def persistent_volume(
    cloud: str, cluster: str, store: Store, bucket: Any, namespace: str, writes: bool, region: str
) -> dict[str, Any]:
    """The static PersistentVolume of `bucket` for one namespace's claim (bound to it alone by `claimRef`)."""
    d = DRIVERS[cloud]
    name = volume_name(cluster, store.name, namespace, writes)
    csi: dict[str, Any] = {"driver": d.csi, "volumeHandle": d.handle(bucket, name)}
    attributes = d.attributes(bucket)
    if attributes:
        csi["volumeAttributes"] = attributes
    if not writes:
        csi["readOnly"] = True
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {STORE_LABEL: store.name}},
        "spec": {
            "capacity": {"storage": CAPACITY},
            "accessModes": access_modes(writes),
            "persistentVolumeReclaimPolicy": "Retain",  # deleting the claim never touches the bucket
            "storageClassName": "",  # static: no provisioner, bound by name
            "claimRef": {"namespace": namespace, "name": claim_name(store.name, writes)},
            "mountOptions": d.options(store, writes, region),
            "csi": csi,
        },
    }


def persistent_volume_claim(cluster: str, store: Store, namespace: str, writes: bool) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": claim_name(store.name, writes),
            "namespace": namespace,
            "labels": {STORE_LABEL: store.name},
        },
        "spec": {
            "accessModes": access_modes(writes),
            "storageClassName": "",
            "volumeName": volume_name(cluster, store.name, namespace, writes),
            "resources": {"requests": {"storage": CAPACITY}},
        },
    }


def service_account(namespace: str, name: str) -> dict[str, Any]:
    """The pods' service account; no `eks.amazonaws.com/role-arn` annotation on EKS: without one, Mountpoint signs in
    through EKS Pod Identity (mountpoint-s3-csi-driver pkg/driver/node/credentialprovider/provider_pod.go)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
        "automountServiceAccountToken": False,  # the drivers get their tokens through the CSIDriver's tokenRequests
    }


def mounts(cloud: str, stores: Sequence[tuple[str, str, bool]]) -> dict[str, Any]:
    """The pod-spec fragment that mounts stores, for `(store, path, writes)` each: `volumes` (the claims),
    `volumeMounts` (for the container) and the pod `annotations` the driver needs."""
    volumes, volume_mounts = [], []
    for store, path, writes in stores:
        volume = f"store-{store}"
        volumes.append(
            {"name": volume, "persistentVolumeClaim": {"claimName": claim_name(store, writes), "readOnly": not writes}}
        )
        volume_mounts.append({"name": volume, "mountPath": path, "readOnly": not writes})
    out: dict[str, Any] = {"volumes": volumes, "volumeMounts": volume_mounts}
    if stores and DRIVERS[cloud].pod_annotations:
        out["annotations"] = dict(DRIVERS[cloud].pod_annotations)
    return out


def s3_policy(bucket_arn: str, prefix: str | None, writes: bool) -> list[dict[str, Any]]:
    """The statements Mountpoint needs on one bucket (or only its prefix): list, read, and for writers put, abort a
    multipart upload and delete (mountpoint-s3 doc/CONFIGURATION.md "IAM permissions")."""
    keys = f"{bucket_arn}/{prefix or ''}*"
    listing: dict[str, Any] = {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [bucket_arn]}
    if prefix:  # "you must use the s3:prefix condition key" for a prefix mount
        listing["Condition"] = {"StringLike": {"s3:prefix": [f"{prefix}*"]}}
    actions = ["s3:GetObject", *(["s3:PutObject", "s3:AbortMultipartUpload", "s3:DeleteObject"] if writes else [])]
    return [listing, {"Effect": "Allow", "Action": actions, "Resource": [keys]}]


def role_policy(grants: Sequence[tuple[str, str | None, bool]]) -> str:
    """One service account's policy over every store it uses: `(bucket ARN, prefix, writes)` each."""
    statements = [s for arn, prefix, writes in grants for s in s3_policy(arn, prefix, writes)]
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


def pod_identity_trust(
    namespace: str | None = None, service_account: str | None = None, cluster: str | None = None
) -> str:
    """Trust for EKS Pod Identity (docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html); given a service
    account and its cluster, for it alone: the agent tags each session with the pod's cluster, namespace and service
    account (pod-id-abac: `eks-cluster-name`, `kubernetes-namespace`, `kubernetes-service-account`)."""
    statement: dict[str, Any] = {
        "Effect": "Allow",
        "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
    }
    if namespace is not None and service_account is not None and cluster is not None:
        statement["Condition"] = {
            "StringEquals": {
                "aws:RequestTag/eks-cluster-name": cluster,
                "aws:RequestTag/kubernetes-namespace": namespace,
                "aws:RequestTag/kubernetes-service-account": service_account,
            }
        }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


GCS_ROLES: Mapping[bool, str] = MappingProxyType(
    {False: "roles/storage.objectViewer", True: "roles/storage.objectUser"}
)
"""writes -> the bucket role of a reader or writer (gcs-fuse-csi-driver docs/authentication.md). objectViewer holds
`storage.objects.list`, all the driver's bucket access check needs (pkg/cloud_provider/storage/storage.go)."""


def gke_principal(project_number: str, project: str, namespace: str, service_account: str) -> str:
    """One Kubernetes service account as a Workload Identity Federation principal (docs/authentication.md)."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/workloadIdentityPools/"
        f"{project}.svc.id.goog/subject/ns/{namespace}/sa/{service_account}"
    )
