"""Offline plan diff for pull requests: resources added, removed and changed (with the changed input
paths), and which changes disrupt running nodes.

`DISRUPTIVE` is a small table per resource type of the inputs whose change replaces the resource or
recreates its nodes, with the source of each claim.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

DISRUPTIVE: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        # terraform-provider-google google_container_node_pool: ForceNew fields, and node_config fields
        # whose in-place update recreates every node of the pool.
        "gcp:container/nodePool:NodePool": {
            "name": "replaces the node pool",
            "location": "replaces the node pool",
            "cluster": "replaces the node pool",
            "nodeConfig.machineType": "recreates every node",
            "nodeConfig.diskSizeGb": "recreates every node",
            "nodeConfig.diskType": "recreates every node",
            "nodeConfig.guestAccelerators": "replaces the node pool (accelerators are immutable)",
            "nodeConfig.spot": "replaces the node pool",
            "nodeConfig.serviceAccount": "replaces the node pool",
            "nodeConfig.oauthScopes": "replaces the node pool",
            "nodeConfig.shieldedInstanceConfig": "replaces the node pool",
        },
        # google_container_cluster ForceNew fields.
        "gcp:container/cluster:Cluster": {
            "name": "replaces the cluster",
            "location": "replaces the cluster",
            "project": "replaces the cluster",
            "enableAutopilot": "replaces the cluster",
            "network": "replaces the cluster",
            "subnetwork": "replaces the cluster",
            "ipAllocationPolicy": "replaces the cluster",
            "nodeConfig": "replaces the cluster (default node pool settings are immutable)",
        },
        # EKS UpdateNodegroupConfig cannot change these: the node group is replaced.
        "eks:index:ManagedNodeGroup": {
            "nodeGroupName": "replaces the node group",
            "instanceTypes": "replaces the node group",
            "amiType": "replaces the node group",
            "capacityType": "replaces the node group",
            "subnetIds": "replaces the node group",
            "nodeRoleArn": "replaces the node group",
            "launchTemplate": "rolls every node to the new template version",
        },
        "aws:ec2/launchTemplate:LaunchTemplate": {
            "blockDeviceMappings": "new template version: managed node groups roll their nodes",
            "metadataOptions": "new template version: managed node groups roll their nodes",
        },
        # EKS CreateCluster settings that UpdateClusterConfig cannot change.
        "eks:index:Cluster": {
            "name": "replaces the cluster",
            "vpcId": "replaces the cluster",
            "privateSubnetIds": "replaces the cluster",
            "publicSubnetIds": "replaces the cluster",
            "encryptionConfigKeyArn": "replaces the cluster (EKS cannot change or remove a secrets key once set)",
        },
        # Karpenter: template or node class changes make existing nodes drift and be replaced;
        # nodeClassRef group/kind are immutable (CRD CEL).
        "kubernetes:karpenter.sh/v1:NodePool": {
            "spec.template": "existing nodes drift and are replaced",
        },
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": {
            "spec.amiSelectorTerms": "existing nodes drift and are replaced",
            "spec.blockDeviceMappings": "existing nodes drift and are replaced",
            "spec.metadataOptions": "existing nodes drift and are replaced",
        },
        "kubernetes:helm.sh/v3:Release": {
            "name": "reinstalls the release",
            "namespace": "reinstalls the release",
        },
    }
)


@dataclass
class Change:
    urn: str
    type: str
    paths: list[str]
    disruptive: dict[str, str] = field(default_factory=dict)


@dataclass
class PlanDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)

    @property
    def disruptive(self) -> bool:
        return bool(self.removed) or any(c.disruptive for c in self.changed)

    def to_json(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "removed": self.removed,
            "changed": [
                {"urn": c.urn, "type": c.type, "paths": c.paths, "disruptive": c.disruptive} for c in self.changed
            ],
            "disruptive": self.disruptive,
        }


def changed_paths(old: Any, new: Any, prefix: str = "") -> Iterator[str]:
    """Dot paths (lists as `[i]`) where two input trees differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            path = f"{prefix}.{key}" if prefix else key
            if key not in old or key not in new:
                yield path
            else:
                yield from changed_paths(old[key], new[key], path)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from changed_paths(a, b, f"{prefix}[{i}]")
    elif old != new:
        yield prefix or "<value>"


def disruption(type_: str, paths: list[str]) -> dict[str, str]:
    """Changed paths that the table marks disruptive (a path matches its entry or anything below it)."""
    table = DISRUPTIVE.get(type_, {})
    out = {}
    for p in paths:
        for key, why in table.items():
            if p == key or p.startswith(key + ".") or p.startswith(key + "["):
                out[p] = why
    return out


def diff(base: Mapping[str, Any], head: Mapping[str, Any]) -> PlanDiff:
    """Compare two `gpuplane plan --format json` documents."""
    old = {r["urn"]: r for r in base["resources"]}
    new = {r["urn"]: r for r in head["resources"]}
    result = PlanDiff(added=sorted(set(new) - set(old)), removed=sorted(set(old) - set(new)))
    for urn in sorted(set(old) & set(new)):
        paths = list(changed_paths(old[urn]["inputs"], new[urn]["inputs"]))
        if paths:
            result.changed.append(Change(urn, new[urn]["type"], paths, disruption(new[urn]["type"], paths)))
    return result


def to_text(d: PlanDiff) -> str:
    lines = []
    for urn in d.added:
        lines.append(f"+ {urn}")
    for urn in d.removed:
        lines.append(f"- {urn}  [DISRUPTIVE: removed]")
    for c in d.changed:
        lines.append(f"~ {c.urn}")
        for p in c.paths:
            mark = f"  [DISRUPTIVE: {c.disruptive[p]}]" if p in c.disruptive else ""
            lines.append(f"    {p}{mark}")
    summary = f"{len(d.added)} to add, {len(d.changed)} to change, {len(d.removed)} to remove"
    lines.append(summary + ("; DISRUPTIVE changes above" if d.disruptive else "; nothing disruptive"))
    return "\n".join(lines)


def load_plan(path: str) -> dict[str, Any]:
    with open(path) as f:
        doc: dict[str, Any] = json.load(f)
    return doc
