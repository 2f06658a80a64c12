"""Kubeconfigs and Kubernetes providers for clusters you declare yourself, so gpuplane's components (and your
own Kubernetes resources) go to that cluster, never to the ambient kubeconfig.

- `gke_kubeconfig(cluster)`: a `gcp.container.Cluster`; authenticates with `gke-gcloud-auth-plugin`.
- `eks_kubeconfig(cluster)`: an `aws.eks.Cluster` or a pulumi-eks `eks.Cluster`; authenticates with
  `aws eks get-token` in the cluster's region (taken from its ARN).
- `kubernetes_provider(name, cluster)`: a `k8s.Provider` on either, with server-side apply.

Every kubeconfig is a secret Output. No static token is ever written: whoever runs `pulumi up` needs the
cloud CLI's credentials, as kubectl does.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .objects import exec_kubeconfig


def gke_document(context: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig for a GKE cluster that authenticates with `gke-gcloud-auth-plugin` (no static token)."""
    plugin = {
        "command": "gke-gcloud-auth-plugin",
        "provideClusterInfo": True,
        "installHint": "Install gke-gcloud-auth-plugin: "
        "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl",
    }
    return exec_kubeconfig(context, f"https://{endpoint}", ca_certificate, plugin)


def eks_document(name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig for an EKS cluster that gets its token from `aws eks get-token` (AWS CLI v2)."""
    args = ["eks", "get-token", "--cluster-name", name, "--output", "json"]
    if region:
        args += ["--region", region]
    plugin = {"command": "aws", "args": args, "installHint": "Install the AWS CLI v2: https://aws.amazon.com/cli/"}
    return exec_kubeconfig(name, endpoint, ca_data, plugin)


def region_of_arn(arn: str) -> str:
    """`arn:aws:eks:us-west-2:123456789012:cluster/x` -> `us-west-2` (empty when not an ARN)."""
    parts = str(arn).split(":")
    return parts[3] if len(parts) > 3 else ""


def gke_kubeconfig(cluster: Any) -> pulumi.Output[str]:
    """A secret kubeconfig for your `gcp.container.Cluster` (context `gke_<project>_<location>_<name>`)."""
    parts = pulumi.Output.all(
        cluster.project, cluster.location, cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate
    )
    return pulumi.Output.secret(parts.apply(lambda p: gke_document(f"gke_{p[0]}_{p[1]}_{p[2]}", str(p[3]), str(p[4]))))


def eks_kubeconfig(cluster: Any) -> pulumi.Output[str]:
    """A secret kubeconfig for your `aws.eks.Cluster`, or a pulumi-eks `eks.Cluster` (its inner cluster)."""
    inner = getattr(cluster, "eks_cluster", cluster)
    parts = pulumi.Output.all(inner.name, inner.endpoint, inner.certificate_authority.data, inner.arn)
    return pulumi.Output.secret(
        parts.apply(lambda p: eks_document(str(p[0]), str(p[1]), str(p[2]), region_of_arn(str(p[3]))))
    )


def kubeconfig_of(cluster: Any) -> pulumi.Output[str]:
    """The kubeconfig of a GKE or EKS cluster object (by what it has: GKE's `master_auth`, EKS's
    `certificate_authority` or pulumi-eks's `eks_cluster`)."""
    if hasattr(cluster, "master_auth"):
        return gke_kubeconfig(cluster)
    if hasattr(cluster, "eks_cluster") or hasattr(cluster, "certificate_authority"):
        return eks_kubeconfig(cluster)
    raise TypeError(
        f"kubernetes_provider: {type(cluster).__name__} is not a cluster gpuplane knows "
        "(a gcp.container.Cluster, an aws.eks.Cluster or a pulumi-eks eks.Cluster)"
    )


def kubernetes_provider(resource_name: str, cluster: Any, opts: pulumi.ResourceOptions | None = None) -> k8s.Provider:
    """A Kubernetes provider for your GKE or EKS cluster object, with server-side apply; pass it to gpuplane's
    components (`opts=ResourceOptions(provider=...)`) and to your own Kubernetes resources."""
    return k8s.Provider(resource_name, kubeconfig=kubeconfig_of(cluster), enable_server_side_apply=True, opts=opts)


__all__ = ["eks_kubeconfig", "gke_kubeconfig", "kubeconfig_of", "kubernetes_provider"]
