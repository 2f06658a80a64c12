"""`KarpenterGpuNodePools`: GPU NodePools and EC2NodeClasses for a cluster that already runs Karpenter v1
(its controller, node role and interruption queue exist). Typed args (no `from __future__ import
annotations`: the multi-language package reads these annotations)."""

import functools
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

import pulumi

from ..args.checks import camel, check, lift, plain, pool_config, require
from ..args.inputs import GpuNodes, GpuPoolArgs
from ..k8s.clusters import adopt_kubernetes_provider, cluster_problems, from_cluster, label_of
from ..k8s.objects import custom_resource
from ..scheduling.nodes import pool_labels
from ..scheduling.placement import gpu_nodes
from ..scheduling.sharing import operator_node_labels
from . import efa
from . import karpenter_render as kr
from .placement_group import own_placement_group


class ConsolidationPolicy(StrEnum):
    """When Karpenter removes GPU nodes."""

    WHEN_EMPTY = "WhenEmpty"
    """Only empty nodes (never evicts running GPU jobs to repack)."""
    WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
    """Also repacks underused nodes."""


class KarpenterSettingsArgs(TypedDict):
    """NodePool disruption and EC2NodeClass image settings (as `gpuplane:karpenter` in a stack)."""

    consolidation_policy: NotRequired[ConsolidationPolicy]
    """Default WhenEmpty."""
    consolidate_after: NotRequired[str]
    """How long a GPU node may sit empty before removal (default `30s`)."""
    expire_after: NotRequired[str]
    """Replace nodes after this age, to pick up new AMIs (default `720h`)."""
    ami_version: NotRequired[str]
    """AMI alias version (`latest`, or pinned like `v20251120`)."""


class KarpenterGpuNodePoolsArgs(TypedDict):
    """Arguments of `KarpenterGpuNodePools`."""

    cluster_name: NotRequired[pulumi.Input[str]]
    """The EKS cluster's name (EC2NodeClasses find its security group, and by default its subnets, by it);
    unset: `cluster`'s. One of the two is required."""
    cluster: NotRequired[Any]
    """Your cluster object (a `pulumi_eks.Cluster` or an `aws.eks.Cluster`): it gives what is unset of
    `cluster_name` and `cluster_label` (its resource name), and the NodePools and EC2NodeClasses go to it
    through a Kubernetes provider made here (`{name}-k8s`) unless `opts` give one."""
    node_role: pulumi.Input[str]
    """Name of the IAM role Karpenter's GPU nodes run as (it needs an EKS access entry)."""
    gpu_pools: Sequence[GpuPoolArgs]
    """GPU classes: one NodePool each (checked like `gpuplane:gpuPools` of an eks-karpenter stack)."""
    subnet_ids: NotRequired[pulumi.Input[Sequence[str]]]
    """Subnets to launch into; unset: subnets found by `discovery_tags`."""
    discovery_tags: NotRequired[Mapping[str, str]]
    """Tags that find the subnets (unless `subnet_ids`) and security groups; unset: subnets tagged
    `karpenter.sh/discovery: <cluster>` and the security group EKS tags `aws:eks:cluster-name: <cluster>`."""
    settings: NotRequired[KarpenterSettingsArgs]
    """Disruption, expiry and AMI version."""
    cluster_label: NotRequired[str]
    """The nodes' `gpuplane.io/cluster` label; unset: `cluster_name` when a plain string, else this
    component's name."""


def node_class_spec(
    key: kr.NodeClassKey, reservation: Any, settings: Any, tags: Mapping[str, str] | None, cold: Any, v: list[Any]
) -> Any:
    """The EC2NodeClass spec for (cluster, role, subnets) `v`, selecting by `tags` when given."""
    family, disk, owner = key
    subnets = list(v[2] or [])
    spec = kr.ec2_node_class(family, disk, str(v[0]), str(v[1]), subnets, settings, reservation, owner, cold)["spec"]
    if tags:
        terms = [{"tags": dict(tags)}]
        spec["securityGroupSelectorTerms"] = terms
        if not v[2]:
            spec["subnetSelectorTerms"] = terms
    return spec


def efa_class_spec(base: Callable[[list[Any]], Any], pool: Any, v: list[Any]) -> Any:
    """An EFA class's EC2NodeClass spec: `base`'s spec for (cluster, role, subnets) `v[:3]` plus its
    interfaces, and the placement group `v[3]` gpuplane created for it (when the pool names none)."""
    spec = kr.efa_node_class_spec(base(v[:3]), pool)
    if len(v) > 3:
        spec["placementGroupSelector"] = {"name": str(v[3])}
    return spec


class KarpenterGpuNodePools(pulumi.ComponentResource):
    """Karpenter GPU NodePools (one per class, tainted and labelled like every gpuplane GPU pool), their
    EC2NodeClasses (one per image family and disk size) and a NodeOverlay per sharing class. Pass the
    cluster object (`cluster`) or the cluster's Kubernetes provider."""

    node_pool_names: list[str]
    """Names of the NodePools."""
    gpu_nodes: list[GpuNodes]
    """Per class: its nodes' labels and taints, the GPU resource name and placement expressions."""

    def __init__(self, name: str, args: KarpenterGpuNodePoolsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """NodePools named after the classes; see `KarpenterGpuNodePoolsArgs` for each argument.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        where = f"KarpenterGpuNodePools {name!r}"
        args = from_cluster(args, "aws", {"cluster_name": lambda f: f.name})  # type: ignore[assignment]
        unknown = require(
            where,
            args,
            ("cluster_name", "node_role", "gpu_pools"),
            KarpenterGpuNodePoolsArgs,
            cluster_problems(args, "aws"),
        )
        cluster = args["cluster_name"]
        label, label_arg = label_of(args, "cluster_name", name)
        settings = {k: plain(v) for k, v in (args.get("settings") or {}).items()}
        cfg = check(
            where,
            {
                "platform": "eks-karpenter",
                "cluster": {"name": label},
                "gpuPools": [pool_config(p) for p in args["gpu_pools"]],
                "karpenter": {camel(k): v for k, v in settings.items()},
            },
            {
                "gpuPools": "gpu_pools",
                "karpenter": "settings",
                "cluster.name": label_arg,
            },
            also=unknown,
            unknown=("aws",),  # the region is the provider's
        )
        assert cfg.karpenter is not None
        super().__init__("gpuplane:aws:KarpenterGpuNodePools", name, None, opts)
        adopt_kubernetes_provider(self, name, args.get("cluster"))
        child = pulumi.ResourceOptions(parent=self)
        s = cfg.karpenter
        refs = [cluster, args["node_role"], args.get("subnet_ids") or []]
        classes = []
        for key in kr.node_classes(cfg.gpuPools):
            reservation = kr.key_reservation(cfg.gpuPools, key)
            cold = kr.key_cold_start(cfg.gpuPools, key, s)
            spec = lift(refs, functools.partial(node_class_spec, key, reservation, s, args.get("discovery_tags"), cold))
            class_name = kr.node_class_name(*key)
            classes.append(custom_resource(f"{name}-{class_name}", kr.node_class_manifest(class_name, spec), child))
        for pool in [p for p in cfg.gpuPools if efa.is_efa(p)]:
            key = kr.node_class_key(pool)
            reserved = kr.key_reservation(cfg.gpuPools, key)
            cold = kr.key_cold_start(cfg.gpuPools, key, s)
            base = functools.partial(node_class_spec, key, reserved, s, args.get("discovery_tags"), cold)
            group = own_placement_group(name, label, pool, child)
            efa_refs = [*refs, group] if group is not None else list(refs)
            spec = lift(efa_refs, functools.partial(efa_class_spec, base, pool))
            class_name = efa.node_class_name(pool)
            classes.append(custom_resource(f"{name}-{class_name}", kr.node_class_manifest(class_name, spec), child))
        after = pulumi.ResourceOptions(parent=self, depends_on=classes)
        self.gpu_nodes = []
        for pool in cfg.gpuPools:
            ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": kr.pool_node_class(pool)}
            disruption = {"consolidationPolicy": s.consolidationPolicy, "consolidateAfter": s.consolidateAfter}
            obj = kr.gpu_node_pool(cfg.cluster, pool, ref, "karpenter.k8s.aws", disruption, s.expireAfter)
            custom_resource(f"{name}-{pool.name}", obj, after)
            overlay = kr.gpu_overlay(pool)
            if overlay is not None:
                custom_resource(f"{name}-{pool.name}-overlay", overlay, after)
            labels = {**pool_labels(label, pool, "aws"), **operator_node_labels(pool)}
            self.gpu_nodes.append(gpu_nodes("eks-karpenter", pool, labels))
        self.node_pool_names = [p.name for p in cfg.gpuPools]
        self.register_outputs({"node_pool_names": self.node_pool_names, "gpu_nodes": self.gpu_nodes})
