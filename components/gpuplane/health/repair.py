"""What gpuplane sets so GPU faults are detected and failed nodes repaired (`catalog.health.HEALTH` says
which platform gets what): the EKS node monitoring agent add-on, managed node groups' `nodeRepairConfig`
and Karpenter's `nodeRepair` feature gate. Pure functions; the AWS components create the resources."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi

from ..args.checks import snake
from ..catalog.health import AGENT_ADDON, HEALTH
from ..config.health import HealthConfig
from ..config.model import StackConfig

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
"""The cloud resource inside pulumi-eks's `ManagedNodeGroup` that takes `nodeRepairConfig`."""


def node_repair_config(h: HealthConfig) -> dict[str, Any]:
    """A managed node group's `nodeRepairConfig` (EKS API / botocore `NodeRepairConfig` member names). With
    `repair` off it says `enabled: false` rather than nothing: the provider keeps a stored block the program
    leaves out (terraform-provider-aws eks/node_group.go: `node_repair_config` is Optional and Computed), so
    leaving it out would never turn repair off on a group that has it. On: one node at a time by default,
    the unhealthy threshold only when asked; no overrides, as EKS's defaults already give GPU conditions 10
    minutes and choose Reboot or Replace per reason (EKS user guide, node-repair.adoc)."""
    if not h.repair:
        return {"enabled": False}
    out: dict[str, Any] = {"enabled": True, "maxParallelNodesRepairedCount": h.maxParallelRepairs}
    if h.maxUnhealthyPercent is not None:
        out["maxUnhealthyNodeThresholdPercentage"] = h.maxUnhealthyPercent
    return out


def node_repair_args(h: HealthConfig) -> dict[str, Any]:
    """`node_repair_config` for `aws.eks.NodeGroup` (the Python SDK's snake_case keys)."""
    return {snake(k): v for k, v in node_repair_config(h).items()}


@dataclass(frozen=True)
class RepairTransform:
    """A transform that gives the `aws.eks.NodeGroup` inside pulumi-eks's `ManagedNodeGroup` its
    `nodeRepairConfig`: pulumi-eks 4.4 has no such input (nodejs/eks/nodes/nodegroup.ts), and the engine runs
    a component's transforms on the children it creates (the offline plan runs them too: `childInputs`).
    A class, not a closure, so a plan that holds it can be pickled."""

    config: tuple[tuple[str, Any], ...]

    def __call__(self, args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ != NODE_GROUP:
            return None
        return pulumi.ResourceTransformResult(
            props={**args.props, "nodeRepairConfig": dict(self.config)}, opts=args.opts
        )


def repair_transform(h: HealthConfig) -> RepairTransform:
    """The node groups' repair transform for `h` (see `node_repair_config`)."""
    return RepairTransform(tuple(node_repair_config(h).items()))


def agent_wanted(cfg: StackConfig) -> bool:
    """The stack installs the node monitoring agent add-on (EKS platforms whose nodes gpuplane manages)."""
    return cfg.health.detection and HEALTH[cfg.platform].addon is not None


def repair_wanted(cfg: StackConfig) -> bool:
    """The stack turns on the repair it controls (node groups' config, Karpenter's gate)."""
    return cfg.health.repair and HEALTH[cfg.platform].repair_setting is not None


AGENT_TOLERATIONS = [{"operator": "Exists"}]
"""The add-on's dcgm-server tolerates every taint. Its default is none (NMA values.yaml `dcgmAgent.tolerations:
[]`), so it never runs on a tainted GPU node, and the agent then reports `DCGMError` (fatal:
AcceleratedHardwareReady=False) on every healthy GPU node, which repair replaces. Its node affinity already
keeps it to NVIDIA instance types, as the agent DaemonSet's own `operator: Exists` does for all nodes."""


def agent_configuration() -> str:
    """The add-on's `configurationValues` (JSON; keys from NMA charts/configuration.schema.json)."""
    return json.dumps({"dcgmAgent": {"tolerations": AGENT_TOLERATIONS}}, sort_keys=True)


__all__ = [
    "AGENT_ADDON",
    "AGENT_TOLERATIONS",
    "agent_configuration",
    "agent_wanted",
    "node_repair_args",
    "node_repair_config",
    "repair_transform",
    "repair_wanted",
]
