"""`GkeGpuPlatform`: the GKE Standard rows of the seed's matrix (fixed pools or NAP), from one `StackConfig`.

GKE ships the driver, toolkit and device plugin; gpuplane adds the cluster, the GPU pools (or NAP
limits for GPU classes) and a standalone dcgm-exporter, and wires the exporter into Prometheus.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..config.model import StackConfig
from ..inputs import ExporterHost
from ..kube import custom_resource
from ..monitoring.scrape import ScrapeTarget
from ..monitoring.stack import GpuMonitoring
from ..monitoring.wiring import gpu_monitoring, monitoring_outputs
from ..nodes import pool_labels
from ..nvidia import dcgm
from ..placement import gpu_nodes
from ..smoke import smoke_tests
from . import gpudirect
from .cluster import GkeGpuCluster, GkeGpuClusterArgs

ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def scrape_target(cfg: StackConfig) -> ScrapeTarget:
    """Where the stack's exporter is: the standalone chart's Service (and pods) in the monitoring namespace."""
    labels = dcgm.service_labels()
    return ScrapeTarget(
        namespace=cfg.monitoring.namespace,
        service_labels=labels,
        port_name=dcgm.METRICS_PORT_NAME,
        pod_labels=dcgm.pod_labels(),
        container_port=dcgm.METRICS_PORT_NAME,
        daemonset=dcgm.DAEMONSET,
    )


def exporter_args(cfg: StackConfig) -> dcgm.DcgmExporterArgs:
    """Fixed pools: exactly the stack's pools (nodes with the gpuplane pool label, tolerating their taints).
    NAP: nodes of the classes' accelerators, which GKE taints with the GPU taint (and spot taint)."""
    args = dcgm.DcgmExporterArgs(
        host=ExporterHost.GKE,
        max_gpu_nodes=sum(p.maxNodes for p in cfg.gpuPools),
        namespace=cfg.monitoring.namespace,
    )
    if cfg.platform_spec.fixed_pools:
        args["gpu_nodes"] = [gpu_nodes(cfg.platform, p, pool_labels(cfg.cluster.name, p)) for p in cfg.gpuPools]
    else:
        args["node_label"] = ACCELERATOR_LABEL
    return args


class GkeGpuPlatform(pulumi.ComponentResource):
    """GKE Standard cluster + GPU pools (or NAP) + dcgm-exporter, with its own explicit GCP provider."""

    cluster: GkeGpuCluster
    exporter: dcgm.DcgmExporter
    monitoring: GpuMonitoring
    outputs: dict[str, str]
    """Monitoring stack outputs: `scrapeConfig`, `prometheusRules`, `monitoringIntegration`."""

    def __init__(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        """The whole GKE Standard platform of a validated stack config (`gpuplane.parse_config`): a GCP
        provider, `GkeGpuCluster` (cluster, system pool, GPU pools or NAP), `DcgmExporter`, `GpuMonitoring`
        and the smoke tests, all children of this component (`{name}-...`)."""
        super().__init__("gpuplane:gcp:GkeGpuPlatform", name, None, opts)
        assert cfg.gcp is not None  # config validation requires it for GKE platforms
        provider = gcp.Provider(
            f"{name}-gcp", project=cfg.gcp.project, region=cfg.gcp.region, opts=pulumi.ResourceOptions(parent=self)
        )
        self.cluster = GkeGpuCluster(
            name,
            GkeGpuClusterArgs(
                cfg.cluster,
                cfg.gcp,
                cfg.gpuPools,
                managed_prometheus=cfg.monitoring.integration == "gke-managed",
                auto_provisioning=cfg.autoProvisioning,
            ),
            opts=pulumi.ResourceOptions(parent=self, providers={"gcp": provider}),
        )
        self.exporter = dcgm.DcgmExporter(
            f"{name}-dcgm",
            exporter_args(cfg),
            opts=pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
        )
        fixed = cfg.gpuPools if cfg.platform_spec.fixed_pools else []
        for obj in gpudirect.kube_objects(fixed, cfg.cluster.name):
            kind = obj["kind"]
            resource = f"{name}-{obj['metadata']['name']}" + ("" if kind == "DaemonSet" else f"-{kind.lower()}")
            on_k8s = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider})
            if kind == "DaemonSet":
                k8s.apps.v1.DaemonSet(resource, metadata=obj["metadata"], spec=obj["spec"], opts=on_k8s)
            else:
                custom_resource(resource, obj, on_k8s)
        self.monitoring = gpu_monitoring(
            f"{name}-monitoring",
            cfg,
            scrape_target(cfg),
            self.exporter,
            opts=pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
        )
        smoke_tests(
            name,
            cfg,
            [self.exporter],
            pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
        )
        self.outputs = monitoring_outputs(cfg, scrape_target(cfg))
        self.register_outputs(dict(self.outputs))


def build(cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> dict[str, object]:
    """Build the platform and return the stack outputs."""
    platform = GkeGpuPlatform(cfg.cluster.name, cfg, opts=opts)
    c = platform.cluster
    return {
        "platform": cfg.platform,
        "clusterName": c.cluster_name,
        "endpoint": c.endpoint,
        "kubeconfig": c.kubeconfig,
        "gpuNodePools": c.gpu_node_pools,
        "nodeServiceAccount": c.node_service_account,
        "exporterNamespace": platform.exporter.namespace,
        **platform.outputs,
    }
