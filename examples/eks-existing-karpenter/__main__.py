"""Bring your own EKS cluster: Karpenter v1 with GPU NodePools, and the gpu-operator for the device plugin."""

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuplane.aws.karpenter import Karpenter, KarpenterArgs
from gpuplane.aws.platform import operator_args
from gpuplane.config import parse_config
from gpuplane.nvidia.operator import GpuOperator

conf = pulumi.Config()
cfg = parse_config(
    {
        "platform": "eks-karpenter",
        "cluster": {"name": conf.require("clusterName"), "systemPool": {"minNodes": 2}},
        "aws": {"region": conf.require("region")},
        "gpuPools": conf.require_object("gpuPools"),
    }
)
assert cfg.aws is not None and cfg.karpenter is not None
aws_provider = aws.Provider("aws", region=cfg.aws.region)
k8s_provider = k8s.Provider("existing", kubeconfig=conf.require_secret("kubeconfig"))
opts = pulumi.ResourceOptions(providers={"aws": aws_provider, "kubernetes": k8s_provider})
karpenter = Karpenter(
    "karpenter",
    KarpenterArgs(
        cfg.cluster, cfg.aws.region, cfg.gpuPools, cfg.karpenter, subnet_ids=conf.require_object("subnetIds")
    ),
    opts=opts,
)
GpuOperator("gpu-operator", operator_args(cfg), opts=opts)

pulumi.export("karpenterNodeRole", karpenter.node_role_name)
pulumi.export("interruptionQueue", karpenter.queue_name)
