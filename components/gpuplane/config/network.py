"""Multi-node networking of a GPU pool (`gpuPools[].network`, `zones`, `placementGroup`): what the catalog
allows, checked per pool so every bad key is reported in one pass.

Refused combinations (each one error, tested in tests/test_multinode.py):
- `efa` on an instance type without EFA (catalog `EFA_INTERFACES`), `gpudirect` on a machine type without
  GPUDirect networking (catalog `GPUDIRECT`), and either on the other cloud;
- a multi-node pool over several zones, or with none: EFA instances must share one cluster placement group,
  which lives in one AZ (EC2 "Placement groups": a cluster placement group "is a logical grouping of instances
  within a single Availability Zone"), and GKE's compact placement and RoCE VPCs are zonal (GKE "Define
  compact placement", VPC "RDMA network profiles": zonal constraint);
- GPU sharing (time-slicing, MPS or MIG) on a multi-node pool: refused rather than warned. Each EFA device
  goes to one pod (EKS "Manage EFA devices": no device sharing with the device plugin) and the GPUDirect NICs
  pair with whole GPUs, so a shared GPU would either starve pods of NICs or leave the fabric idle; a pool
  that shares GPUs is an inference pool and has no use for the fabric.
- `network` on auto-provisioning platforms (GKE NAP / Autopilot, EKS Auto Mode): their node shapes are
  chosen by the cloud, so gpuplane cannot attach interfaces or extra networks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..catalog import lookup
from ..catalog.network import EFA_INTERFACES, GPUDIRECT
from ..catalog.regions import GCP_ZONE

if TYPE_CHECKING:
    from .model import StackConfig

NETWORK_CLOUD = {"efa": "aws", "gpudirect": "gcp"}
"""Pool network kind -> the only cloud that offers it."""
OTHER = {"efa": "gpudirect (GKE)", "gpudirect": "efa (EKS)"}
NETWORK_PLATFORMS = ("eks-managed", "eks-karpenter", "gke-standard")
"""Platforms whose GPU pools gpuplane shapes itself (so it can attach EFA / extra networks)."""

AWS_ZONE = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]([a-z]|-[a-z]{3}-[0-9][a-z])$")
"""An Availability Zone (`us-east-1a`) or a Local Zone (`us-east-1-dfw-2a`: EC2 "Local Zones", zone names are
the parent region, a metro code and a letter; P6e-GB200 UltraServers are in the Dallas one)."""
LOCAL_ZONE = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]-[a-z]{3}-[0-9][a-z]$")
"""An AWS Local Zone (`us-east-1-dfw-2a`): its parent region, a metro code and a letter."""


def is_local_zone(zone: str) -> bool:
    return bool(LOCAL_ZONE.match(zone))


PLACEMENT_GROUP = re.compile(r"^(pg-[0-9a-z]+|[A-Za-z0-9][-A-Za-z0-9_.]{0,254})$")


def candidate_instances(gpu_name: str, count: int, instance_types: Sequence[str] | None) -> list[str]:
    """The pool's instance types: configured, or every catalog type with `count` of its GPU."""
    if instance_types:
        return list(instance_types)
    gpu = lookup(gpu_name)
    if gpu is None or gpu.aws is None:
        return []
    return [i for i, n in gpu.aws.instances.items() if n == count]


def efa_instances(gpu_name: str, count: int, instance_types: Sequence[str] | None) -> list[str]:
    """The pool's instance types that take EFA (an EFA pool launches only these)."""
    return [i for i in candidate_instances(gpu_name, count, instance_types) if i in EFA_INTERFACES]


def efa_count(types: Sequence[str]) -> int:
    """EFA interfaces every one of `types` takes: the smallest of their counts (a launch template or
    EC2NodeClass asks for the same interfaces on each type)."""
    return min(EFA_INTERFACES[t] for t in types)


def check_zones(zones: list[str] | None, cloud: str | None) -> list[str] | None:
    """Zone names of the pool's cloud, without repeats."""
    if zones is None:
        return zones
    pattern = AWS_ZONE if cloud == "aws" else GCP_ZONE if cloud == "gcp" else None
    bad = [z for z in zones if pattern is not None and not pattern.match(z)]
    if bad:
        example = "us-east-1a" if cloud == "aws" else "us-central1-b"
        raise ValueError(f"not zone names: {bad} (e.g. {example})")
    if len(set(zones)) != len(zones):
        raise ValueError("zones must not repeat")
    return zones


def check_network(
    network: str | None,
    *,
    cloud: str | None,
    platform: str | None,
    gpu: str,
    count: int,
    machine: str | None,
    instance_types: Sequence[str] | None,
    zones: Sequence[str] | None,
    sharing: str | None,
) -> None:
    """Raise ValueError with the one reason a pool's `network` is impossible, or return."""
    if network is None:
        return
    if cloud is not None and NETWORK_CLOUD[network] != cloud:
        raise ValueError(f"{network} is not offered on {cloud.upper()}; use {OTHER[network]}")
    if platform is not None and platform not in NETWORK_PLATFORMS:
        raise ValueError(
            f"{platform} chooses its own node shapes, so gpuplane cannot attach {network}; use one of "
            f"{', '.join(NETWORK_PLATFORMS)}"
        )
    if network == "efa":
        candidates = candidate_instances(gpu, count, instance_types)
        lacking = [i for i in candidates if i not in EFA_INTERFACES]
        usable = [i for i in candidates if i in EFA_INTERFACES]
        if (instance_types and lacking) or not usable:
            offered = [f"{i} ({n})" for i, n in EFA_INTERFACES.items() if i.split(".")[0] in families(gpu)]
            raise ValueError(
                f"{', '.join(lacking or candidates) or gpu} {'has' if len(lacking) == 1 else 'have'} no EFA "
                f"(EFA interfaces per {gpu} instance type: {', '.join(offered) or 'none'})"
            )
    if network == "gpudirect" and machine not in GPUDIRECT:
        raise ValueError(
            f"{machine or gpu} has no GPUDirect networking (machine types with it: {', '.join(GPUDIRECT)})"
        )
    if zones is None or len(zones) != 1:
        what = "AWS Availability Zone" if network == "efa" else "zone"
        got = f"{len(zones)} zones" if zones else "no zones"
        raise ValueError(
            f"{network} pins a pool to one {what} (one placement group / zonal network); set zones to "
            f"exactly one, not {got}"
        )
    if sharing is not None:
        raise ValueError(
            f"{network} pools give each pod whole GPUs and their own NICs; {sharing} would share them "
            "(remove sharing, or put shared GPUs in a pool without network)"
        )


def families(gpu_name: str) -> tuple[str, ...]:
    gpu = lookup(gpu_name)
    return gpu.aws.families if gpu is not None and gpu.aws is not None else ()


GPUDIRECT_SLOTS = 8
"""GPUDirect address blocks: 32 /24s each in 192.168.0.0/16 (one /24 per extra NIC)."""


def gpudirect_slot(pool_name: str) -> int:
    """The address block of a GPUDirect pool's subnetworks, from its name alone: adding, removing or
    reordering pools never re-addresses another pool (a subnetwork's `ip_cidr_range` and the node pool's
    `additional_node_network_configs` replace). Pod networks of one cluster must not overlap (GKE
    "Set up multi-network support for Pods", limitations), so two pools may not share a block."""
    return int(hashlib.sha256(pool_name.encode()).hexdigest()[:8], 16) % GPUDIRECT_SLOTS


def gpudirect_slot_problems(cfg: StackConfig) -> list[tuple[tuple[int | str, ...], str]]:
    """GPUDirect pools whose names give them the same address block."""
    out: list[tuple[tuple[int | str, ...], str]] = []
    seen: dict[int, str] = {}
    for i, pool in enumerate(cfg.gpuPools):
        if pool.network != "gpudirect":
            continue
        slot = gpudirect_slot(pool.name)
        if slot in seen:
            out.append(
                (
                    ("gpuPools", i, "name"),
                    f"GPUDirect pools {seen[slot]!r} and {pool.name!r} would share address block {slot} (their subnets "
                    "follow the pool name and must not overlap): rename one",
                )
            )
        else:
            seen[slot] = pool.name
    return out


def pool_zone_problems(cfg: StackConfig) -> list[tuple[tuple[int | str, ...], str]]:
    """Each pool's `zones` must be zones of the stack's region (GCP `<region>-<letter>`, AWS
    `<region><letter>`); a fleet spans regions, so its pools cannot pin zones."""
    out: list[tuple[tuple[int | str, ...], str]] = []
    for i, pool in enumerate(cfg.gpuPools):
        if not pool.zones:
            continue
        at = ("gpuPools", i, "zones")
        if cfg.fleet is not None:
            out.append((at, "a fleet spans several regions: set zones per region in fleet.regions instead"))
            continue
        region, form = (cfg.gcp.region, "{}-[a-z]") if cfg.gcp else (cfg.aws.region, "{}[a-z]") if cfg.aws else ("", "")
        bad = [z for z in pool.zones if region and not re.fullmatch(form.format(re.escape(region)), z)]
        if bad:
            out.append((at, f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not in region {region}"))
    return out
