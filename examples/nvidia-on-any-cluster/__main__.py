"""The NVIDIA software a cluster lacks, plus GPU monitoring, on any cluster: you describe the GPU nodes
(their labels and taints) and choose the gpu-operator (nodes with a driver but no device plugin) or a
standalone dcgm-exporter (nodes whose platform runs the device plugin)."""

import pulumi
import pulumi_kubernetes as k8s

from gpuplane import DcgmExporter, ExporterHost, GpuMonitoring, GpuNodes, GpuOperator
from gpuplane.monitoring.standalone import monitoring_args

conf = pulumi.Config()
software = conf.get("software") or "gpu-operator"  # or dcgm-exporter
gpu_nodes: list[GpuNodes] = [
    {
        "pool": "a10g",
        "labels": {"gpuplane.io/pool": "a10g"},
        "taints": [{"key": "nvidia.com/gpu", "value": "present"}],
        "resource": "nvidia.com/gpu",
    }
]
provider = k8s.Provider("existing", kubeconfig=conf.require_secret("kubeconfig"))
opts = pulumi.ResourceOptions(provider=provider)
agent: pulumi.Resource
if software == "gpu-operator":
    agent = GpuOperator("gpu-operator", {"gpu_nodes": gpu_nodes}, opts=opts)
else:
    agent = DcgmExporter("dcgm", {"host": ExporterHost.GKE, "gpu_nodes": gpu_nodes}, opts=opts)
GpuMonitoring(
    "monitoring",
    monitoring_args(conf.require("clusterName"), software, region=conf.get("region"), integration="install"),
    agent,
    opts=opts,
)
