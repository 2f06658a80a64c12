"""How a GKE cluster is reached and how its nodes reach out: private nodes, master authorized networks,
and the Cloud Router + Cloud NAT that private nodes need for egress.

Pure functions return resource arguments; `cloud_nat` only creates the two resources from them.
Sources: terraform-google-kubernetes-engine modules/private-cluster (and beta-autopilot-private-cluster)
cluster.tf set `private_cluster_config { enable_private_nodes }` and `master_authorized_networks_config`;
GKE's private-cluster guide ("Create a Cloud NAT configuration") gives private nodes egress through a
Cloud Router + Cloud NAT with auto-allocated IPs in the cluster's region and network.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from ..config.gcp import GcpConfig

DEFAULT_NETWORK = "default"
"""GKE's (and the Router's) network when `gcp.network` is unset."""

NAT_LOG: dict[str, Any] = {"enable": True, "filter": "ERRORS_ONLY"}
"""Log only failed translations (port exhaustion, dropped packets): the errors worth alerting on."""


def router_name(cluster: str) -> str:
    """The Cloud Router's name (unique per project and region, as GKE cluster names are; RFC 1035, <= 63)."""
    return f"{cluster}-router"


def nat_name(cluster: str) -> str:
    """The Cloud NAT's name (unique per router)."""
    return f"{cluster}-nat"


def endpoint_args(gcp_cfg: GcpConfig) -> dict[str, Any]:
    """`gcp.container.Cluster` arguments for node IPs and API access: private nodes (public endpoint kept)
    unless `privateNodes: false`, and the master authorized networks, always set so the open default
    shows in the plan. Changing `enable_private_nodes` is an in-place update, not a replacement
    (terraform-provider-google resource_container_cluster.go: no ForceNew; updates via
    `DesiredDefaultEnablePrivateNodes`)."""
    args: dict[str, Any] = {
        # Without `gcp_public_cidrs_access_enabled: false` an enabled list still admits every Compute Engine
        # public IP (GKE API MasterAuthorizedNetworksConfig; terraform-provider-google sends it only when set).
        "master_authorized_networks_config": {
            "gcp_public_cidrs_access_enabled": False,
            "cidr_blocks": [
                {"cidr_block": n.cidrBlock, "display_name": n.displayName} for n in gcp_cfg.authorizedNetworks
            ],
        },
    }
    if gcp_cfg.privateNodes:
        args["private_cluster_config"] = {
            "enable_private_nodes": True,
            "enable_private_endpoint": gcp_cfg.privateEndpoint,
        }
    return args


def pool_network_args(gcp_cfg: GcpConfig) -> dict[str, Any]:
    """Node pool `network_config` for pools on gpuplane's own cluster: the cluster setting above is only
    the default for pools created later (`DesiredDefaultEnablePrivateNodes`), so pools say it themselves,
    which also moves pools created before private nodes became the default (an in-place update:
    terraform-provider-google resource_container_node_pool.go, `network_config.0.enable_private_nodes`)."""
    return {"network_config": {"enable_private_nodes": gcp_cfg.privateNodes}}


def wants_nat(gcp_cfg: GcpConfig) -> bool:
    """Private nodes have no public IPs, so they reach registries only through a NAT (unless one exists)."""
    return gcp_cfg.privateNodes and gcp_cfg.cloudNat


def router_args(cluster: str, gcp_cfg: GcpConfig) -> dict[str, Any]:
    """`gcp.compute.Router` in the cluster's project, region and network."""
    return {
        "name": router_name(cluster),
        "project": gcp_cfg.project,
        "region": gcp_cfg.region,
        "network": gcp_cfg.network or DEFAULT_NETWORK,
    }


def nat_args(cluster: str, gcp_cfg: GcpConfig, router: Any) -> dict[str, Any]:
    """`gcp.compute.RouterNat`: auto-allocated external IPs for the cluster's subnetwork only (all its
    ranges, so pods and nodes both get egress). With `subnetwork` unset, that is the network's subnet in the
    region, which in an auto-mode network (`default`) has the network's name. Never every subnetwork of the
    network: a subnetwork range is served by one NAT only, so `ALL_SUBNETWORKS_ALL_IP_RANGES` would make the
    next stack's NAT in the same network fail (Cloud NAT docs, "NAT rules and subnet ranges";
    terraform-provider-google compute router_nat `source_subnetwork_ip_ranges_to_nat`)."""
    subnet = gcp_cfg.subnetwork or (gcp_cfg.network or DEFAULT_NETWORK).rsplit("/", 1)[-1]
    return {
        "name": nat_name(cluster),
        "project": gcp_cfg.project,
        "region": gcp_cfg.region,
        "router": router,
        "nat_ip_allocate_option": "AUTO_ONLY",
        "source_subnetwork_ip_ranges_to_nat": "LIST_OF_SUBNETWORKS",
        "subnetworks": [{"name": subnet, "source_ip_ranges_to_nats": ["ALL_IP_RANGES"]}],
        "log_config": dict(NAT_LOG),
    }


def cloud_nat(name: str, cluster: str, gcp_cfg: GcpConfig, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """The Router and NAT (children of `opts.parent`, with its provider) when the nodes need them, else []."""
    if not wants_nat(gcp_cfg):
        return []
    router = gcp.compute.Router(f"{name}-router", **router_args(cluster, gcp_cfg), opts=opts)
    nat = gcp.compute.RouterNat(f"{name}-nat", **nat_args(cluster, gcp_cfg, router.name), opts=opts)
    return [router, nat]
