"""`EksGpuPlatform`: the EKS row of the seed's matrix, from one `StackConfig`.

The node image ships the driver and toolkit; gpuplane adds the cluster, managed GPU node groups,
cluster-autoscaler, and the gpu-operator for the device plugin, GFD and dcgm-exporter.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from ..catalog import NODE_IMAGES
from ..config.model import StackConfig
from ..monitoring.scrape import ScrapeTarget
from ..monitoring.stack import GpuMonitoring
from ..monitoring.wiring import gpu_monitoring, monitoring_outputs
from ..nodes import pool_target
from ..nvidia import operator
from .autoscaler import ClusterAutoscaler
from .cluster import EksGpuCluster, EksGpuClusterArgs

PLATFORM = "eks-managed"


def scrape_target(cfg: StackConfig) -> ScrapeTarget:
    """The operator's dcgm-exporter Service (and pods) in the operator's namespace."""
    return ScrapeTarget(
        namespace=operator.NAMESPACE,
        service_labels=operator.EXPORTER_LABELS,
        port_name=operator.EXPORTER_PORT_NAME,
        pod_labels=operator.EXPORTER_LABELS,
    )


def operator_args(cfg: StackConfig) -> operator.GpuOperatorArgs:
    """All pools share one image profile (config validation), so the first pool's image decides."""
    return operator.GpuOperatorArgs(
        image=NODE_IMAGES[cfg.gpuPools[0].amiType],
        targets=[pool_target("aws", cfg.cluster.name, p) for p in cfg.gpuPools],
    )


class EksGpuPlatform(pulumi.ComponentResource):
    """EKS cluster + GPU node groups + cluster-autoscaler + gpu-operator, with its own AWS provider."""

    cluster: EksGpuCluster
    operator: operator.GpuOperator
    monitoring: GpuMonitoring
    outputs: dict[str, str]
    """Monitoring stack outputs: `scrapeConfig`, `prometheusRules`, `monitoringIntegration`."""

    def __init__(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:aws:EksGpuPlatform", name, None, opts)
        assert cfg.aws is not None  # config validation requires it for EKS platforms
        provider = aws.Provider(f"{name}-aws", region=cfg.aws.region, opts=pulumi.ResourceOptions(parent=self))
        on_aws = pulumi.ResourceOptions(parent=self, providers={"aws": provider})
        self.cluster = EksGpuCluster(name, EksGpuClusterArgs(cfg.cluster, cfg.aws, cfg.gpuPools), opts=on_aws)
        on_k8s = pulumi.ResourceOptions(
            parent=self, providers={"aws": provider, "kubernetes": self.cluster.k8s_provider}
        )
        ClusterAutoscaler(
            f"{name}-autoscaler",
            cfg.cluster.name,
            cfg.aws.region,
            self.cluster.oidc_provider_arn,
            self.cluster.oidc_issuer,
            opts=on_k8s,
        )
        self.operator = operator.GpuOperator(f"{name}-gpu-operator", operator_args(cfg), opts=on_k8s)
        self.monitoring = gpu_monitoring(f"{name}-monitoring", cfg, scrape_target(cfg), self.operator, opts=on_k8s)
        self.outputs = monitoring_outputs(cfg, scrape_target(cfg))
        self.register_outputs(dict(self.outputs))


def build(cfg: StackConfig) -> dict[str, object]:
    """Build the platform and return the stack outputs."""
    platform = EksGpuPlatform(cfg.cluster.name, cfg)
    c = platform.cluster
    return {
        "platform": PLATFORM,
        "clusterName": c.cluster_name,
        "kubeconfig": c.kubeconfig,
        "oidcProviderArn": c.oidc_provider_arn,
        "vpcId": c.vpc_id,
        "gpuNodeGroups": c.gpu_node_groups,
        "operatorNamespace": platform.operator.namespace,
        **platform.outputs,
    }
