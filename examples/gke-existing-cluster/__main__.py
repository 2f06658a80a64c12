"""Bring your own GKE Standard cluster: add tainted, autoscaled GPU pools, dcgm-exporter and GPU metrics."""

import pulumi
import pulumi_kubernetes as k8s

from gpuplane.config import parse_config
from gpuplane.gcp import GkeGpuNodePools, GkeGpuNodePoolsArgs
from gpuplane.gcp.platform import exporter_args, scrape_target
from gpuplane.monitoring.wiring import gpu_monitoring, monitoring_outputs
from gpuplane.nvidia.dcgm import DcgmExporter

conf = pulumi.Config()
cfg = parse_config(
    {
        "platform": "gke-standard",
        "cluster": {"name": conf.require("clusterName")},
        "gcp": {"project": conf.require("project"), "region": conf.require("region")},
        "gpuPools": conf.require_object("gpuPools"),
        # Your cluster runs Prometheus Operator, so its CRDs exist: gpuplane must not install a second copy.
        "monitoring": {
            "integration": conf.get("integration") or "prometheus-operator",
            "prometheusOperatorCrds": conf.get("prometheusOperatorCrds") or "existing",
        },
    }
)
assert cfg.gcp is not None
pools = GkeGpuNodePools(
    "gpu",
    GkeGpuNodePoolsArgs(
        cfg.cluster,
        cfg.gcp,
        cfg.gpuPools,
        cluster_id=f"projects/{cfg.gcp.project}/locations/{cfg.gcp.region}/clusters/{cfg.cluster.name}",
        node_service_account=conf.require("nodeServiceAccount"),
    ),
)
k8s_provider = k8s.Provider("existing", kubeconfig=conf.require_secret("kubeconfig"))
on_cluster = pulumi.ResourceOptions(provider=k8s_provider, depends_on=[pools])
exporter = DcgmExporter("dcgm", exporter_args(cfg), opts=on_cluster)
gpu_monitoring("monitoring", cfg, scrape_target(cfg), exporter, opts=on_cluster)

pulumi.export("gpuNodePools", pools.names)
pulumi.export("scrapeConfig", monitoring_outputs(cfg, scrape_target(cfg))["scrapeConfig"])
