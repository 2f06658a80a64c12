"""`GkeAutopilotPlatform`: the Autopilot row of the seed's matrix.

GCP provisions GPU nodes per pod and ships the driver, toolkit and device plugin. Autopilot refuses
privileged and hostPath workloads, so gpuplane installs nothing on the nodes: GPU metrics come from
GKE's own device plugin (port 2112, scraped by the user's Prometheus: the seed's "custom scraping")
or from GKE's managed DCGM collection (`monitoring_config`, integration `gke-managed`).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..config.gcp import GcpConfig
from ..config.model import ClusterConfig, StackConfig
from ..kueue.stack import kueue_queues
from ..lifecycle import keep_options
from ..monitoring.scrape import ScrapeTarget
from ..monitoring.wiring import monitoring_outputs
from ..smoke import smoke_tests
from . import render
from .access import kube_access, node_service_account
from .network import cloud_nat, endpoint_args

DEVICE_PLUGIN = ScrapeTarget(
    namespace="kube-system",
    service_labels={},
    port_name="",
    pod_labels={"k8s-app": "nvidia-gpu-device-plugin"},
    role="pod",
    pod_port=2112,
)
"""GKE's nvidia-gpu-device-plugin DaemonSet pods, which serve GPU metrics on :2112/metrics."""

MANAGED_DCGM = {"enable_components": ["SYSTEM_COMPONENTS", "DCGM"], "managed_prometheus": {"enabled": True}}
"""GKE collects DCGM metrics itself into Managed Prometheus."""


def autopilot_cluster_args(
    cluster: ClusterConfig, gcp_cfg: GcpConfig, sa_email: Any, managed_dcgm: bool
) -> dict[str, Any]:
    """`gcp.container.Cluster` for Autopilot: none of the Standard-only settings (node pools, shielded
    nodes flag, default pool removal), the node service account via auto-provisioning defaults."""
    args: dict[str, Any] = {
        "name": cluster.name,
        "project": gcp_cfg.project,
        "location": gcp_cfg.region,
        "enable_autopilot": True,
        "deletion_protection": cluster.deletionProtection,
        "release_channel": {"channel": cluster.releaseChannel},
        "ip_allocation_policy": {"stack_type": "IPV4"},
        "resource_labels": {"managed-by": "gpuplane"},
        **endpoint_args(gcp_cfg),
        "cluster_autoscaling": {
            "auto_provisioning_defaults": {"service_account": sa_email, "oauth_scopes": list(render.OAUTH_SCOPES)}
        },
    }
    optional = {
        "network": gcp_cfg.network,
        "subnetwork": gcp_cfg.subnetwork,
        "min_master_version": cluster.kubernetesVersion,
    }
    args.update({k: v for k, v in optional.items() if v is not None})
    if managed_dcgm:
        args["monitoring_config"] = {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in MANAGED_DCGM.items()}
    return args


class GkeAutopilotPlatform(pulumi.ComponentResource):
    """An Autopilot cluster with its own node service account, provider and Kubernetes provider."""

    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider
    outputs: dict[str, str]

    def __init__(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        """The whole GKE Autopilot platform of a validated stack config (`gpuplane.parse_config`): a GCP
        provider, the nodes' service account, the Autopilot cluster (managed DCGM with `gke-managed`),
        a Kubernetes provider and the smoke tests."""
        super().__init__("gpuplane:gcp:GkeAutopilotPlatform", name, None, opts)
        assert cfg.gcp is not None
        provider = gcp.Provider(
            f"{name}-gcp", project=cfg.gcp.project, region=cfg.gcp.region, opts=pulumi.ResourceOptions(parent=self)
        )
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        sa, roles = node_service_account(name, cfg.cluster, cfg.gcp, child)
        managed = cfg.monitoring.integration == "gke-managed"
        nat = cloud_nat(name, cfg.cluster.name, cfg.gcp, child)
        cluster = gcp.container.Cluster(
            f"{name}-cluster",
            **autopilot_cluster_args(cfg.cluster, cfg.gcp, sa.email, managed),
            opts=keep_options(cfg.cluster, pulumi.ResourceOptions(parent=self, provider=provider, depends_on=roles)),
        )
        self.kubeconfig, self.k8s_provider = kube_access(name, cluster, cfg.cluster, cfg.gcp, self, [cluster, *nat])
        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        on_k8s = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.k8s_provider})
        smoke_tests(name, cfg, [], on_k8s)
        kueue_queues(name, cfg, on_k8s)
        self.outputs = monitoring_outputs(cfg, DEVICE_PLUGIN)
        self.register_outputs({"cluster_name": self.cluster_name, "kubeconfig": self.kubeconfig, **self.outputs})


def build(cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> dict[str, object]:
    """Build the platform and return the stack outputs."""
    platform = GkeAutopilotPlatform(cfg.cluster.name, cfg, opts=opts)
    return {
        "platform": cfg.platform,
        "clusterName": platform.cluster_name,
        "endpoint": platform.endpoint,
        "kubeconfig": platform.kubeconfig,
        **platform.outputs,
    }
