"""cluster-autoscaler for EKS managed node groups, with an IRSA role scoped to this cluster's groups."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from ..k8s.objects import pinned_release
from ..resources.names import ROLE, fit_autoname
from . import render

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"
RELEASE = "cluster-autoscaler"

SCALE_DOWN: dict[str, Any] = {
    # GPU nodes are costly: remove them after 5 idle minutes rather than the default 10.
    "scale-down-unneeded-time": "5m",
    "scale-down-delay-after-add": "5m",
    # GPU nodes (labelled k8s.amazonaws.com/accelerator) count as idle by GPU use, not CPU.
    "scale-down-gpu-utilization-threshold": 0.5,
    "ignore-daemonsets-utilization": True,
    "skip-nodes-with-local-storage": False,
    "skip-nodes-with-system-pods": False,
}
"""GPU-aware scale-down flags (cluster-autoscaler's FAQ names each)."""


def autoscaler_values(cluster: str, region: str, role_arn: pulumi.Input[str]) -> dict[str, Any]:
    """Chart values: auto-discovery by cluster name, IRSA service account, runs on the system nodes."""
    return {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster},
        "fullnameOverride": RELEASE,
        "rbac": {
            "serviceAccount": {
                "create": True,
                "name": SERVICE_ACCOUNT,
                "annotations": {"eks.amazonaws.com/role-arn": role_arn},
            }
        },
        "nodeSelector": {"gpuplane.io/role": "system"},
        "extraArgs": {"balance-similar-node-groups": True, "expander": "least-waste", **SCALE_DOWN},
    }


class ClusterAutoscaler(pulumi.ComponentResource):
    """IAM role (IRSA) + the official cluster-autoscaler chart."""

    role_arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        cluster: str,
        region: str,
        oidc_provider_arn: pulumi.Input[str],
        oidc_issuer: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpuplane:aws:ClusterAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        trust = pulumi.Output.all(oidc_provider_arn, oidc_issuer).apply(
            lambda p: render.irsa_trust_policy(str(p[0]), str(p[1]), NAMESPACE, SERVICE_ACCOUNT)
        )
        role = aws.iam.Role(
            f"{name}-role",
            name=fit_autoname(f"{name}-role", ROLE),
            assume_role_policy=trust,
            description=f"cluster-autoscaler of {cluster}",
            opts=child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-policy", role=role.id, policy=render.autoscaler_policy(cluster), opts=child
        )
        pinned_release(
            f"{name}-release",
            "cluster-autoscaler",
            RELEASE,
            NAMESPACE,
            autoscaler_values(cluster, region, role.arn),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        self.role_arn = role.arn
        self.register_outputs({"role_arn": self.role_arn})
