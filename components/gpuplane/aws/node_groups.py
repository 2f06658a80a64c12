"""`EksGpuNodeGroups`: gpuplane's managed GPU node groups on an EKS cluster you declare or already run
(tainted, labelled, IMDSv2 launch templates, scale-from-zero tags for cluster-autoscaler). Typed args
(no `from __future__ import annotations`: the multi-language package reads these annotations)."""

from collections.abc import Callable, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from ..args.checks import check, pool_config, require
from ..args.inputs import GpuNodes, GpuPoolArgs
from ..args.platform import HealthArgs, to_config
from ..config import coldstart
from ..health.repair import node_repair_args
from ..k8s.clusters import ClusterFacts, cluster_problems, from_cluster, label_of
from ..scheduling.placement import gpu_nodes
from . import render
from .capacity_render import reservation_zone, reserved_launch_args
from .cluster import subnets_in_zones
from .live_size import with_live_size


class EksGpuNodeGroupsArgs(TypedDict):
    """Arguments of `EksGpuNodeGroups`."""

    cluster_name: NotRequired[pulumi.Input[str]]
    """The EKS cluster's name, e.g. `eks.Cluster(...).eks_cluster.name` (node groups then wait for it);
    unset: `cluster`'s. One of the two is required."""
    cluster: NotRequired[Any]
    """Your cluster object, as pulumi-eks's `ManagedNodeGroup(cluster=...)` takes it: a `pulumi_eks.Cluster` or
    an `aws.eks.Cluster`. It gives what is unset of `cluster_name`, `kubernetes_version` (the nodes follow
    the control plane's), `subnet_ids` (pulumi-eks: its private subnets) and `cluster_label` (its resource
    name)."""
    node_role_arn: pulumi.Input[str]
    """IAM role the GPU nodes run as (with the EKS worker, CNI and ECR read-only policies)."""
    subnet_ids: NotRequired[pulumi.Input[Sequence[str]]]
    """Private subnets to launch GPU nodes into, e.g. a VPC stack's output; unset: `cluster`'s."""
    gpu_pools: Sequence[GpuPoolArgs]
    """One managed node group per entry (checked like `gpuplane:gpuPools` of an eks-managed stack)."""
    kubernetes_version: NotRequired[pulumi.Input[str]]
    """Kubernetes version of the nodes, e.g. `cluster.eks_cluster.version`; unset: the cluster's at creation."""
    health: NotRequired[HealthArgs]
    """Node repair (`repair`, default on: each group's `nodeRepairConfig`; off sends `enabled: false`). GPU faults
    reach it only through the EKS node monitoring agent add-on, which your cluster installs (`detection` is not
    read here). Give the add-on `configurationValues` `gpuplane.health.repair.agent_configuration()`
    (`{"dcgmAgent": {"tolerations": [{"operator": "Exists"}]}}`): by default its dcgm-server skips tainted GPU
    nodes, the agent then reports them unhealthy, and repair replaces them."""
    cluster_label: NotRequired[str]
    """The `gpuplane.io/cluster` label and name prefix of node groups and launch templates; unset: the
    cluster's name when `cluster_name` is a plain string, else this component's name."""


def asg_name(group: aws.eks.NodeGroup) -> pulumi.Output[str]:
    """The Auto Scaling group EKS created for the node group (for cluster-autoscaler's tags)."""

    def first(resources: Any) -> str:
        return str(resources[0].autoscaling_groups[0].name)

    return group.resources.apply(first)


EKS_FILLS: dict[str, Callable[[ClusterFacts], Any]] = {
    "cluster_name": lambda f: f.name,
    "kubernetes_version": lambda f: f.version,
    "subnet_ids": lambda f: f.subnet_ids,
}
"""Arguments a cluster object gives (`clusters.from_cluster`)."""


class EksGpuNodeGroups(pulumi.ComponentResource):
    """Managed GPU node groups on an existing EKS cluster: one per pool, with an IMDSv2 / encrypted-gp3
    launch template, the GPU taint and labels, and the node-template tags cluster-autoscaler needs to
    scale a group up from zero."""

    node_group_names: pulumi.Output[list[str]]
    """Names of the GPU node groups."""
    gpu_nodes: list[GpuNodes]
    """Per pool: its nodes' labels and taints, the GPU resource name and placement expressions."""

    def __init__(self, name: str, args: EksGpuNodeGroupsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Node groups `{name}-{pool}` on `args["cluster_name"]`; see `EksGpuNodeGroupsArgs` for each argument.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        where = f"EksGpuNodeGroups {name!r}"
        args = from_cluster(args, "aws", EKS_FILLS)  # type: ignore[assignment]
        unknown = require(
            where,
            args,
            ("cluster_name", "node_role_arn", "subnet_ids", "gpu_pools"),
            EksGpuNodeGroupsArgs,
            cluster_problems(args, "aws"),
        )
        cluster = args["cluster_name"]
        label, label_arg = label_of(args, "cluster_name", name)
        cfg = check(
            where,
            {
                "platform": "eks-managed",
                "cluster": {"name": label},
                "gpuPools": [pool_config(p) for p in args["gpu_pools"]],
                **({"health": to_config(args["health"])} if "health" in args else {}),
            },
            {"gpuPools": "gpu_pools", "cluster.name": label_arg},
            also=unknown,
            unknown=("aws",),  # the region is the provider's
        )
        super().__init__("gpuplane:aws:EksGpuNodeGroups", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        groups = []
        self.gpu_nodes = []
        for pool in cfg.gpuPools:
            group_args = render.gpu_node_group_args(cfg.cluster, pool)
            lt = aws.ec2.LaunchTemplate(
                f"{name}-{pool.name}-lt",
                **render.launch_template_args(
                    label, pool.name, pool.diskSizeGb, str(group_args["ami_type"]), coldstart.plan("eks-managed", pool)
                ),
                **reserved_launch_args(pool),
                opts=child,
            )
            zone = reservation_zone(pool)
            zones = list(pool.zones or ([zone] if zone is not None else []))
            subnets = args["subnet_ids"]
            if zones:  # a reservation lives in one AZ (and an EFA pool is pinned to one): only their subnets
                subnets = subnets_in_zones(subnets, None, zones, self)
            wiring: dict[str, Any] = {
                "cluster_name": cluster,
                "node_role_arn": args["node_role_arn"],
                "subnet_ids": subnets,
                "launch_template": {"id": lt.id, "version": lt.latest_version.apply(str)},
            }
            if args.get("kubernetes_version"):
                wiring["version"] = args["kubernetes_version"]
            wiring["node_repair_config"] = node_repair_args(cfg.health)  # `enabled: false` turns it off again
            group = aws.eks.NodeGroup(
                f"{name}-{pool.name}",
                opts=child,
                **with_live_size(group_args, cluster, self, wiring, opts.depends_on if opts else None),
            )
            groups.append(group)
            for key, value in sorted(render.node_template_tags(cfg.cluster, pool).items()):
                aws.autoscaling.Tag(
                    f"{name}-{pool.name}-ca-{render.tag_slug(key)}",
                    autoscaling_group_name=asg_name(group),
                    tag={"key": key, "value": value, "propagate_at_launch": False},
                    opts=child,
                )
            self.gpu_nodes.append(gpu_nodes("eks-managed", pool, group_args["labels"]))
        self.node_group_names = pulumi.Output.all(*[g.node_group_name for g in groups]).apply(list)
        self.register_outputs({"node_group_names": self.node_group_names, "gpu_nodes": self.gpu_nodes})
