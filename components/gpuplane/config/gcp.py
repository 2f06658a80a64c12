"""GCP section of the stack config (`gpuplane:gcp`): where a GKE cluster lives and how it is reached."""

from __future__ import annotations

import ipaddress
import re

from pydantic import Field, ValidationInfo, field_validator

from .base import Model, repeated, shaped, unknown
from .regions import known_region, known_zones

GKE_DEFAULT_ZONES = 3
"""Zones a regional cluster's node pools span when none are configured (GKE regional clusters guide)."""

OPEN = "0.0.0.0/0"
"""The whole IPv4 internet, which no endpoint admits unless the stack says so."""


class AuthorizedNetwork(Model):
    """One CIDR block allowed to reach the cluster's Kubernetes API endpoint (GKE master authorized networks)."""

    cidrBlock: str
    """IPv4 CIDR block, e.g. `203.0.113.0/24` (host bits must be zero)."""
    displayName: str = ""
    """Label shown in the GKE console."""

    @field_validator("cidrBlock")
    @classmethod
    def _cidr(cls, v: str) -> str:
        try:
            ipaddress.IPv4Network(v)
        except ValueError as exc:
            raise ValueError(f"not an IPv4 CIDR block: {exc}") from None
        return v


class GcpConfig(Model):
    """Where a GKE cluster lives and who can reach it."""

    project: str | None = Field(
        default=None,
        validate_default=True,
        json_schema_extra={"stack": "required"},  # a component's caller may leave it to the provider
        pattern=shaped(
            r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$",
            "must be a GCP project ID: 6 to 30 lowercase letters, digits or '-', starting with a letter (e.g. acme-ml)",
        ),
    )
    """GCP project ID."""
    region: str = Field(pattern=shaped(r"^[a-z]+-[a-z]+[0-9]+$", "must look like us-central1"))
    """Region of the (regional) cluster, e.g. `us-central1`: one the catalog lists
    (components/gpuplane/catalog/regions.py) and, for each pool, one that offers its GPU, unless
    `allowUnlistedRegions`."""
    zones: list[str] = Field(default_factory=list)
    """Zones for nodes (`node_locations`): zones of `region` that offer your GPUs; empty means GKE's default."""
    network: str | None = None
    """VPC network name or self link; unset uses `default`."""
    subnetwork: str | None = None
    """Subnetwork name or self link; unset uses the network's subnet in the region."""
    privateNodes: bool = True
    """Nodes get internal IPs only (GKE private nodes, `private_cluster_config.enable_private_nodes`), as EKS
    nodes sit in private subnets; their egress (image pulls, NVIDIA downloads) goes through Cloud NAT. The
    API endpoint stays public, limited to `authorizedNetworks`, unless `privateEndpoint`. Set false for nodes
    with public IPs."""
    cloudNat: bool = True
    """With `privateNodes`, create a Cloud Router and Cloud NAT (`<cluster>-router`, `<cluster>-nat`) for
    the cluster's subnetwork only (with `subnetwork` unset, the network's subnet in the region, which an
    auto-mode network names after itself). Set false when the network already has a NAT for that
    subnetwork (another stack's cluster in it, say): GCP allows one NAT per subnetwork range."""
    privateEndpoint: bool = False
    """Serve the Kubernetes API on the control plane's internal IP only (`enable_private_endpoint`; needs
    `privateNodes`). `pulumi up` then installs the charts from inside the VPC (a CI runner or bastion
    there, or through Cloud VPN/Interconnect), and `authorizedNetworks` may name internal ranges."""
    authorizedNetworks: list[AuthorizedNetwork] = Field(default_factory=list, max_length=50)
    """CIDR blocks allowed to reach the Kubernetes API endpoint (GKE master authorized networks, at most
    50): where `pulumi up`, CI and kubectl run from. Default: none, so the public endpoint admits no
    outside address (Compute Engine's public IPs are kept out too, `gcp_public_cidrs_access_enabled:
    false`): list your runners' egress here, or set `privateEndpoint` and run `pulumi up` from inside the
    VPC (a CI runner there, Cloud VPN or Interconnect). `[{cidrBlock: 0.0.0.0/0}]` opens the endpoint to
    the internet (Google IAM still required) and must be said."""

    multiNetworking: bool = False
    """GKE multi-networking on dataplane V2 (`enable_multi_networking`, `datapath_provider:
    ADVANCED_DATAPATH`), which `network: gpudirect` pools need. A cluster setting of its own, so adding or
    removing GPUDirect pools never changes the cluster: turning it on (or off) later replaces an existing
    cluster (the datapath provider cannot change in place), so decide when the cluster is created."""

    @field_validator("project")
    @classmethod
    def _project_known(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None and "gcp.project" not in unknown(info):
            raise ValueError("required key is missing")
        return v

    @field_validator("region")
    @classmethod
    def _known_region(cls, v: str, info: ValidationInfo) -> str:
        return known_region("gcp", v, info)

    @field_validator("zones")
    @classmethod
    def _zones_in_region(cls, v: list[str], info: ValidationInfo) -> list[str]:
        region = info.data.get("region")
        bad = [z for z in v if region and not re.fullmatch(rf"{re.escape(region)}-[a-z]", z)]
        if bad:
            raise ValueError(f"zones {bad} are not zones of region {region!r}")
        if len(set(v)) != len(v):
            raise ValueError("zones must not repeat")
        return known_zones(region, v, info) if region else v

    @field_validator("privateEndpoint")
    @classmethod
    def _private_endpoint_needs_private_nodes(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("privateNodes") is False:
            raise ValueError("a private endpoint needs privateNodes: true (GKE private clusters)")
        return v

    @field_validator("authorizedNetworks")
    @classmethod
    def _unique_blocks(cls, v: list[AuthorizedNetwork]) -> list[AuthorizedNetwork]:
        blocks = [n.cidrBlock for n in v]
        dupes = repeated(blocks)
        if dupes:
            raise ValueError(f"CIDR blocks must not repeat (repeated: {', '.join(dupes)})")
        return v
