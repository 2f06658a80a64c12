"""The NVIDIA software a platform lacks, plus GPU monitoring, on any cluster: you state the platform kind
(`eks-managed`: gpu-operator; `gke-standard`: standalone dcgm-exporter) and the GPU nodes' labels/taints."""

import pulumi
import pulumi_kubernetes as k8s

from gpuplane.aws.platform import operator_args
from gpuplane.aws.platform import scrape_target as eks_target
from gpuplane.config import parse_config
from gpuplane.gcp.platform import exporter_args
from gpuplane.gcp.platform import scrape_target as gke_target
from gpuplane.monitoring.wiring import gpu_monitoring
from gpuplane.nvidia.dcgm import DcgmExporter
from gpuplane.nvidia.operator import GpuOperator

conf = pulumi.Config()
kind = conf.require("platform")  # the matrix row of the cluster: eks-managed or gke-standard
cloud = {
    "eks-managed": ("aws", {"region": "us-east-1"}),
    "gke-standard": ("gcp", {"project": "existing-0", "region": "us-central1"}),
}[kind]
cfg = parse_config(
    {
        "platform": kind,
        "cluster": {"name": conf.require("clusterName")},
        cloud[0]: cloud[1],
        "gpuPools": conf.require_object("gpuPools"),
        "monitoring": {"integration": "install"},
    }
)
provider = k8s.Provider("existing", kubeconfig=conf.require_secret("kubeconfig"))
opts = pulumi.ResourceOptions(provider=provider)
if kind == "eks-managed":
    software: pulumi.Resource = GpuOperator("gpu-operator", operator_args(cfg), opts=opts)
    target = eks_target(cfg)
else:
    software = DcgmExporter("dcgm", exporter_args(cfg), opts=opts)
    target = gke_target(cfg)
gpu_monitoring("monitoring", cfg, target, software, opts=opts)
