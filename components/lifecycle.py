"""Lifecycle options for the resources whose loss hurts most (clusters and their secrets keys).

`protect` and `retainOnDelete` come from `gpuplane:cluster`; the cloud's own deletion protection is a
separate input of each cluster (`deletionProtection`, on by default).
"""

from __future__ import annotations

import pulumi

from .config.model import ClusterConfig


def keep_options(cluster: ClusterConfig, opts: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """`opts` plus Pulumi `protect` / `retain_on_delete` as the stack asks. An unset option stays
    unset (None), so a parent component's `protect` still reaches the child."""
    keep = pulumi.ResourceOptions(protect=cluster.protect or None, retain_on_delete=cluster.retainOnDelete or None)
    return pulumi.ResourceOptions.merge(opts, keep)


__all__ = ["keep_options"]
