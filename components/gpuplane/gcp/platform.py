"""`GkeGpuPlatform`: the GKE Standard rows of the seed's matrix (fixed pools or NAP), from typed args (or a
parsed `StackConfig`).

GKE ships the driver, toolkit and device plugin; gpuplane adds the cluster, the GPU pools (or NAP
limits for GPU classes) and a standalone dcgm-exporter, and wires the exporter into Prometheus.

No `from __future__ import annotations`: the multi-language package reads the args' annotations.
"""

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, NotRequired, TypedDict, cast

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..args.autoscaling import AutoscalingArgs
from ..args.inputs import ExporterHost, GpuAllocation, GpuNodes, GpuPoolArgs
from ..args.platform import (
    AutoProvisioningArgs,
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
from ..autoscaling.component import NAMESPACE as KEDA_NAMESPACE
from ..autoscaling.render import KEDA_SERVICE_ACCOUNT
from ..autoscaling.stack import autoscaling_outputs, gpu_autoscalers, needs_google_identity, workload_namespaces
from ..config.capacity import uses_compute_class
from ..config.dra import claims_gpus
from ..config.model import StackConfig
from ..health.component import validation_checks
from ..health.summary import health_summary
from ..k8s.objects import custom_resource
from ..kueue.stack import kueue_queues, queue_outputs
from ..monitoring.scrape import ScrapeTarget
from ..monitoring.wiring import gpu_monitoring, monitoring_outputs
from ..nvidia import dcgm
from ..nvidia.dra import dra_driver
from ..scheduling.compute_class import compute_classes
from ..scheduling.placement import stack_gpu_nodes
from ..storage.stack import model_stores, storage_outputs
from . import gpudirect
from .access import keda_identity
from .cluster import GkeGpuCluster, GkeGpuClusterArgs
from .driver_installer import driver_installer, variant_of
from .render import machine_type

ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


class GkePlatformKind(StrEnum):
    """Which GKE Standard platform: fixed GPU node pools or node auto-provisioning."""

    GKE_STANDARD = "gke-standard"
    """One autoscaled GPU node pool per `gpu_pools` entry."""
    GKE_NAP = "gke-nap"
    """Node auto-provisioning: `gpu_pools` are GPU classes whose ceilings become NAP limits."""


class GkeGpuPlatformArgs(TypedDict):
    """Arguments of `GkeGpuPlatform`: the sections of a GKE Standard stack config, in snake_case."""

    cluster: ClusterArgs
    """Cluster name and settings."""
    gcp: GcpArgs
    """Project, region, zones and network (project, network and subnetwork may be Outputs)."""
    gpu_pools: Sequence[GpuPoolArgs]
    """GPU node pools (`gke-standard`) or GPU classes (`gke-nap`); plain values."""
    kind: NotRequired[GkePlatformKind]
    """gke-standard (default) or gke-nap; plain."""
    auto_provisioning: NotRequired[AutoProvisioningArgs]
    """NAP limits and defaults (`gke-nap` only)."""
    monitoring: NotRequired[MonitoringArgs]
    """How GPU metrics reach Prometheus, and the alert thresholds."""
    smoke_test: NotRequired[SmokeTestArgs]
    """An `nvidia-smi` Job per GPU pool after deploy."""
    health: NotRequired[HealthArgs]
    """GPU fault detection and node repair (default: on where the platform lets gpuplane set it)."""
    validation: NotRequired[ValidationArgs]
    """Post-deploy checks per GPU pool: GPUs visible, DCGM diagnostics, NCCL (replaces `smoke_test`)."""
    queues: NotRequired[QueuesArgs]
    """Kueue job queues per team with GPU quotas per pool (docs/queues.md)."""
    autoscaling: NotRequired[AutoscalingArgs]
    """Deployments KEDA scales on GPU or serving metrics of the stack's Prometheus (docs/autoscaling.md)."""
    storage: NotRequired[StorageArgs]
    """Model and dataset stores: buckets mounted in pods, for the service accounts named only (docs/storage.md)."""
    allow_unlisted_regions: NotRequired[bool]
    """Accept a region newer than gpuplane's catalog (its GPU zones are then not checked)."""
    gpu_allocation: NotRequired[GpuAllocation]
    """How pods get GPUs on pools that don't say: `device-plugin` (default) or `dra` (docs/gpu-claims.md)."""


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
    NAP: nodes of the classes' accelerators, which GKE taints with the GPU taint (and spot taint), and for a
    class on its own ComputeClass also with `cloud.google.com/compute-class=<class>` (GKE docs "About custom
    ComputeClasses"): the exporter tolerates those classes' taints too, or their nodes have no metrics."""
    args = dcgm.DcgmExporterArgs(
        host=ExporterHost.GKE,
        max_gpu_nodes=sum(p.maxNodes for p in cfg.gpuPools),
        namespace=cfg.monitoring.namespace,
    )
    nodes = stack_gpu_nodes(cfg)
    if cfg.platform_spec.fixed_pools:
        args["gpu_nodes"] = nodes
    else:
        args["node_label"] = ACCELERATOR_LABEL
        classes = [n for n, p in zip(nodes, cfg.gpuPools, strict=True) if uses_compute_class(cfg.platform, p)]
        if classes:
            args["gpu_nodes"] = classes
    return args


class GkeGpuPlatform(pulumi.ComponentResource):
    """A whole GKE Standard GPU platform: cluster, system pool, GPU node pools (or NAP), dcgm-exporter on
    the GPU nodes and GPU monitoring, with its own GCP provider."""

    cluster_name: pulumi.Output[str]
    """The cluster's name."""
    endpoint: pulumi.Output[str]
    """The Kubernetes API endpoint."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (secret; uses gke-gcloud-auth-plugin)."""
    gpu_node_pools: pulumi.Output[list[str]]
    """Names of the GPU node pools (none with NAP)."""
    scrape_config: pulumi.Output[str]
    """The `gpu-metrics` Prometheus scrape job (YAML)."""
    prometheus_rules: pulumi.Output[str]
    """The GPU recording and alerting rules (a Prometheus rules file)."""
    gpu_nodes: list[GpuNodes]
    """Per GPU pool or class: its nodes' labels, taints, resource and ceiling, for `gpuplane.placement`,
    `KueueQueues` and your own workloads."""

    def __init__(self, name: str, args: GkeGpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """The whole GKE Standard platform from `GkeGpuPlatformArgs` (the sections of a stack config), or
        from a validated stack config (`gpuplane.parse_config`; typed: `GkeGpuPlatform.from_config`): a GCP
        provider, `GkeGpuCluster` (cluster, system pool, GPU pools or NAP), `DcgmExporter`, `GpuMonitoring`
        and the smoke tests, all children of this component (`{name}-...`).

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        cfg: StackConfig
        if isinstance(args, StackConfig):
            cfg = args
        else:
            cfg, deferred = platform_config(f"GkeGpuPlatform {name!r}", KINDS, args, GkeGpuPlatformArgs)
            opts = deferred.options(opts)
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
                gcs_fuse=cfg.storage is not None,
            ),
            opts=pulumi.ResourceOptions(parent=self, providers={"gcp": provider}),
        )
        self.exporter = dcgm.DcgmExporter(
            f"{name}-dcgm",
            exporter_args(cfg),
            opts=pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
        )
        fixed = cfg.gpuPools if cfg.platform_spec.fixed_pools else []
        on_cluster = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider})
        self.dra_driver = dra_driver(name, cfg, on_cluster)
        for variant in sorted({variant_of(machine_type(p)) for p in fixed if claims_gpus(p)}):
            installer = driver_installer(variant)
            k8s.apps.v1.DaemonSet(
                f"{name}-{installer['metadata']['name']}",
                metadata=installer["metadata"],
                spec=installer["spec"],
                opts=on_cluster,
            )
        classes = [
            custom_resource(f"{name}-{o['metadata']['name']}-computeclass", o, on_cluster) for o in compute_classes(cfg)
        ]
        fabric: list[pulumi.Resource] = []  # GPUDirect networks and NCCL plugin installers: pods attach to them
        for obj in gpudirect.kube_objects(fixed, cfg.cluster.name):
            kind = obj["kind"]
            resource = f"{name}-{obj['metadata']['name']}" + ("" if kind == "DaemonSet" else f"-{kind.lower()}")
            on_k8s = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider})
            if kind == "DaemonSet":
                fabric.append(k8s.apps.v1.DaemonSet(resource, metadata=obj["metadata"], spec=obj["spec"], opts=on_k8s))
            else:
                fabric.append(custom_resource(resource, obj, on_k8s))
        self.monitoring = gpu_monitoring(
            f"{name}-monitoring",
            cfg,
            scrape_target(cfg),
            self.exporter,
            opts=pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
        )
        validation_checks(
            name,
            cfg,
            [
                self.exporter,
                *classes,
                *([self.dra_driver] if self.dra_driver else []),
                *fabric,
            ],  # pods wait for a class, the DRA driver, and the GPUDirect networks they attach
            pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
        )
        on_k8s = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider})
        queues = kueue_queues(name, cfg, on_k8s)
        spaces = workload_namespaces(name, cfg, on_k8s)  # the workloads' and the stores', created once
        keda_sa, grants = None, list[pulumi.Resource]()
        if needs_google_identity(cfg):  # KEDA's operator reads GKE Managed Prometheus as a Google account of its own
            keda_sa, grants = keda_identity(
                name,
                cfg.cluster,
                cfg.gcp,
                KEDA_NAMESPACE,
                KEDA_SERVICE_ACCOUNT,
                pulumi.ResourceOptions(parent=self, provider=provider),
                after=[self.cluster],
            )
        on_both = pulumi.ResourceOptions(
            parent=self, providers={"kubernetes": self.cluster.k8s_provider, "gcp": provider}
        )
        self.stores = model_stores(name, cfg, on_both, after=[*spaces, *([queues] if queues else [])])
        self.autoscalers = gpu_autoscalers(
            name,
            cfg,
            [self.monitoring, *([self.stores] if self.stores else [])],
            pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.cluster.k8s_provider}),
            keda_sa.email if keda_sa is not None else None,
            grants,
            spaces,
        )
        self.outputs = {
            **monitoring_outputs(cfg, scrape_target(cfg)),
            **autoscaling_outputs(cfg),
            **storage_outputs(cfg, self.stores),
            **queue_outputs(cfg, queues, self.cluster.kubeconfig),
        }
        """Monitoring stack outputs: `scrapeConfig`, `prometheusRules`, `monitoringIntegration` (and `autoscaling`)."""
        self.cluster_name = self.cluster.cluster_name
        self.endpoint = self.cluster.endpoint
        self.kubeconfig = self.cluster.kubeconfig
        self.gpu_node_pools = self.cluster.gpu_node_pools
        self.scrape_config = self.monitoring.scrape_config
        self.prometheus_rules = self.monitoring.prometheus_rules
        # The cluster's Kubernetes provider, for your own Kubernetes resources (a Python attribute only: the
        # multi-language package has no provider outputs).
        self.k8s_provider: k8s.Provider = self.cluster.k8s_provider
        self.gpu_nodes = stack_gpu_nodes(cfg)
        self.gpu_health = health_summary(cfg)
        """What detects and repairs each pool's GPU faults, and the post-deploy checks (the stack's `gpuHealth`
        output; a Python attribute)."""
        self.register_outputs(dict(self.outputs))

    @classmethod
    def from_config(cls, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> "GkeGpuPlatform":
        """The platform of a validated stack config (what `pulumi up` on a stack file builds)."""
        return cls(name, cast(Any, cfg), opts)


KINDS = tuple(k.value for k in GkePlatformKind)


def build(cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> dict[str, object]:
    """Build the platform and return the stack outputs."""
    platform = GkeGpuPlatform.from_config(cfg.cluster.name, cfg, opts=opts)
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
