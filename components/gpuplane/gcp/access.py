"""Pieces every GKE cluster gets: the nodes' own service account, and Kubernetes access to the cluster."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..config.gcp import GcpConfig
from ..config.model import ClusterConfig
from ..k8s.kubeconfig import gke_document
from . import render


def node_service_account(
    name: str, cluster: ClusterConfig, gcp_cfg: GcpConfig, opts: pulumi.ResourceOptions
) -> tuple[gcp.serviceaccount.Account, list[gcp.projects.IAMMember]]:
    """A dedicated node service account with Google's least-privilege node role (children of `opts.parent`)."""
    sa = gcp.serviceaccount.Account(
        f"{name}-nodes",
        account_id=render.node_service_account_id(cluster.name),
        display_name=f"GKE nodes of {cluster.name} (gpuplane)",
        project=gcp_cfg.project,
        opts=opts,
    )
    member = sa.email.apply(lambda e: f"serviceAccount:{e}")
    roles = [
        gcp.projects.IAMMember(
            f"{name}-nodes-{role.split('/')[-1].replace('.', '-')}",
            project=gcp_cfg.project,
            role=role,
            member=member,
            opts=opts,
        )
        for role in render.NODE_ROLES
    ]
    return sa, roles


MONITORING_VIEWER = "roles/monitoring.viewer"
"""Reads Cloud Monitoring, which holds GKE Managed Prometheus' series (GKE docs, "Managed Service for Prometheus:
query using the Prometheus API": the querying identity needs `monitoring.timeSeries.list`, in this role)."""


def keda_identity(
    name: str,
    cluster: ClusterConfig,
    gcp_cfg: GcpConfig,
    namespace: str,
    ksa: str,
    opts: pulumi.ResourceOptions,
    after: Sequence[pulumi.Resource] = (),
) -> tuple[gcp.serviceaccount.Account, list[pulumi.Resource]]:
    """A Google service account for KEDA's operator (ServiceAccount `namespace/ksa`), allowed to read GKE Managed
    Prometheus, and the Workload Identity binding that lets the Kubernetes ServiceAccount act as it (GKE docs, "Use
    Workload Identity Federation for GKE", link a Kubernetes ServiceAccount to an IAM service account: role
    `roles/iam.workloadIdentityUser` for `serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>]`; KEDA docs, GCP
    Workload Identity). The binding waits for `after` (the cluster): the project's identity pool exists only once a
    cluster with Workload Identity does, and IAM refuses the member before ("Identity Pool does not exist";
    terraform-google-kubernetes-engine #916). Returns the account and its two grants."""
    sa = gcp.serviceaccount.Account(
        f"{name}-keda-identity",
        account_id=render.service_account_id(cluster.name, "-keda"),
        display_name=f"KEDA operator of {cluster.name} (gpuplane)",
        project=gcp_cfg.project,
        opts=opts,
    )
    viewer = gcp.projects.IAMMember(
        f"{name}-keda-monitoring-viewer",
        project=gcp_cfg.project,
        role=MONITORING_VIEWER,
        member=sa.email.apply(lambda e: f"serviceAccount:{e}"),
        opts=opts,
    )
    pool = f"{render.known_project(gcp_cfg)}.svc.id.goog"  # the cluster's workload pool (`render.cluster_args`)
    binding = gcp.serviceaccount.IAMMember(
        f"{name}-keda-workload-identity",
        service_account_id=sa.name,
        role="roles/iam.workloadIdentityUser",
        member=f"serviceAccount:{pool}[{namespace}/{ksa}]",
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=list(after))),
    )
    return sa, [viewer, binding]


def kube_access(
    name: str,
    cluster: gcp.container.Cluster,
    cluster_cfg: ClusterConfig,
    gcp_cfg: GcpConfig,
    parent: pulumi.Resource,
    after: Sequence[pulumi.Resource],
) -> tuple[pulumi.Output[str], k8s.Provider]:
    """A secret kubeconfig (gke-gcloud-auth-plugin) and a Kubernetes provider built from the cluster's outputs."""
    context = f"gke_{gcp_cfg.project}_{gcp_cfg.region}_{cluster_cfg.name}"
    kubeconfig: pulumi.Output[str] = pulumi.Output.secret(
        pulumi.Output.all(cluster.endpoint, cluster.master_auth.cluster_ca_certificate).apply(
            lambda parts: gke_document(context, str(parts[0]), str(parts[1]))
        )
    )
    provider = k8s.Provider(
        f"{name}-k8s",
        kubeconfig=kubeconfig,
        enable_server_side_apply=True,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(after)),
    )
    return kubeconfig, provider
