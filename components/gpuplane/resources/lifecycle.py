"""Lifecycle options for the resources whose loss hurts most (clusters and their secrets keys).

`protect` and `retainOnDelete` come from `gpuplane:cluster`; the cloud's own deletion protection is a
separate input of each cluster (`deletionProtection`, on by default).
"""

from __future__ import annotations

import pulumi

from ..config.model import ClusterConfig


def keep_options(cluster: ClusterConfig, opts: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """`opts` plus Pulumi `protect` / `retain_on_delete` as the stack asks. An unset option stays
    unset (None), so a parent component's `protect` still reaches the child."""
    keep = pulumi.ResourceOptions(protect=cluster.protect or None, retain_on_delete=cluster.retainOnDelete or None)
    return pulumi.ResourceOptions.merge(opts, keep)


KEPT_CHILDREN: frozenset[str] = frozenset({"aws:eks/cluster:Cluster"})
"""Cloud resources inside packaged components (pulumi-eks's `eks:index:Cluster`) that carry the cluster.
Pulumi applies `retainOnDelete` to custom resources only, not to a component, so it reaches them through
a transform the engine runs on the component's children."""


def keep_transform(cluster: ClusterConfig) -> pulumi.ResourceTransform | None:
    """A transform that sets `protect` / `retain_on_delete` (as the stack asks) on `KEPT_CHILDREN`, or
    None when neither is asked for."""
    if not (cluster.protect or cluster.retainOnDelete):
        return None
    keep = pulumi.ResourceOptions(protect=cluster.protect or None, retain_on_delete=cluster.retainOnDelete or None)

    def keep_cluster(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ not in KEPT_CHILDREN:
            return None
        return pulumi.ResourceTransformResult(props=args.props, opts=pulumi.ResourceOptions.merge(args.opts, keep))

    return keep_cluster


def keep_component_options(cluster: ClusterConfig, opts: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """`keep_options` for a packaged component whose cloud resources are its children."""
    transform = keep_transform(cluster)
    extra = pulumi.ResourceOptions(transforms=[transform] if transform else None)
    return pulumi.ResourceOptions.merge(keep_options(cluster, opts), extra)


__all__ = ["KEPT_CHILDREN", "keep_component_options", "keep_options", "keep_transform"]
