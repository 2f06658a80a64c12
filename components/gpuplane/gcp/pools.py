"""`GkeGpuNodePools`: gpuplane's tainted, autoscaled GPU node pools on a GKE Standard cluster you declare
or already run. Typed args (no `from __future__ import annotations`: the multi-language package reads
these annotations)."""

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp

from ..args.checks import check, plain, pool_config, require
from ..args.inputs import GpuNodes, GpuPoolArgs
from ..catalog.regions import gcp_region_of
from ..config.base import HINTS
from ..config.gcp import GcpConfig
from ..k8s.clusters import ClusterFacts, cluster_problems, facts, from_cluster, is_cluster, label_of
from ..scheduling.placement import gpu_nodes
from . import render
from .cluster import pool_options


class GkeGpuNodePoolsArgs(TypedDict):
    """Arguments of `GkeGpuNodePools`."""

    cluster: pulumi.Input[str]
    """The cluster: its ID (`projects/P/locations/L/clusters/C`, e.g. `gcp.container.Cluster(...).id`) or name.
    Or your `gcp.container.Cluster` itself: it gives its ID and what is unset of `location`, `project` and
    `cluster_label` (its resource name)."""
    location: NotRequired[pulumi.Input[str]]
    """The cluster's region (or zone, for a zonal cluster), e.g. `cluster.location`; unset: `cluster`'s
    (required when `cluster` is an ID or name)."""
    node_service_account: pulumi.Input[str]
    """Service account email the GPU nodes run as."""
    gpu_pools: Sequence[GpuPoolArgs]
    """One GPU node pool per entry (checked like `gpuplane:gpuPools` in a stack)."""
    project: NotRequired[pulumi.Input[str]]
    """The cluster's project; unset: the provider's."""
    zones: NotRequired[Sequence[str]]
    """Zones for GPU nodes (each pool gets those that offer its GPU); unset: the catalog's zones of the
    region that offer the GPU (or the cluster's node locations when `location` is not known yet)."""
    cluster_label: NotRequired[str]
    """Value of the nodes' `gpuplane.io/cluster` label; unset: the cluster's name when `cluster` is a
    plain string, else this component's name."""
    allow_unlisted_regions: NotRequired[bool]
    """Accept a region or zone newer than gpuplane's catalog (its GPU zones are then not checked)."""


GKE_FILLS: dict[str, Callable[[ClusterFacts], Any]] = {"location": lambda f: f.location, "project": lambda f: f.project}
"""Arguments a `gcp.container.Cluster` gives (`clusters.from_cluster`)."""


_PROJECT = GcpConfig.model_fields["project"].metadata
"""What `gcp.project` requires of a project ID (its pattern), checked even when the location is unknown."""


def project_problems(project: Any) -> list[tuple[str, str]]:
    """A plain `project` that is not a project ID (checked even when the location, and so the rest of the
    `gcp` section, is unknown), in the words `gcp.project`'s own check uses."""
    if not isinstance(project, str):
        return []
    pattern = next(str(m.pattern) for m in _PROJECT if getattr(m, "pattern", None))
    if re.fullmatch(pattern, project):
        return []
    return [("project", f"{project!r} {HINTS[pattern]}")]


def gpudirect_problems(pools: Any) -> list[tuple[str, str]]:
    """GPUDirect pools need the per-NIC VPCs and network objects a gpuplane cluster builds (`GkeGpuPlatform`),
    which this component does not."""
    return [
        (
            f"gpu_pools[{i}].network",
            "GkeGpuNodePools builds no GPUDirect networks: use GkeGpuPlatform for gpudirect pools",
        )
        for i, p in enumerate(pools or [])
        if isinstance(p, Mapping) and str(plain(p.get("network"))) == "gpudirect"
    ]


class GkeGpuNodePools(pulumi.ComponentResource):
    """gpuplane's GPU node pools on an existing GKE Standard cluster: one tainted, autoscaled pool per
    entry, with the GKE-managed NVIDIA driver (GKE also runs the device plugin)."""

    node_pool_names: pulumi.Output[list[str]]
    """Names of the GPU node pools."""
    gpu_nodes: list[GpuNodes]
    """Per pool: its nodes' labels and taints, the GPU resource name and placement expressions."""

    def __init__(self, name: str, args: GkeGpuNodePoolsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """GPU node pools `{name}-{pool}` on `args["cluster"]`; see `GkeGpuNodePoolsArgs` for each argument.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        where = f"GkeGpuNodePools {name!r}"
        label, label_arg = label_of(args, "cluster", name, by_id=True)
        wrong = cluster_problems(args, "gcp") if is_cluster(args.get("cluster")) else []
        if is_cluster(args.get("cluster")) and not wrong:
            args = from_cluster(args, "gcp", GKE_FILLS)  # type: ignore[assignment]
            args["cluster"] = facts(args["cluster"]).cluster_id  # type: ignore[typeddict-item]
        elif wrong:
            args = {k: v for k, v in args.items() if k != "cluster"}  # type: ignore[assignment]
        unknown = require(
            where, args, ("cluster", "location", "node_service_account", "gpu_pools"), GkeGpuNodePoolsArgs, wrong
        )
        cluster, location = args["cluster"], args["location"]
        zones = list(args.get("zones") or [])
        region, zonal = gcp_region_of(location) if isinstance(location, str) else ("", [])
        from_zones = not region and bool(zones)  # the region is the zones' (the location is an Output)
        region = region or (gcp_region_of(zones[0])[0] if zones else "")
        project = args.get("project")
        unknown += project_problems(project) + gpudirect_problems(args["gpu_pools"])
        # An Output location without zones leaves the region unknown to the rules (zones follow the cluster's);
        # an Output (or the provider's) project is unknown too. Neither is ever replaced by a stand-in.
        gcp_section: dict[str, Any] = {"region": region, "zones": zones or zonal}
        if isinstance(project, str):
            gcp_section["project"] = project
        cfg = check(
            where,
            {
                "platform": "gke-standard",
                "cluster": {"name": label},
                **({"gcp": gcp_section} if region else {}),
                "gpuPools": [pool_config(p) for p in args["gpu_pools"]],
                "allowUnlistedRegions": bool(args.get("allow_unlisted_regions")),
            },
            {
                "gpuPools": "gpu_pools",
                "gcp.zones": "zones",
                "gcp.region": "zones" if from_zones else "location",
                "gcp.project": "project",
                "cluster.name": label_arg,
            },
            also=unknown,
            unknown=("gcp.project",) if region else ("gcp",),
        )
        super().__init__("gpuplane:gcp:GkeGpuNodePools", name, None, opts)
        pools = []
        self.gpu_nodes = []
        for pool in cfg.gpuPools:
            pool_args: dict[str, Any] = render.gpu_pool_args(
                cfg.cluster, cfg.gcp, pool, cluster, args["node_service_account"], own_cluster=False
            )
            pool_args["location"] = location
            if project is None:
                pool_args.pop("project", None)  # the provider's project
            else:
                pool_args["project"] = project
            pools.append(
                gcp.container.NodePool(
                    f"{name}-{pool.name}", **pool_args, opts=pool_options(pulumi.ResourceOptions(parent=self))
                )
            )
            self.gpu_nodes.append(gpu_nodes("gke-standard", pool, pool_args["node_config"]["labels"]))
        self.node_pool_names = pulumi.Output.all(*[p.name for p in pools]).apply(list)
        self.register_outputs({"node_pool_names": self.node_pool_names, "gpu_nodes": self.gpu_nodes})
