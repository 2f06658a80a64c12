"""EKS side of `ModelStores`: a private S3 bucket, the Mountpoint and Pod Identity agent add-ons, and one IAM role
per service account (trusted through EKS Pod Identity for that service account only) with the stores it may use."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from ..resources.names import ROLE, fit_autoname, fit_prefix
from ..storage import render as r
from ..storage.spec import StoresSpec

MOUNTPOINT_ADDON = "aws-mountpoint-s3-csi-driver"
POD_IDENTITY_ADDON = "eks-pod-identity-agent"
BUCKET = "aws:s3/bucket:Bucket"


def private_bucket(
    name: str, cluster: str, store: str, opts: pulumi.ResourceOptions
) -> tuple[aws.s3.Bucket, list[pulumi.Resource]]:
    """A bucket named `<cluster>-<store>-` and a unique suffix (a replacement creates the new bucket first: a fixed
    name would collide with the old one), every public access blocked, owner-enforced (no ACLs), encrypted with S3
    keys, and never emptied by Pulumi (`force_destroy` off: deleting a bucket that holds objects fails)."""
    bucket = aws.s3.Bucket(
        f"{name}-bucket",
        bucket_prefix=fit_prefix(f"{cluster}-{store}", BUCKET),
        force_destroy=False,
        tags={"gpuplane.io/cluster": cluster, "gpuplane.io/store": store},
        opts=opts,
    )
    on_bucket = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[bucket]))
    extras: list[pulumi.Resource] = [
        aws.s3.BucketPublicAccessBlock(
            f"{name}-public-access-block",
            bucket=bucket.id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=on_bucket,
        ),
        aws.s3.BucketOwnershipControls(
            f"{name}-ownership", bucket=bucket.id, rule={"object_ownership": "BucketOwnerEnforced"}, opts=on_bucket
        ),
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption",
            bucket=bucket.id,
            rules=[
                {"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}, "bucket_key_enabled": True}
            ],
            opts=on_bucket,
        ),
    ]
    return bucket, extras


def addons(name: str, spec: StoresSpec, cluster: Any, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """Mountpoint for Amazon S3's CSI driver and, unless the cluster has it, the EKS Pod Identity agent."""
    made: list[pulumi.Resource] = []
    if spec.pod_identity_agent:
        made.append(
            aws.eks.Addon(f"{name}-pod-identity-agent", cluster_name=cluster, addon_name=POD_IDENTITY_ADDON, opts=opts)
        )
    if spec.csi_driver:
        made.append(
            # No configurationValues: v2's defaults are what the stores need (its node pods tolerate every taint,
            # `node.tolerateAllTaints`; its controller goes to any untainted node), and the add-on's schema refuses
            # keys older versions lack (controller.tolerations before v2.3.0-eksbuild.1: aws/containers-roadmap#2676)
            aws.eks.Addon(
                f"{name}-mountpoint",
                cluster_name=cluster,
                addon_name=MOUNTPOINT_ADDON,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                opts=opts,
            )
        )
    return made


def _trust(namespace: str, service_account: str, cluster: Any) -> str:
    return r.pod_identity_trust(namespace, service_account, str(cluster))


def _policy(scopes: Sequence[tuple[str | None, bool]], arns: Sequence[Any]) -> str:
    return r.role_policy([(str(a), p, w) for a, (p, w) in zip(arns, scopes, strict=True)])


def service_account_role(
    name: str,
    spec: StoresSpec,
    namespace: str,
    service_account: str,
    grants: Sequence[tuple[Any, str | None, bool]],
    cluster: Any,
    opts: pulumi.ResourceOptions,
) -> list[pulumi.Resource]:
    """One service account's role (trusted for it alone), its policy over the stores it uses (`(bucket ARN, prefix,
    writes)`) and the Pod Identity association that hands the role to its pods (one per service account: EKS
    refuses a second, CreatePodIdentityAssociation ResourceInUseException)."""
    role = aws.iam.Role(
        f"{name}-role",
        name=fit_autoname(f"{name}-role", ROLE),
        assume_role_policy=pulumi.Output.from_input(cluster).apply(
            functools.partial(_trust, namespace, service_account)
        ),
        description=f"gpuplane stores of {spec.cluster} for {namespace}/{service_account}",
        opts=opts,
    )
    arns = [arn for arn, _, _ in grants]
    policy = pulumi.Output.all(*arns).apply(functools.partial(_policy, [(p, w) for _, p, w in grants]))
    attached = aws.iam.RolePolicy(f"{name}-stores", role=role.id, policy=policy, opts=opts)
    association = aws.eks.PodIdentityAssociation(
        f"{name}-pod-identity",
        cluster_name=cluster,
        namespace=namespace,
        service_account=service_account,
        role_arn=role.arn,
        opts=opts,
    )
    return [role, attached, association]


def buckets(name: str, spec: StoresSpec, opts: pulumi.ResourceOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """Store -> its bucket's name, and store -> its ARN: created buckets', or the named ones' in the partition."""
    names: dict[str, Any] = {}
    arns: dict[str, Any] = {}
    partition = None
    for store in spec.config.stores:
        if store.bucket is not None:
            if partition is None:
                partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=opts.parent)).partition
            names[store.name] = store.bucket
            arns[store.name] = pulumi.Output.concat("arn:", partition, ":s3:::", store.bucket)
        else:
            bucket, _ = private_bucket(f"{name}-{store.name}", spec.cluster, store.name, opts)
            names[store.name], arns[store.name] = bucket.bucket, bucket.arn
    return names, arns


def grants(
    name: str, spec: StoresSpec, arns: dict[str, Any], cluster: Any, opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """The add-ons, and per service account its role, policy and Pod Identity association."""
    made = addons(name, spec, cluster, opts)
    for ns, sa in spec.service_accounts:
        used = [(arns[s.name], s.prefix, writes) for s, writes in spec.uses(ns, sa)]
        made += service_account_role(f"{name}-{ns}-{sa}", spec, ns, sa, used, cluster, opts)
    return made
