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
