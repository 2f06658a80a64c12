"""Karpenter GPU NodePools on an EKS cluster another stack runs (with Karpenter installed): the cluster's
name, kubeconfig and Karpenter's node role come from that stack's outputs (`pulumi.StackReference`)."""

import pulumi
import pulumi_kubernetes as k8s

from gpuplane import GpuOperator, GpuType, KarpenterGpuNodePools, SharingStrategy

conf = pulumi.Config()
platform = pulumi.StackReference(conf.require("clusterStack"))  # e.g. acme/eks-platform/prod

provider = k8s.Provider("platform", kubeconfig=platform.require_output("kubeconfig"))
on_cluster = pulumi.ResourceOptions(provider=provider)
pools = KarpenterGpuNodePools(
    "gpu",
    {
        "cluster_name": platform.require_output("clusterName"),
        "node_role": platform.require_output("karpenterNodeRole"),
        "cluster_label": conf.get("clusterLabel") or "platform",
        "gpu_pools": [
            {"name": "l4", "gpu": GpuType.L4, "spot": True, "max_nodes": 8},
            {
                "name": "l4-shared",
                "gpu": GpuType.L4,
                "max_nodes": 2,
                "sharing": {"strategy": SharingStrategy.TIME_SLICING, "replicas": 4},
            },
        ],
    },
    opts=on_cluster,
)
GpuOperator("gpu-operator", {"gpu_nodes": pools.gpu_nodes}, opts=on_cluster)

pulumi.export("gpuNodePools", pools.node_pool_names)
