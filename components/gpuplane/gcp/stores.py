"""GKE side of `ModelStores`: a private Cloud Storage bucket and bucket roles for the service accounts' Workload
Identity Federation principals (reader or writer), nothing broader."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_gcp as gcp

from ..storage import render as r
from ..storage.spec import StoresSpec


def _principal(project: str, namespace: str, service_account: str, number: Any) -> str:
    return r.gke_principal(str(number), project, namespace, service_account)


def bucket_name(spec: StoresSpec, store: str) -> str:
    """`<cluster>-<store>-<7 hex>` within Cloud Storage's 63 characters. The hash covers the project and location,
    which replace the bucket when they change: the new bucket gets a new name, so it can be created before the old
    one goes (a replacement of a fixed name would collide, bucket names being global)."""
    digest = hashlib.sha256(f"{spec.project}/{spec.region}/{spec.cluster}/{store}".encode()).hexdigest()[:7]
    return f"{f'{spec.cluster}-{store}'[:55].rstrip('-_.')}-{digest}"


def buckets(name: str, spec: StoresSpec, opts: pulumi.ResourceOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """Store -> its bucket's name (created, or the one named); no ARNs on GCP."""
    return {
        s.name: s.bucket if s.bucket is not None else private_bucket(f"{name}-{s.name}", spec, s.name, opts).name
        for s in spec.config.stores
    }, {}


def grants(
    name: str, spec: StoresSpec, names: Mapping[str, Any], cluster: Any, opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    return bucket_grants(name, spec, names, opts)


def private_bucket(name: str, spec: StoresSpec, store: str, opts: pulumi.ResourceOptions) -> gcp.storage.Bucket:
    """A bucket in the cluster's region (named by `bucket_name`), with uniform bucket-level access (IAM only, no
    ACLs; Workload Identity writers need it: gcs-fuse-csi-driver docs/authentication.md), public access
    prevented, never emptied by Pulumi."""
    return gcp.storage.Bucket(
        f"{name}-bucket",
        name=bucket_name(spec, store),
        project=spec.project,
        location=spec.region.upper(),
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        force_destroy=False,
        labels={"managed-by": "gpuplane", "gpuplane-cluster": spec.cluster, "gpuplane-store": store},
        opts=opts,
    )


def bucket_grants(
    name: str, spec: StoresSpec, buckets: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """Per store and service account: its bucket role for that account's principal (one Kubernetes service account,
    not a principal set)."""
    assert spec.project is not None
    number = gcp.organizations.get_project_output(
        project_id=spec.project, opts=pulumi.InvokeOutputOptions(parent=opts.parent)
    ).number
    made: list[pulumi.Resource] = []
    for store in spec.config.stores:
        for access, writes in store.users():
            ns, sa = access.namespace, access.serviceAccount
            member = number.apply(functools.partial(_principal, str(spec.project), ns, sa))
            made.append(
                gcp.storage.BucketIAMMember(
                    f"{name}-{store.name}-{ns}-{sa}-{'writer' if writes else 'reader'}",
                    bucket=buckets[store.name],
                    role=r.GCS_ROLES[writes],
                    member=member,
                    opts=opts,
                )
            )
    return made
