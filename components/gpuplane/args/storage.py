"""Typed args of `ModelStores` and of a platform's `storage` section (no `from __future__ import annotations`: the
multi-language package reads the annotations, as in `gpuplane.args.inputs`)."""

from collections.abc import Sequence
from enum import StrEnum
from typing import NotRequired, TypedDict

import pulumi


class StoreCloud(StrEnum):
    """Which cloud's buckets and CSI driver."""

    AWS = "aws"
    """S3 buckets, mounted by Mountpoint for Amazon S3 (its EKS add-on), signed in through EKS Pod Identity."""
    GCP = "gcp"
    """Cloud Storage buckets, mounted by the Cloud Storage FUSE CSI driver (GKE's add-on), signed in through Workload
    Identity Federation for GKE."""


class StoreAccessArgs(TypedDict):
    """A Kubernetes service account, by namespace."""

    namespace: str
    """Its namespace."""
    service_account: str
    """The service account (created by the component); pods name it as `serviceAccountName`."""


class StoreArgs(TypedDict):
    """One bucket of models or datasets, and who may read and write it."""

    name: str
    """The store's name (a DNS label, at most 30 characters): its claims are `<name>` and `<name>-rw`."""
    bucket: NotRequired[str]
    """An existing bucket, by name; unset: the component creates one, private and encrypted."""
    prefix: NotRequired[str]
    """Only this folder of the bucket (ending in `/`)."""
    readers: NotRequired[Sequence[StoreAccessArgs]]
    """Service accounts whose pods read it (mounted read-only)."""
    writers: NotRequired[Sequence[StoreAccessArgs]]
    """Service accounts whose pods write it (mounted read-write)."""


class StorageArgs(TypedDict):
    """A platform's `storage` section: the model and dataset stores of its cluster."""

    stores: Sequence[StoreArgs]
    """The stores."""


class ModelStoresArgs(TypedDict):
    """Arguments of `ModelStores`: the stores, and the cluster they are mounted in."""

    cloud: StoreCloud
    """`aws` or `gcp`."""
    cluster: str
    """The cluster's name as gpuplane labels it: the prefix of the PersistentVolumes and of created buckets."""
    region: str
    """The cluster's region: created buckets live there (and Mountpoint signs its requests for it)."""
    stores: Sequence[StoreArgs]
    """The stores."""
    eks_cluster_name: NotRequired[pulumi.Input[str]]
    """AWS: the EKS cluster (an Output of it, so the add-ons and Pod Identity associations wait for it)."""
    project: NotRequired[str]
    """GCP: the cluster's project (its Workload Identity pool is `<project>.svc.id.goog`)."""
    pod_identity_agent: NotRequired[bool]
    """AWS: install the `eks-pod-identity-agent` add-on (default true; false where the cluster has it already:
    EKS Auto Mode, or gpuplane's Karpenter)."""
    csi_driver: NotRequired[bool]
    """AWS: install the `aws-mountpoint-s3-csi-driver` add-on (default true; false if the cluster has it)."""
    namespaces: NotRequired[Sequence[str]]
    """Namespaces to create before the claims (default: every namespace the stores name but `default`)."""
