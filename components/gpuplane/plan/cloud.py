"""What already exists in the cloud when a program runs: the offline plan's stand-in for live state.

A first `pulumi up` meets an empty cloud. A second `up`, or the `up` after a routine change, meets what the
first one left, as each provider's Read reports it (`deploy.readback`). Programs that read live state
with an invoke (gpuplane reads each EKS node group's current desired size, `aws/live_size.py`) get their
answers from here, so the plan of the next `up` sends what the real program would send.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Cloud:
    """Live state the mocks answer invokes from."""

    node_groups: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=lambda: EMPTY)
    """EKS cluster name -> node group name -> what DescribeNodegroup returns of it, in the node group's
    input spelling: `scalingConfig` ({minSize, maxSize, desiredSize}), `version`, `launchTemplate`
    ({id, version})."""

    def __bool__(self) -> bool:
        return bool(self.node_groups)


LIVE_READS = frozenset({"aws:eks/getNodeGroups:getNodeGroups", "aws:eks/getNodeGroup:getNodeGroup"})
"""Invokes whose answer depends on what exists (`Cloud`), so a second run of the program may send other
inputs than the first."""
