"""`EksGpuPlatform`: the EKS rows of the seed's matrix, from typed args (or a parsed `StackConfig`).

| platform | GPU capacity | NVIDIA software gpuplane installs |
|---|---|---|
| eks-managed | managed GPU node groups + cluster-autoscaler | gpu-operator (device plugin, GFD, dcgm-exporter) |
| eks-karpenter | Karpenter NodePools per GPU class | gpu-operator (as above) |
| eks-automode | Auto Mode NodePools | dcgm-exporter only (AWS runs driver and device plugin) |

No `from __future__ import annotations`: the multi-language package reads the args' annotations.
"""

from collections.abc import Callable, Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NotRequired, TypedDict, cast

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from ..args.autoscaling import AutoscalingArgs
from ..args.inputs import AmiType, ExporterHost, GpuAllocation, GpuNodes, GpuPoolArgs
from ..args.platform import (
    AwsArgs,
    ClusterArgs,
    HealthArgs,
    MonitoringArgs,
    QueuesArgs,
    SmokeTestArgs,
    ValidationArgs,
    platform_config,
)
from ..args.storage import StorageArgs
from ..autoscaling.stack import autoscaling_outputs, gpu_autoscalers, workload_namespaces
from ..catalog import NODE_IMAGES
from ..catalog.health import AGENT_ADDON
from ..catalog.platforms import Source
from ..config.model import StackConfig
from ..health.component import validation_checks
from ..health.repair import agent_configuration, agent_wanted, repair_wanted
from ..health.summary import health_summary
from ..k8s.objects import custom_resource, pinned_release
from ..kueue.stack import kueue_queues, queue_outputs
from ..monitoring.scrape import ScrapeTarget
from ..monitoring.wiring import gpu_monitoring, monitoring_outputs
from ..nvidia import dcgm, operator
from ..nvidia.dra import dra_driver
from ..scheduling.nodes import pool_target
from ..scheduling.placement import stack_gpu_nodes
from ..storage.stack import model_stores, storage_outputs
from . import efa
from . import karpenter_render as kr
from .autoscaler import ClusterAutoscaler
from .cluster import EksGpuCluster, EksGpuClusterArgs
from .karpenter import Karpenter, KarpenterArgs
from .karpenter_pools import KarpenterSettingsArgs

AUTO_MODE_NODE_CLASS = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
AUTO_MODE_EXPIRY = "336h"
"""Auto Mode replaces nodes within 21 days; two weeks keeps well inside that."""


class EksPlatformKind(StrEnum):
    """Which EKS platform: how GPU nodes are provisioned."""

    EKS_MANAGED = "eks-managed"
    """Managed GPU node groups + cluster-autoscaler; the gpu-operator."""
    EKS_KARPENTER = "eks-karpenter"
    """Karpenter NodePools per GPU class; the gpu-operator."""
    EKS_AUTOMODE = "eks-automode"
    """EKS Auto Mode NodePools; a standalone dcgm-exporter."""


class EksGpuPlatformArgs(TypedDict):
    """Arguments of `EksGpuPlatform`: the sections of an EKS stack config, in snake_case."""

    cluster: ClusterArgs
    """Cluster name and settings."""
    aws: AwsArgs
    """Region and network (an existing VPC, its subnets, admins and KMS key may be Outputs)."""
    gpu_pools: Sequence[GpuPoolArgs]
    """GPU node groups (`eks-managed`) or GPU classes (Karpenter, Auto Mode); plain values."""
    kind: NotRequired[EksPlatformKind]
    """eks-managed (default), eks-karpenter or eks-automode; plain."""
    karpenter: NotRequired[KarpenterSettingsArgs]
    """Karpenter disruption, expiry and AMI version (`eks-karpenter` only)."""
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
    """The GPU exporter of the platform's metrics source (the matrix): the gpu-operator's dcgm-exporter,
    or the standalone chart's in `monitoring.namespace` (Auto Mode)."""
    if cfg.platform_spec.metrics is Source.DCGM_EXPORTER:
        return ScrapeTarget(
            namespace=cfg.monitoring.namespace,
            service_labels=dcgm.service_labels(),
            port_name=dcgm.METRICS_PORT_NAME,
            pod_labels=dcgm.pod_labels(),
            daemonset=dcgm.DAEMONSET,
        )
    return ScrapeTarget(
        namespace=operator.NAMESPACE,
        service_labels=operator.EXPORTER_LABELS,
        port_name=operator.EXPORTER_PORT_NAME,
        pod_labels=operator.EXPORTER_LABELS,
        daemonset=operator.EXPORTER_DAEMONSET,
    )


def operator_args(cfg: StackConfig) -> operator.GpuOperatorArgs:
    """All pools share one image profile (config validation), so the first pool's image decides."""
    return operator.GpuOperatorArgs(
        node_image=AmiType(NODE_IMAGES[cfg.gpuPools[0].amiType].ami_type), gpu_nodes=stack_gpu_nodes(cfg)
    )


class EksGpuPlatform(pulumi.ComponentResource):
    """A whole EKS GPU platform: VPC (or yours), cluster, GPU capacity (managed node groups, Karpenter or
    Auto Mode), the NVIDIA software the platform lacks and GPU monitoring, with its own AWS provider."""

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (secret)."""
    oidc_provider_arn: pulumi.Output[str]
    """The cluster's IAM OIDC provider (for IRSA roles)."""
    vpc_id: pulumi.Output[str]
    """The VPC the cluster runs in."""
    gpu_node_groups: pulumi.Output[list[str]]
    """Names of the managed GPU node groups (none with Karpenter or Auto Mode)."""
    scrape_config: pulumi.Output[str]
    """The `gpu-metrics` Prometheus scrape job (YAML)."""
    prometheus_rules: pulumi.Output[str]
    """The GPU recording and alerting rules (a Prometheus rules file)."""
    gpu_nodes: list[GpuNodes]
    """Per GPU pool or class: its nodes' labels, taints, resource and ceiling, for `gpuplane.placement`,
    `KueueQueues` and your own workloads."""

    def __init__(self, name: str, args: EksGpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """The whole EKS platform from `EksGpuPlatformArgs` (the sections of a stack config), or from a
        validated stack config (`gpuplane.parse_config`; typed: `EksGpuPlatform.from_config`): an AWS provider,
        `EksGpuCluster`, the platform's GPU capacity (cluster-autoscaler, Karpenter or Auto Mode NodePools),
        its NVIDIA software (`GpuOperator` or `DcgmExporter`), `GpuMonitoring` and the smoke tests.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        cfg: StackConfig
        if isinstance(args, StackConfig):
            cfg = args
        else:
            cfg, deferred = platform_config(f"EksGpuPlatform {name!r}", KINDS, args, EksGpuPlatformArgs)
            opts = deferred.options(opts)
        super().__init__("gpuplane:aws:EksGpuPlatform", name, None, opts)
        assert cfg.aws is not None  # config validation requires it for EKS platforms
        provider = aws.Provider(f"{name}-aws", region=cfg.aws.region, opts=pulumi.ResourceOptions(parent=self))
        on_aws = pulumi.ResourceOptions(parent=self, providers={"aws": provider})
        fixed = cfg.platform_spec.fixed_pools
        self.cluster = EksGpuCluster(
            name,
            EksGpuClusterArgs(
                cfg.cluster,
                cfg.aws,
                cfg.gpuPools if fixed else [],
                auto_mode=cfg.platform == "eks-automode",
                system_autoscaled=fixed,  # cluster-autoscaler runs with fixed pools only
                health=cfg.health,
            ),
            opts=on_aws,
        )
        on_k8s = pulumi.ResourceOptions(
            parent=self, providers={"aws": provider, "kubernetes": self.cluster.k8s_provider}
        )
        self.node_monitoring = node_monitoring_agent(name, cfg, self.cluster.cluster_name, on_aws)
        PROVISIONERS[cfg.platform](self, name, cfg, on_k8s)
        efa_device_plugin(name, cfg, on_k8s)
        self.dra_driver = dra_driver(name, cfg, on_k8s)
        self.exporter = NVIDIA[cfg.platform](self, name, cfg, on_k8s)
        self.monitoring = gpu_monitoring(f"{name}-monitoring", cfg, scrape_target(cfg), self.exporter, opts=on_k8s)
        validation_checks(name, cfg, [self.exporter, *([self.dra_driver] if self.dra_driver else [])], on_k8s)
        queues = kueue_queues(name, cfg, on_k8s)
        spaces = workload_namespaces(name, cfg, on_k8s)  # the workloads' and the stores', created once
        waits = [*spaces, *([queues] if queues else [])]
        self.stores = model_stores(name, cfg, on_k8s, self.cluster.cluster_name, waits)
        stores = [self.stores] if self.stores else []
        self.autoscalers = gpu_autoscalers(name, cfg, [self.monitoring, *stores], on_k8s, spaces=spaces)
        self.outputs = {
            **monitoring_outputs(cfg, scrape_target(cfg)),
            **autoscaling_outputs(cfg),
            **storage_outputs(cfg, self.stores),
            **queue_outputs(cfg, queues, self.cluster.kubeconfig),
        }
        """Monitoring stack outputs: `scrapeConfig`, `prometheusRules`, `monitoringIntegration` (and `autoscaling`)."""
        c = self.cluster
        self.cluster_name, self.kubeconfig, self.vpc_id = c.cluster_name, c.kubeconfig, c.vpc_id
        self.oidc_provider_arn, self.gpu_node_groups = c.oidc_provider_arn, c.gpu_node_groups
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
    def from_config(cls, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> "EksGpuPlatform":
        """The platform of a validated stack config (what `pulumi up` on a stack file builds)."""
        return cls(name, cast(Any, cfg), opts)

    def _cluster_autoscaler(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions) -> None:
        assert cfg.aws is not None
        ClusterAutoscaler(
            f"{name}-autoscaler",
            cfg.cluster.name,
            cfg.aws.region,
            self.cluster.oidc_provider_arn,
            self.cluster.oidc_issuer,
            opts=opts,
        )

    def _karpenter(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions) -> None:
        assert cfg.aws is not None and cfg.karpenter is not None
        args = KarpenterArgs(
            cfg.cluster,
            cfg.aws.region,
            cfg.gpuPools,
            cfg.karpenter,
            subnet_ids=cfg.aws.privateSubnetIds,
            ssm_access=cfg.aws.ssmAccess,
            cluster_name=self.cluster.cluster_name,
            node_repair=repair_wanted(cfg),
        )
        Karpenter(f"{name}-karpenter", args, opts=opts)

    def _auto_mode_pools(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions) -> None:
        """GPU NodePools on Auto Mode's default NodeClass, tainted like every gpuplane GPU pool."""
        for pool in cfg.gpuPools:
            obj = kr.gpu_node_pool(
                cfg.cluster,
                pool,
                AUTO_MODE_NODE_CLASS,
                "eks.amazonaws.com",
                {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"},
                AUTO_MODE_EXPIRY,
            )
            custom_resource(f"{name}-{pool.name}", obj, opts)

    def _gpu_operator(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions) -> pulumi.Resource:
        return operator.GpuOperator(f"{name}-gpu-operator", operator_args(cfg), opts=opts)

    def _dcgm_exporter(self, name: str, cfg: StackConfig, opts: pulumi.ResourceOptions) -> pulumi.Resource:
        args = dcgm.DcgmExporterArgs(
            host=ExporterHost.EKS_AUTOMODE,
            gpu_nodes=stack_gpu_nodes(cfg),
            max_gpu_nodes=sum(p.maxNodes for p in cfg.gpuPools),
            namespace=cfg.monitoring.namespace,
        )
        return dcgm.DcgmExporter(f"{name}-dcgm", args, opts=opts)


def efa_device_plugin(name: str, cfg: StackConfig, opts: pulumi.ResourceOptions) -> pulumi.Resource | None:
    """The EFA device plugin (advertises `vpc.amazonaws.com/efa`) on the EFA pools' nodes, when there are any."""
    pools = [p for p in cfg.gpuPools if efa.is_efa(p)]
    if not pools:
        return None
    targets = [pool_target("aws", cfg.cluster.name, p) for p in pools]
    return pinned_release(
        f"{name}-efa-device-plugin",
        efa.DEVICE_PLUGIN_RELEASE,
        efa.DEVICE_PLUGIN_RELEASE,
        efa.DEVICE_PLUGIN_NAMESPACE,
        efa.device_plugin_values(targets, pools),
        opts=opts,
    )


Step = Callable[[EksGpuPlatform, str, StackConfig, pulumi.ResourceOptions], object]

PROVISIONERS: MappingProxyType[str, Step] = MappingProxyType(
    {
        "eks-managed": EksGpuPlatform._cluster_autoscaler,
        "eks-karpenter": EksGpuPlatform._karpenter,
        "eks-automode": EksGpuPlatform._auto_mode_pools,
    }
)
"""Platform -> what brings GPU capacity (the node groups themselves come from `EksGpuCluster`)."""

NVIDIA: MappingProxyType[str, Callable[[EksGpuPlatform, str, StackConfig, pulumi.ResourceOptions], pulumi.Resource]] = (
    MappingProxyType(
        {
            "eks-managed": EksGpuPlatform._gpu_operator,
            "eks-karpenter": EksGpuPlatform._gpu_operator,
            "eks-automode": EksGpuPlatform._dcgm_exporter,
        }
    )
)
"""Platform -> the NVIDIA software gpuplane installs (the seed's matrix, EKS column)."""

KINDS = tuple(k.value for k in EksPlatformKind)


def build(cfg: StackConfig, opts: pulumi.ResourceOptions | None = None) -> dict[str, object]:
    """Build the platform and return the stack outputs."""
    platform = EksGpuPlatform.from_config(cfg.cluster.name, cfg, opts=opts)
    c = platform.cluster
    return {
        "platform": cfg.platform,
        "clusterName": c.cluster_name,
        "kubeconfig": c.kubeconfig,
        "oidcProviderArn": c.oidc_provider_arn,
        "vpcId": c.vpc_id,
        "gpuNodeGroups": c.gpu_node_groups,
        "exporterNamespace": scrape_target(cfg).namespace,
        **platform.outputs,
    }


def node_monitoring_agent(
    name: str, cfg: StackConfig, cluster_name: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> aws.eks.Addon | None:
    """The EKS node monitoring agent add-on where gpuplane manages the nodes (`health.detection`): it sets the
    `AcceleratedHardwareReady` condition from XID and DCGM faults, which node repair acts on. Its dcgm-server
    tolerates the GPU taints (`health.repair.AGENT_TOLERATIONS`: by default it would not run on them)."""
    if not agent_wanted(cfg):
        return None
    return aws.eks.Addon(
        f"{name}-node-monitoring-agent",
        cluster_name=cluster_name,
        addon_name=AGENT_ADDON,
        configuration_values=agent_configuration(),
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="OVERWRITE",
        opts=opts,
    )
