"""The replacement table: every rule cites its source, every type gpuplane emits is accounted for, and the
routine day-2 changes (scale a pool, add or remove one, bump kubernetesVersion, switch the monitoring
integration) replace no cluster and no node pool."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from gpuplane.catalog import PLATFORMS
from gpuplane.plan import Plan, load
from gpuplane.plan.diff import diff
from gpuplane.plan.replacement import RULES, Effect, classify, covered, ignored_paths, rules_for
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT, SINGLE, STACKS, cached_plan, session_cache, without_pool
from .test_upgrade_safety import MUST_NOT_REPLACE, owned_by_pool, pool_candidates, valid

SOURCE = re.compile(r"^[\w.-]+/[\w.-]+ \S+\.(go|ts|json|md|yaml)\b")


def test_every_rule_cites_an_upstream_file() -> None:
    for type_, rules in RULES.items():
        for r in rules:
            assert SOURCE.match(r.source), (type_, r.path, r.source)
            assert r.why and "_" not in r.path, (type_, r.path)  # Pulumi camelCase, not terraform snake_case
    assert all(SOURCE.match(r.source) for r in rules_for("kubernetes:core/v1:Namespace"))


@session_cache
def shipped(stack: str) -> Plan:
    return cached_plan(load(stack, ROOT))


def plan(stack: StackFile) -> Plan:
    return cached_plan(stack)


def test_every_emitted_type_is_accounted_for() -> None:
    """Each type in a shipped stack has rules, or is listed with why it has no replace-forcing inputs."""
    types = {r.type for s in STACKS for r in shipped(s).resources}
    assert {t for t in types if covered(t) is None} == set()


def test_block_and_removal_semantics() -> None:
    """An SDKv2 ForceNew block replaces only when added or removed; encryption only when removed."""
    cluster = "gcp:container/cluster:Cluster"
    assert classify(cluster, ["ipAllocationPolicy.stackType"]) == {}
    assert classify(cluster, ["ipAllocationPolicy"])["ipAllocationPolicy"].effect is Effect.REPLACES
    eks = "eks:index:Cluster"
    key = {"encryptionConfigKeyArn": "arn:aws:kms:us-east-1:1:key/a"}
    assert classify(eks, ["encryptionConfigKeyArn"], key, {}) != {}
    assert classify(eks, ["encryptionConfigKeyArn"], {}, key) == {}
    (entry,) = classify(eks, ["accessEntries.admin-0.principalArn"]).values()
    assert entry.effect is Effect.REPLACES and entry.target == "access entry" and not entry.replaces_self


def test_node_group_version_rolls_nodes_in_place() -> None:
    """aws_eks_node_group `version` is not ForceNew: a version bump rolls nodes, it does not replace the group."""
    for type_ in ("eks:index:ManagedNodeGroup", "aws:eks/nodeGroup:NodeGroup"):
        f = classify(type_, ["version", "launchTemplate.version"])
        assert {p: x.effect for p, x in f.items()} == {
            "version": Effect.DISRUPTS,
            "launchTemplate.version": Effect.DISRUPTS,
        }
        assert classify(type_, ["scalingConfig.minSize", "labels.a", "taints[0]"]) == {}
        assert classify(type_, ["instanceTypes[0]"])["instanceTypes[0]"].effect is Effect.REPLACES


def test_component_ignore_changes() -> None:
    """pulumi-eks turns ignoreScalingChanges into ignoreChanges on the node group's desired size."""
    assert ignored_paths("eks:index:ManagedNodeGroup", {"ignoreScalingChanges": True}, ()) == (
        "scalingConfig.desiredSize",
    )
    assert ignored_paths("eks:index:ManagedNodeGroup", {}, ("x",)) == ("x",)


# ---- day-2 changes must not replace any cluster or node pool ----


def doc(p: Plan) -> dict[str, Any]:
    out = p.to_json()
    for r, pr in zip(out["resources"], p.resources, strict=True):
        if pr.replace_on_changes:
            r["replaceOnChanges"] = list(pr.replace_on_changes)
    return out


def replaced(before: Plan, after: Plan, spare: set[str]) -> list[str]:
    """Clusters and node pools that `before -> after` replaces or removes (outside `spare`)."""
    watch = MUST_NOT_REPLACE
    d = diff(doc(before), doc(after))
    types = {r.urn: r.type for r in before.resources}
    out = [f"{c.urn}: {c.disruptive}" for c in d.changed if c.type in watch and c.replaces and c.urn not in spare]
    return out + [f"{u} removed" for u in d.removed if types[u] in watch and u not in spare]


def with_config(stack: str, **changes: Any) -> StackFile:
    base = load(stack, ROOT)
    config = copy.deepcopy(base.config)
    for key, value in changes.items():
        config[f"gpuplane:{key}"] = value
    assert valid(config), (stack, changes)
    return StackFile(project=base.project, stack=base.stack, config=config)


def pools(stack: str) -> list[dict[str, Any]]:
    return copy.deepcopy(load(stack, ROOT).config["gpuplane:gpuPools"])


def cluster(stack: str) -> dict[str, Any]:
    return dict(load(stack, ROOT).config["gpuplane:cluster"])


NO_MINIMUM = {"flex-start", "queued"}
"""Capacity types whose pools must keep `minNodes: 0` (DWS gets nodes per request; the config refuses more)."""


def pool_removed(stack: str, gone: str) -> dict[str, Any]:
    """`with_config` changes that remove pool `gone` (and its Kueue quotas, and the autoscaled Deployments on it:
    with the last of them, the whole `autoscaling` section)."""
    config = without_pool(load(stack, ROOT).config, gone)
    if "gpuplane:autoscaling" in load(stack, ROOT).config and "gpuplane:autoscaling" not in config:
        config["gpuplane:autoscaling"] = None
    return {k.removeprefix("gpuplane:"): v for k, v in config.items() if k.startswith("gpuplane:")}


def scaled(stack: str, key: str) -> tuple[StackFile, StackFile]:
    small, large = pools(stack), pools(stack)
    for p in large:
        if key == "minNodes" and NO_MINIMUM & set(p.get("capacity", ())):
            continue
        if key == "minNodes" and (p.get("reservation") or {}).get("type") == "capacity-block":
            continue  # a Capacity Block group must be able to sit at 0 nodes (the config refuses more)
        p[key] = p.get(key, 0) + 1
        p["maxNodes"] = max(p.get("maxNodes", 1), p.get("minNodes", 0)) + (1 if key == "maxNodes" else 0)
    return with_config(stack, gpuPools=small), with_config(stack, gpuPools=large)


KINDS = ("minNodes", "maxNodes", "add-pool", "remove-pool", "kubernetesVersion", "monitoring")


def cases() -> list[Any]:
    out = []
    for stack in SINGLE:
        platform = PLATFORMS[load(stack, ROOT).config["gpuplane:platform"]]
        for kind in KINDS:
            if kind == "remove-pool" and len(pools(stack)) < 2:
                continue
            if kind == "minNodes" and not platform.fixed_pools:
                continue  # GPU classes of an auto-provisioner have no minimum (the config refuses minNodes)
            if kind == "monitoring" and len(platform.integrations) < 2:
                continue
            out.append(pytest.param(stack, kind, id=f"{stack}-{kind}"))
    return out


def pairs(stack: str, kind: str) -> list[tuple[StackFile, StackFile, str]]:
    """(before, after, subject pool) for one kind of change; both directions where it is a toggle."""
    if kind in ("minNodes", "maxNodes"):
        return [(*scaled(stack, kind), "")]
    if kind == "add-pool":
        found = pool_candidates(stack)
        picks = {id(p): p for p in (found[0], found[len(found) // 2], found[-1])}.values()
        return [(with_config(stack), with_config(stack, gpuPools=[*pools(stack), p]), p["name"]) for p in picks]
    if kind == "remove-pool":
        return [
            (with_config(stack), with_config(stack, **pool_removed(stack, p["name"])), p["name"]) for p in pools(stack)
        ]
    if kind == "kubernetesVersion":
        return [
            (
                with_config(stack, cluster={**cluster(stack), "kubernetesVersion": a}),
                with_config(stack, cluster={**cluster(stack), "kubernetesVersion": b}),
                "",
            )
            for a, b in (("1.34", "1.35"),)
        ]
    config = load(stack, ROOT).config
    monitoring = config.get("gpuplane:monitoring", {})
    first, *rest = PLATFORMS[config["gpuplane:platform"]].integrations
    out = []
    for other in rest:
        a = with_config(stack, monitoring={**monitoring, "integration": first})
        b = with_config(stack, monitoring={**monitoring, "integration": other})
        out += [(a, b, ""), (b, a, "")]
    return out


@pytest.mark.parametrize(("stack", "kind"), cases())
def test_day2_changes_replace_no_cluster_or_node_pool(stack: str, kind: str) -> None:
    for before, after, subject in pairs(stack, kind):
        a, b = plan(before), plan(after)
        spare = (owned_by_pool(a, subject) | owned_by_pool(b, subject)) if subject else set()
        assert replaced(a, b, spare) == [], (kind, subject)


def test_the_check_sees_a_replacement() -> None:
    """Renaming a GKE pool's GPU count to a different accelerator count replaces it: the check reports it."""
    base = pools("gcp-standard")
    changed = copy.deepcopy(base)
    changed[1]["gpusPerNode"] = 4
    found = replaced(
        plan(with_config("gcp-standard", gpuPools=base)), plan(with_config("gcp-standard", gpuPools=changed)), set()
    )
    assert any("ml-gke-training" in f and "guest_accelerator" in f for f in found)
