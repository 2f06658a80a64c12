"""`GkeGpuCluster`: a GKE Standard cluster with a system pool and one GPU node pool per configured pool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..config import coldstart
from ..config.gcp import GcpConfig
from ..config.model import ClusterConfig, GpuPool
from ..config.provisioning import AutoProvisioningConfig
from ..resources.lifecycle import keep_options
from . import gpudirect, render
from .access import kube_access, node_service_account
from .network import cloud_nat


class GkeGpuClusterArgs:
    """Inputs of `GkeGpuCluster`: the typed config sections it needs."""

    def __init__(
        self,
        cluster: ClusterConfig,
        gcp: GcpConfig,
        gpu_pools: Sequence[GpuPool],
        managed_prometheus: bool = False,
        auto_provisioning: AutoProvisioningConfig | None = None,
        gcs_fuse: bool = False,
    ) -> None:
        self.cluster = cluster
        """Cluster name, release channel, deletion protection and system pool."""
        self.gcp = gcp
        """Project, region, zones and network."""
        self.gpu_pools = list(gpu_pools)
        """One GKE node pool is created per entry."""
        self.managed_prometheus = managed_prometheus
        """Turn on GKE Managed Prometheus collection (for PodMonitoring)."""
        self.auto_provisioning = auto_provisioning
        """With node auto-provisioning, `gpu_pools` are GPU classes: their ceilings become NAP's GPU
        resource limits and no fixed GPU pool is created."""
        self.gcs_fuse = gcs_fuse
        """Turn on GKE's Cloud Storage FUSE CSI driver add-on (model stores mount buckets with it)."""


class GkeGpuCluster(pulumi.ComponentResource):
    """GKE Standard with Workload Identity, shielded nodes, a small system pool and GPU node pools.

    GKE installs the NVIDIA driver (`gpu_driver_installation_config`), container toolkit and device
    plugin on GPU nodes, so nothing NVIDIA is installed here. `k8s_provider` talks to the new cluster.
    """

    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    node_service_account: pulumi.Output[str]
    gpu_node_pools: pulumi.Output[list[str]]
    k8s_provider: k8s.Provider

    def __init__(self, name: str, args: GkeGpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:gcp:GkeGpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        sa, roles = node_service_account(name, args.cluster, args.gcp, child)
        streams = (
            coldstart.nap_image_streaming(args.gpu_pools)
            if args.auto_provisioning is not None
            else any(coldstart.plan("gke-standard", p).image_streaming for p in args.gpu_pools)
        )
        # image streaming needs the Container File System API (GKE how-to, image-streaming): before NAP's cluster-wide
        # default and before the pools
        api: list[pulumi.Resource] = [streaming_api(name, args.gcp, child)] if streams else []
        waits: list[pulumi.Resource] = [*roles, *api]

        cluster_args = render.cluster_args(args.cluster, args.gcp, args.managed_prometheus, sa.email)
        fixed = args.gpu_pools if args.auto_provisioning is None else []
        if args.gcp.multiNetworking:
            cluster_args.update(gpudirect.cluster_fields())
        if args.gcs_fuse:  # off by default on Standard; updated in place (terraform-provider-google addons_config)
            cluster_args["addons_config"] = {"gcs_fuse_csi_driver_config": {"enabled": True}}
        if args.auto_provisioning is not None:
            cluster_args["cluster_autoscaling"] = render.cluster_autoscaling(
                args.auto_provisioning, args.gcp, args.gpu_pools, sa.email
            )
            cluster_args["node_pool_defaults"] = render.nap_pool_defaults(args.gpu_pools)
        cluster_opts = pulumi.ResourceOptions.merge(
            keep_options(args.cluster, child),
            pulumi.ResourceOptions(ignore_changes=list(render.CLUSTER_IGNORE_CHANGES), depends_on=api or None),
        )
        cluster = gcp.container.Cluster(f"{name}-cluster", **cluster_args, opts=cluster_opts)
        # Private nodes pull images through the NAT: pools (and so the add-ons) wait for it.
        nat = cloud_nat(name, args.cluster.name, args.gcp, child)
        networks, made = gpudirect.create_networks(name, args.cluster.name, args.gcp, fixed, child)
        pool_opts = pulumi.ResourceOptions(parent=self, depends_on=[*waits, *nat])
        system = gcp.container.NodePool(
            f"{name}-system",
            **render.system_pool_args(args.cluster, args.gcp, cluster.id, sa.email),
            opts=pool_options(pool_opts),
        )
        gpu_pools = create_gpu_pools(
            name,
            args.cluster,
            args.gcp,
            fixed,
            cluster.id,
            sa.email,
            pulumi.ResourceOptions.merge(pool_opts, pulumi.ResourceOptions(depends_on=made)) if made else pool_opts,
            own_cluster=True,
            networks=networks,
        )

        # The Kubernetes provider (and so every chart) waits for the system pool the add-ons run on: a
        # Helm release with no node to schedule on waits out its timeout and fails.
        self.kubeconfig, self.k8s_provider = kube_access(
            name, cluster, args.cluster, args.gcp, self, [system, *gpu_pools, *nat]
        )
        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        self.node_service_account = sa.email
        self.gpu_node_pools = pulumi.Output.all(*[p.name for p in gpu_pools]).apply(list)
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "node_service_account": self.node_service_account,
                "gpu_node_pools": self.gpu_node_pools,
            }
        )


def pool_options(opts: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """`opts` plus ignoring later `initialNodeCount` changes (see `render.POOL_IGNORE_CHANGES`), and
    delete-before-replace, said outright: a pool's name is fixed (it is the `cloud.google.com/gke-nodepool`
    label that placement and Kueue flavors select), so the provider deletes the old pool first anyway
    (pulumi-terraform-bridge `nameRequiresDeleteBeforeReplace`). Its nodes are gone while GKE creates the new
    pool; `gpuplane lifecycle` reports which changes do that."""
    extra = pulumi.ResourceOptions(ignore_changes=list(render.POOL_IGNORE_CHANGES), delete_before_replace=True)
    return pulumi.ResourceOptions.merge(opts, extra)


def create_gpu_pools(
    name: str,
    cluster: ClusterConfig,
    gcp_cfg: GcpConfig,
    pools: Sequence[GpuPool],
    cluster_id: pulumi.Input[str],
    sa_email: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
    own_cluster: bool = False,
    networks: Mapping[str, Sequence[tuple[str, Any, Any]]] | None = None,
) -> list[gcp.container.NodePool]:
    """One GPU node pool per configured pool, on the cluster `cluster_id` (gpuplane's own or an existing one);
    `networks`: the extra NICs of GPUDirect pools (`gpudirect.create_networks`)."""
    out = []
    for pool in pools:
        pool_args = render.gpu_pool_args(cluster, gcp_cfg, pool, cluster_id, sa_email, own_cluster)
        if networks and pool.name in networks:
            gpudirect.apply_node_pool(pool_args, pool, networks[pool.name])
        out.append(gcp.container.NodePool(f"{name}-{pool.name}", **pool_args, opts=pool_options(opts)))
    return out


STREAMING_API = "containerfilesystem.googleapis.com"


def streaming_api(name: str, gcp_cfg: GcpConfig, opts: pulumi.ResourceOptions) -> gcp.projects.Service:
    """The Container File System API, which GKE image streaming needs in the project ("Before you begin": enable
    it). Left on when the stack goes (`disable_on_destroy` off): other clusters of the project may stream too."""
    return gcp.projects.Service(
        f"{name}-image-streaming-api",
        project=gcp_cfg.project,
        service=STREAMING_API,
        disable_on_destroy=False,
        disable_dependent_services=False,
        opts=opts,
    )
