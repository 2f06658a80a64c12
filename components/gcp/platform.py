"""`GkeGpuPlatform`: the whole GKE Standard row of the seed's matrix, from one `StackConfig`.

GKE ships the driver, toolkit and device plugin; gpuplane adds the cluster, the GPU pools and a
standalone dcgm-exporter, and hands out the `gpu-metrics` scrape job for the user's Prometheus.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from ..config.model import StackConfig
from ..monitoring.scrape import ScrapeTarget, stack_scrape_yaml
from ..nodes import pool_target
from ..nvidia import dcgm
from .cluster import GkeGpuCluster, GkeGpuClusterArgs

PLATFORM = "gke-standard"


def scrape_target(cfg: StackConfig) -> ScrapeTarget:
    """Where the stack's exporter is: the standalone chart's Service in the monitoring namespace."""
    return ScrapeTarget(
        namespace=cfg.monitoring.namespace, service_labels=dcgm.service_labels(), port_name=dcgm.METRICS_PORT_NAME
    )


def scrape_config_yaml(cfg: StackConfig) -> str:
    """The `gpu-metrics` job for this stack, as YAML."""
    return stack_scrape_yaml(scrape_target(cfg), cfg.monitoring.scrapeInterval, cfg.monitoring.scrapeTimeout)


def exporter_args(cfg: StackConfig) -> dcgm.DcgmExporterArgs:
    """The exporter runs on exactly the stack's GPU pools."""
    return dcgm.DcgmExporterArgs(
        platform=PLATFORM,
        targets=[pool_target("gcp", cfg.cluster.name, p) for p in cfg.gpuPools],
        max_gpu_nodes=sum(p.maxNodes for p in cfg.gpuPools),
        namespace=cfg.monitoring.namespace,
    )


class GkeGpuPlatform(pulumi.ComponentResource):
    """GKE Standard cluster + GPU pools + dcgm-exporter, with its own explicit GCP provider."""

    cluster: GkeGpuCluster
    exporter: dcgm.DcgmExporter
    scrape_config: pulumi.Output[str]

    def __init__(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:gcp:GkeGpuPlatform", name, None, opts)
        assert cfg.gcp is not None  # config validation requires it for GKE platforms
        provider = gcp.Provider(
            f"{name}-gcp", project=cfg.gcp.project, region=cfg.gcp.region, opts=pulumi.ResourceOptions(parent=self)
        )
        self.cluster = GkeGpuCluster(
            name,
            GkeGpuClusterArgs(cfg.cluster, cfg.gcp, cfg.gpuPools),
            opts=pulumi.ResourceOptions(parent=self, providers={"gcp": provider}),
        )
        self.exporter = dcgm.DcgmExporter(
            f"{name}-dcgm",
            exporter_args(cfg),
            opts=pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
        )
        self.scrape_config = pulumi.Output.from_input(scrape_config_yaml(cfg))
        self.register_outputs({"scrape_config": self.scrape_config})


def build(cfg: StackConfig) -> dict[str, object]:
    """Build the platform and return the stack outputs."""
    platform = GkeGpuPlatform(cfg.cluster.name, cfg)
    c = platform.cluster
    return {
        "platform": PLATFORM,
        "clusterName": c.cluster_name,
        "endpoint": c.endpoint,
        "kubeconfig": c.kubeconfig,
        "gpuNodePools": c.gpu_node_pools,
        "nodeServiceAccount": c.node_service_account,
        "exporterNamespace": platform.exporter.namespace,
        "scrapeConfig": platform.scrape_config,
    }
