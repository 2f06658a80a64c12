"""The NVIDIA software a cluster lacks, plus GPU monitoring, on any cluster: you describe the GPU nodes
(their labels and taints) and choose the gpu-operator (nodes with a driver but no device plugin) or a
standalone dcgm-exporter (nodes whose platform runs the device plugin)."""

import pulumi
import pulumi_kubernetes as k8s

from gpuplane import (
    DcgmExporter,
    ExporterHost,
    GpuMonitoring,
    GpuNodes,
    GpuOperator,
    MonitoredExporter,
    MonitoringIntegration,
)

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
region = conf.get("region")  # the cluster's region label on every series, when given
GpuMonitoring(
    "monitoring",
    {
        "cluster": conf.require("clusterName"),
        "exporter": MonitoredExporter(software),
        "monitoring": {"integration": MonitoringIntegration.INSTALL},
        **({"region": region} if region else {}),
    },
    opts=pulumi.ResourceOptions(provider=provider, depends_on=[agent]),
)
