"""Pure functions that turn typed config into pulumi_gcp resource arguments for a GKE Standard cluster.

The `GkeGpuCluster` component only wires these together, so tests can check every argument directly.
Enum values here are the GKE API's (container v1 discovery document); tests check them against it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..catalog import lookup
from ..config import coldstart
from ..config.capacity import gcp_pool_zones
from ..config.dra import claims_gpus
from ..config.gcp import GKE_DEFAULT_ZONES, GcpConfig
from ..config.model import ClusterConfig, GpuPool
from ..config.prices import machine_of
from ..config.provisioning import AutoProvisioningConfig
from ..scheduling.nodes import pool_labels, pool_taints
from ..scheduling.sharing import gke_accelerator_sharing
from .capacity_render import pool_capacity
from .network import endpoint_args, pool_network_args

TAINT_EFFECTS: Mapping[str, str] = MappingProxyType(
    {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
)
"""Kubernetes taint effect -> GKE API NodeTaint.effect."""

NODE_ROLES: tuple[str, ...] = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")
"""Project roles for the nodes' own service account (Google's least-privilege node SA, plus image pulls)."""

OAUTH_SCOPES: tuple[str, ...] = ("https://www.googleapis.com/auth/cloud-platform",)
"""With a dedicated node service account, IAM (not scopes) limits access, as Google recommends."""

NODE_METADATA: Mapping[str, str] = MappingProxyType({"disable-legacy-endpoints": "true"})

GPU_POOL_UPGRADE: Mapping[str, Any] = MappingProxyType({"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1})
"""GPU pools upgrade in place one node at a time: surge would need spare GPU quota that is rarely there."""


def shielded() -> dict[str, bool]:
    """Shielded VM settings for every node: secure boot and integrity monitoring."""
    return {"enable_secure_boot": True, "enable_integrity_monitoring": True}


SA_ID_MAX = 30
"""GCP service-account IDs: 6-30 characters, `^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$`, unique per project
(IAM API serviceAccounts.create, `accountId`)."""
SA_SUFFIX = "-nodes"
SA_HASH = 8
"""Hex digits of the name's SHA-256 kept when a long cluster name must be shortened."""

POOL_IGNORE_CHANGES = ["initialNodeCount"]
"""GKE node pool `initial_node_count` is ForceNew and per zone (terraform-provider-google
resource_container_node_pool.go), and the autoscaler owns the size after creation: set it once and
ignore later changes, as terraform-google-kubernetes-engine does (modules/*/cluster.tf node pools,
`lifecycle { ignore_changes = [initial_node_count] }`), so changing `minNodes` never replaces a pool."""

CLUSTER_IGNORE_CHANGES = ["nodeConfig"]
"""The cluster's `node_config` only configures the default pool, which `removeDefaultNodePool` deletes right
after create; Read then stores the first node pool's config (or none), and `node_config` is ForceNew, so
without this the second `up` replaces the cluster (terraform-provider-google resource_container_cluster.go
Read; cluster-toolkit modules/scheduler/gke-cluster ignores it "since it's being removed after creation").
The read-back model is `gpuplane.plan.deploy.readback.READ_BACK`."""


def node_service_account_id(cluster: str) -> str:
    """Account ID for the cluster's node service account: `<cluster>-nodes` when that fits in 30
    characters (so existing accounts keep their ID), else the name cut short plus 8 hex digits of its
    SHA-256, so fleet clusters that share a long prefix (`research-gpu-platform-us-...`) never collide."""
    return service_account_id(cluster, SA_SUFFIX)


def service_account_id(cluster: str, suffix: str) -> str:
    """`<cluster><suffix>` when it fits in 30 characters, else the name cut short plus 8 hex digits of its SHA-256
    (`node_service_account_id`'s rule, for any of the cluster's accounts)."""
    plain = f"{cluster}{suffix}"
    if len(plain) <= SA_ID_MAX:
        return plain
    digest = hashlib.sha256(cluster.encode()).hexdigest()[:SA_HASH]
    keep = SA_ID_MAX - len(suffix) - SA_HASH - 1
    return f"{cluster[:keep].rstrip('-')}-{digest}{suffix}"


def initial_node_count(total_min: int, zones: Sequence[str] | None) -> int:
    """Per-zone `initial_node_count` that starts a pool at (at least) its total minimum: the minimum
    spread over the pool's zones, rounded up (GKE's three default zones when none are configured)."""
    return math.ceil(total_min / (len(zones) if zones else GKE_DEFAULT_ZONES))


def system_zones(max_nodes: int, zones: Sequence[str]) -> list[str]:
    """The system pool's zones: the cluster's, but no more than its maximum node count. GKE starts
    `initial_node_count` nodes in every zone of a pool, so a pool over more zones than its total maximum
    starts above that maximum (four fleet zones, at most three system nodes)."""
    return list(zones)[: max(max_nodes, 1)] if zones else []


def machine_type(pool: GpuPool) -> str:
    """The pool's machine type: the configured one, or the catalog's for its GPU count."""
    return machine_of("gcp", pool)


def accelerator(pool: GpuPool) -> str:
    """The GKE accelerator type of the pool's GPU (also the `cloud.google.com/gke-accelerator` label)."""
    gpu = lookup(pool.gpu)
    assert gpu is not None and gpu.gcp is not None, f"{pool.gpu} has no GCP offer"
    return gpu.gcp.accelerator


def pool_zones(pool: GpuPool, gcp: GcpConfig | None) -> list[str] | None:
    """Zones for a GPU pool (`config.capacity.gcp_pool_zones`: its own, else the cluster's zones that offer
    its GPU), or None when the catalog has no data for the region or the region is not known yet (`gcp`
    None: a component given the location as an Output): the cluster's node locations then apply."""
    if gcp is None:
        return list(pool.zones or []) or None
    return gcp_pool_zones(pool, gcp.region, gcp.zones)


def known_project(gcp: GcpConfig) -> str:
    """The stack's project (a stack file always names it; only a component's caller may leave it unknown)."""
    assert gcp.project is not None, "gcp.project is unknown"
    return gcp.project


def cluster_args(
    cluster: ClusterConfig, gcp: GcpConfig, managed_prometheus: bool = False, sa_email: Any = None
) -> dict[str, Any]:
    """Arguments of `gcp.container.Cluster`: regional, release channel, Workload Identity, no default pool."""
    args: dict[str, Any] = {
        "name": cluster.name,
        "project": gcp.project,
        "location": gcp.region,
        "remove_default_node_pool": True,
        "initial_node_count": 1,
        "deletion_protection": cluster.deletionProtection,
        "release_channel": {"channel": cluster.releaseChannel},
        "workload_identity_config": {"workload_pool": f"{known_project(gcp)}.svc.id.goog"},
        "enable_shielded_nodes": True,
        "ip_allocation_policy": {"stack_type": "IPV4"},
        "resource_labels": {"managed-by": "gpuplane"},
        **endpoint_args(gcp),
    }
    if sa_email is not None:
        # The default pool exists briefly before removal; give it the nodes' own account, not the
        # default compute service account that many organisations disable, and shielded nodes with
        # secure boot, which an org policy (compute.requireShieldedVm) may demand of every VM. Ignored after
        # create (CLUSTER_IGNORE_CHANGES), so this only shapes new clusters.
        args["node_config"] = {
            "service_account": sa_email,
            "oauth_scopes": list(OAUTH_SCOPES),
            "shielded_instance_config": shielded(),
            "metadata": dict(NODE_METADATA),
        }
    optional = {
        "node_locations": gcp.zones or None,
        "network": gcp.network,
        "subnetwork": gcp.subnetwork,
        "min_master_version": cluster.kubernetesVersion,
    }
    args.update({k: v for k, v in optional.items() if v is not None})
    if managed_prometheus:
        args["monitoring_config"] = {
            "enable_components": ["SYSTEM_COMPONENTS"],
            "managed_prometheus": {"enabled": True},
        }
    return args


def _node_config(
    machine: str, disk_gb: int, disk_type: str, sa_email: Any, labels: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "machine_type": machine,
        "disk_size_gb": disk_gb,
        "disk_type": disk_type,
        "service_account": sa_email,
        "oauth_scopes": list(OAUTH_SCOPES),
        "metadata": dict(NODE_METADATA),
        "labels": dict(labels),
        "shielded_instance_config": shielded(),
        "workload_metadata_config": {"mode": "GKE_METADATA"},
    }


def system_pool_args(cluster: ClusterConfig, gcp: GcpConfig, cluster_id: Any, sa_email: Any) -> dict[str, Any]:
    """Arguments of the non-GPU system `gcp.container.NodePool` that runs add-ons."""
    sp = cluster.systemPool
    assert sp.machineType is not None  # filled in per cloud by config validation
    zones = system_zones(sp.maxNodes, gcp.zones)
    return {
        "name": "system",
        "project": gcp.project,
        "location": gcp.region,
        "cluster": cluster_id,
        # Always sent when known: node_locations is Optional+Computed, so a subset once stored would stay
        # after maxNodes grows if the input merely dropped out (terraform-provider-google node pool schema).
        **({"node_locations": zones} if zones else {}),
        "initial_node_count": initial_node_count(sp.minNodes, zones),
        "autoscaling": {"total_min_node_count": sp.minNodes, "total_max_node_count": sp.maxNodes},
        "management": {"auto_repair": True, "auto_upgrade": True},
        **pool_network_args(gcp),
        "node_config": _node_config(
            sp.machineType, sp.diskSizeGb, "pd-balanced", sa_email, {"gpuplane.io/role": "system"}
        ),
    }


GKE_DRIVER_OFF = "INSTALLATION_DISABLED"
"""GKE's `gpuDriverVersion` for a node pool whose driver someone else installs (container v1 API)."""


def driver_version(pool: GpuPool) -> str:
    """GKE installs the pool's driver (`driverVersion`), except on pools that claim GPUs through DRA: GKE
    documents DRA only with its driver installation disabled and the driver installed by its installer
    DaemonSet (GKE "Set up DRA"; `gcp.driver_installer`)."""
    return GKE_DRIVER_OFF if claims_gpus(pool) else pool.driverVersion


def gpu_pool_args(
    cluster: ClusterConfig,
    gcp: GcpConfig | None,
    pool: GpuPool,
    cluster_id: Any,
    sa_email: Any,
    own_cluster: bool = True,
) -> dict[str, Any]:
    """Arguments of one GPU `gcp.container.NodePool`: accelerators with the GKE-managed driver,
    spot, autoscaling from min to max (totals across zones), GPU taint, labels, shielded nodes. On a
    cluster gpuplane did not create (`own_cluster=False`) node IPs follow that cluster's own default.
    `gcp` None (a component's caller gave the location as an Output): no project or location here (the
    caller sets them), and the zones are the pool's own or else the cluster's node locations."""
    node_config = _node_config(
        machine_type(pool), pool.diskSizeGb, pool.diskType, sa_email, pool_labels(cluster.name, pool, "gcp")
    )
    node_config.update(
        {
            "spot": pool.spot,
            "guest_accelerators": [
                {
                    "type": accelerator(pool),
                    "count": pool.gpusPerNode,
                    "gpu_driver_installation_config": {"gpu_driver_version": driver_version(pool)},
                    **gke_accelerator_sharing(pool),
                }
            ],
            "taints": [
                {"key": t.key, "value": t.value, "effect": TAINT_EFFECTS[t.effect]} for t in pool_taints("gcp", pool)
            ],
            **cold_start_node_config(pool),
        }
    )
    zones = pool_zones(pool, gcp)
    args = {
        "name": pool.name,
        **({"project": gcp.project, "location": gcp.region} if gcp is not None else {}),
        "cluster": cluster_id,
        **({"node_locations": zones} if zones else {}),
        "initial_node_count": initial_node_count(pool.minNodes, zones or (gcp.zones if gcp else None)),
        "autoscaling": {
            "total_min_node_count": pool.minNodes,
            "total_max_node_count": pool.maxNodes,
            "location_policy": "ANY",
        },
        "management": {"auto_repair": True, "auto_upgrade": True},
        "upgrade_settings": dict(GPU_POOL_UPGRADE),
        **(pool_network_args(gcp) if own_cluster and gcp is not None else {}),
        "node_config": node_config,
    }
    return pool_capacity(pool, args)


def cold_start_node_config(pool: GpuPool) -> dict[str, Any]:
    """A GKE Standard pool's image streaming (`gcfs_config`, updated in place) and secondary boot disk
    (`secondary_boot_disks`, CONTAINER_IMAGE_CACHE; ForceNew, so changing it replaces the pool), from
    `gpuPools[].coldStart` (docs/cold-start.md; GKE how-tos image-streaming and data-container-image-preloading)."""
    cold = coldstart.plan("gke-standard", pool)
    disk = cold.secondary_boot_disk
    return {
        "gcfs_config": {"enabled": cold.image_streaming},
        **({"secondary_boot_disks": [{"disk_image": disk, "mode": "CONTAINER_IMAGE_CACHE"}]} if disk else {}),
    }


def nap_pool_defaults(pools: Sequence[GpuPool]) -> dict[str, Any]:
    """gke-nap's cluster-wide image streaming, which auto-provisioned pools inherit: the cluster's
    `node_pool_defaults.node_config_defaults.gcfs_config` (pulumi_gcp container Cluster)."""
    return {"node_config_defaults": {"gcfs_config": {"enabled": coldstart.nap_image_streaming(pools)}}}


def gpu_limits(pools: Sequence[GpuPool]) -> dict[str, int]:
    """Accelerator -> most GPUs of that type the classes allow (sum of maxNodes x gpusPerNode)."""
    limits: dict[str, int] = {}
    for p in pools:
        limits[accelerator(p)] = limits.get(accelerator(p), 0) + p.maxNodes * p.gpusPerNode
    return limits


def cluster_autoscaling(
    ap: AutoProvisioningConfig, gcp: GcpConfig, pools: Sequence[GpuPool], sa_email: Any
) -> dict[str, Any]:
    """Node auto-provisioning: the seed's sample (cpu, memory and per-GPU-type limits, locations,
    auto-repair/upgrade, shielded nodes, disk size), plus an autoscaling profile."""
    return {
        "enabled": True,
        "autoscaling_profile": ap.profile,
        "resource_limits": [
            {"resource_type": "cpu", "minimum": 0, "maximum": ap.cpuMax},
            {"resource_type": "memory", "minimum": 0, "maximum": ap.memoryGbMax},
            *({"resource_type": acc, "minimum": 0, "maximum": n} for acc, n in gpu_limits(pools).items()),
        ],
        "auto_provisioning_locations": ap.locations or list(gcp.zones) or None,
        "auto_provisioning_defaults": {
            "service_account": sa_email,
            "oauth_scopes": list(OAUTH_SCOPES),
            "disk_size": ap.diskSizeGb,
            "disk_type": "pd-balanced",
            "management": {"auto_repair": True, "auto_upgrade": True},
            "shielded_instance_config": shielded(),
        },
    }
