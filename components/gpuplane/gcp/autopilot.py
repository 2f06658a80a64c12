"""`GkeAutopilotPlatform`: the Autopilot row of the seed's matrix.

GCP provisions GPU nodes per pod and ships the driver, toolkit and device plugin. Autopilot refuses
privileged and hostPath workloads, so gpuplane installs nothing on the nodes: GPU metrics come from
GKE's own device plugin (port 2112, scraped by the user's Prometheus: the seed's "custom scraping")
or from GKE's managed DCGM collection (`monitoring_config`, integration `gke-managed`).

No `from __future__ import annotations`: the multi-language package reads the args' annotations.
"""

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict, cast

import pulumi
import pulumi_gcp as gcp

from ..args.inputs import GpuNodes, GpuPoolArgs
from ..args.platform import (
    ClusterArgs,
    GcpArgs,
    HealthArgs,
    MonitoringArgs,
    QueuesArgs,
    SmokeTestArgs,
    ValidationArgs,
    platform_config,
)
from ..args.storage import StorageArgs
from ..autoscaling.stack import workload_namespaces
from ..config.gcp import GcpConfig
from ..config.model import ClusterConfig, StackConfig
from ..health.component import validation_checks
from ..health.summary import health_summary
from ..k8s.objects import custom_resource
from ..kueue.stack import kueue_queues, queue_outputs
from ..monitoring.standalone import DEVICE_PLUGIN
from ..monitoring.wiring import monitoring_outputs
from ..resources.lifecycle import keep_options
from ..scheduling.compute_class import compute_classes
from ..scheduling.placement import stack_gpu_nodes
from ..storage.stack import model_stores, storage_outputs
from . import render
from .access import kube_access, node_service_account
from .cluster import streaming_api
from .network import cloud_nat, endpoint_args

__all__ = ["DEVICE_PLUGIN", "GkeAutopilotPlatform", "GkeAutopilotPlatformArgs", "build"]

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


class GkeAutopilotPlatformArgs(TypedDict):
    """Arguments of `GkeAutopilotPlatform`: the sections of a gke-autopilot stack config, in snake_case."""

    cluster: ClusterArgs
    """Cluster name and settings."""
    gcp: GcpArgs
    """Project, region and network (project, network and subnetwork may be Outputs)."""
    gpu_pools: NotRequired[Sequence[GpuPoolArgs]]
    """GPU classes workloads may request (for the smoke tests and the capacity summary); plain values."""
    monitoring: NotRequired[MonitoringArgs]
    """`scrape-config` (GKE's device plugin metrics) or `gke-managed` (GKE's managed DCGM collection)."""
    smoke_test: NotRequired[SmokeTestArgs]
    """An `nvidia-smi` Job per GPU class after deploy."""
    health: NotRequired[HealthArgs]
    """GPU fault detection and node repair (default: on where the platform lets gpuplane set it)."""
    validation: NotRequired[ValidationArgs]
    """Post-deploy checks per GPU class: GPUs visible, DCGM diagnostics, NCCL (replaces `smoke_test`)."""
    queues: NotRequired[QueuesArgs]
    """Kueue job queues per team with GPU quotas per pool (docs/queues.md)."""
    storage: NotRequired[StorageArgs]
    """Model and dataset stores: buckets mounted in pods, for the service accounts named only (docs/storage.md)."""
    allow_unlisted_regions: NotRequired[bool]
    """Accept a region newer than gpuplane's catalog (its GPU zones are then not checked)."""


class GkeAutopilotPlatform(pulumi.ComponentResource):
    """A whole GKE Autopilot GPU platform: an Autopilot cluster with its own node service account, GCP
    provider and Kubernetes provider; GCP provisions GPU nodes per pod and ships the NVIDIA software."""

    cluster_name: pulumi.Output[str]
    """The cluster's name."""
    endpoint: pulumi.Output[str]
    """The Kubernetes API endpoint."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (secret; uses gke-gcloud-auth-plugin)."""
    scrape_config: pulumi.Output[str]
    """The `gpu-metrics` Prometheus scrape job (YAML) for GKE's device plugin metrics."""
    prometheus_rules: pulumi.Output[str]
    """The GPU recording and alerting rules (a Prometheus rules file)."""
    gpu_nodes: list[GpuNodes]
    """Per GPU pool or class: its nodes' labels, taints, resource and ceiling, for `gpuplane.placement`,
    `KueueQueues` and your own workloads."""

    def __init__(self, name: str, args: GkeAutopilotPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """The whole GKE Autopilot platform from `GkeAutopilotPlatformArgs` (the sections of a stack config),
        or from a validated stack config (`gpuplane.parse_config`; typed: `GkeAutopilotPlatform.from_config`):
        a GCP provider, the nodes' service account, the Autopilot cluster (managed DCGM with `gke-managed`),
        a Kubernetes provider and the smoke tests.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        cfg: StackConfig
        if isinstance(args, StackConfig):
            cfg = args
        else:
            cfg, deferred = platform_config(
                f"GkeAutopilotPlatform {name!r}", ("gke-autopilot",), args, GkeAutopilotPlatformArgs
            )
            opts = deferred.options(opts)
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
        # Autopilot streams images always; the project needs the Container File System API for it (GKE how-to,
        # image-streaming: "Autopilot and Standard clusters"): workloads (through the provider) wait for it
        api = streaming_api(name, cfg.gcp, child)
        self.kubeconfig, self.k8s_provider = kube_access(
            name, cluster, cfg.cluster, cfg.gcp, self, [cluster, *nat, api]
        )
        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        on_k8s = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.k8s_provider})
        classes = [
            custom_resource(f"{name}-{o['metadata']['name']}-computeclass", o, on_k8s) for o in compute_classes(cfg)
        ]
        validation_checks(name, cfg, classes, on_k8s)  # pods that select a class wait for it
        queues = kueue_queues(name, cfg, on_k8s)
        spaces = workload_namespaces(name, cfg, on_k8s)
        # Autopilot runs the Cloud Storage FUSE CSI driver already (GKE: on by default on Autopilot from 1.24)
        on_both = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.k8s_provider, "gcp": provider})
        self.stores = model_stores(name, cfg, on_both, after=[*spaces, *([queues] if queues else [])])
        self.outputs = {
            **monitoring_outputs(cfg, DEVICE_PLUGIN),
            **storage_outputs(cfg, self.stores),
            **queue_outputs(cfg, queues, self.kubeconfig),
        }
        """Monitoring stack outputs: `scrapeConfig`, `prometheusRules`, `monitoringIntegration`."""
        self.scrape_config = pulumi.Output.from_input(self.outputs["scrapeConfig"])
        self.prometheus_rules = pulumi.Output.from_input(self.outputs["prometheusRules"])
        self.gpu_nodes = stack_gpu_nodes(cfg)
        self.gpu_health = health_summary(cfg)
        """What detects and repairs each pool's GPU faults, and the post-deploy checks (the stack's `gpuHealth`
        output; a Python attribute)."""
        self.register_outputs({"cluster_name": self.cluster_name, "kubeconfig": self.kubeconfig, **self.outputs})

    @classmethod
    def from_config(
        cls, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions | None = None
    ) -> "GkeAutopilotPlatform":
        """The platform of a validated stack config (what `pulumi up` on a stack file builds)."""
        return cls(name, cast(Any, cfg), opts)


def build(cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> dict[str, object]:
    """Build the platform and return the stack outputs."""
    platform = GkeAutopilotPlatform.from_config(cfg.cluster.name, cfg, opts=opts)
    return {
        "platform": cfg.platform,
        "clusterName": platform.cluster_name,
        "endpoint": platform.endpoint,
        "kubeconfig": platform.kubeconfig,
        **platform.outputs,
    }
