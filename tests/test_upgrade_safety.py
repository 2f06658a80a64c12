"""Upgrade safety: a change that would rename (and so replace) a live resource fails here first.

- tests/golden/<stack>/urns.txt lists every resource's URN. A renamed URN means Pulumi deletes the old
  resource and creates a new one; accept it only with an `aliases=[...]` for the old name, then
  regenerate with GPUPLANE_UPDATE_GOLDEN=1.
- Adding or removing a pool, or toggling monitoring or GPU sharing, must leave every other resource's
  URN and inputs alone (Hypothesis over the shipped single-cluster stacks).
- Clusters honour `protect`/`retainOnDelete`, and GKE/EKS deletion protection is on by default.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.catalog import PLATFORMS
from components.config import ConfigError
from components.plan import Plan, load, plan_stack
from components.plan.stackfile import StackFile

from .conftest import ROOT, SINGLE, STACKS, golden, stack_with

CLUSTERS = {"gcp:container/cluster:Cluster", "eks:index:Cluster", "aws:kms/key:Key"}


@pytest.mark.parametrize("stack", STACKS)
def test_urns_are_golden(stack: str, plan_of: Callable[..., Plan]) -> None:
    urns = [r.urn for r in plan_of(stack).resources]
    assert len(set(urns)) == len(urns)
    golden(f"{stack}/urns.txt", "".join(f"{u}\n" for u in urns))


def index(plan: Plan) -> dict[str, Any]:
    return {r.urn: r.inputs for r in plan.resources}


def owned_by_pool(urn: str, pool: str) -> bool:
    """Resources a pool owns carry its name as a `-<pool>` part of their own name."""
    name = urn.rsplit("::", 1)[1]
    return f"-{pool}-" in f"{name}-"


# Resources whose inputs legitimately hold every pool's (or class's) settings, per change.
HOLDERS: dict[str, Callable[[str, str], bool]] = {
    # NAP: GPU classes are the cluster's `clusterAutoscaling.resourceLimits`.
    "pool": lambda platform, typ: platform == "gke-nap" and typ == "gcp:container/cluster:Cluster",
    # One device-plugin ConfigMap holds every pool's sharing config (pools pick theirs by node label).
    "sharing": lambda platform, typ: typ == "kubernetes:core/v1:ConfigMap",
    # GKE Managed Prometheus and managed DCGM are cluster settings.
    "monitoring": lambda platform, typ: typ == "gcp:container/cluster:Cluster",
}


def changed_elsewhere(before: Plan, after: Plan, owned: Callable[[str], bool], holder: Callable[[str], bool]) -> list:
    """URNs present in both plans whose inputs differ, and URNs that vanished, outside what the change
    owns or legitimately holds."""
    a, b = index(before), index(after)
    types = {r.urn: r.type for r in [*before.resources, *after.resources]}
    out = []
    for urn in a:
        if owned(urn) or holder(types[urn]):
            continue
        if urn not in b:
            out.append(("removed", urn))
        elif a[urn] != b[urn]:
            out.append(("inputs changed", urn))
    return out


def plan_config(base: StackFile, config: dict[str, Any]) -> Plan | None:
    try:
        return plan_stack(StackFile(project=base.project, stack=base.stack, config=config))
    except ConfigError:
        return None


@st.composite
def pool_change(draw: Any) -> tuple[str, str, dict[str, Any], dict[str, Any], str]:
    """(stack, kind, smaller config, larger config, what changes): the larger has one more pool, or
    monitoring/sharing switched; both directions are checked."""
    stack = draw(st.sampled_from(SINGLE))
    base = load(stack, ROOT)
    config = copy.deepcopy(base.config)
    pools = config["gpuplane:gpuPools"]
    platform = PLATFORMS[config["gpuplane:platform"]]
    kind = draw(st.sampled_from(["pool", "sharing", "monitoring"]))
    if kind == "pool":
        extra = copy.deepcopy(draw(st.sampled_from(pools)))
        extra.pop("sharing", None)
        extra["name"] = draw(st.sampled_from(["extra", "batch", "eval"]))
        extra["maxNodes"] = draw(st.integers(1, 6))
        extra["spot"] = draw(st.booleans())
        larger = {**config, "gpuplane:gpuPools": [*pools, extra]}
        return stack, kind, config, larger, extra["name"]
    if kind == "sharing":
        i = draw(st.integers(0, len(pools) - 1))
        strategy = draw(st.sampled_from(platform.sharing or ("time-slicing",)))
        sharing: dict[str, Any] = {"strategy": strategy}
        if strategy in ("time-slicing", "mps"):
            sharing["replicas"] = draw(st.integers(2, 8))
        else:
            sharing["migProfile"] = "1g.10gb"
        plain = copy.deepcopy(pools)
        plain[i].pop("sharing", None)
        shared = copy.deepcopy(plain)
        shared[i]["sharing"] = sharing
        return (
            stack,
            kind,
            {**config, "gpuplane:gpuPools": plain},
            {**config, "gpuplane:gpuPools": shared},
            pools[i]["name"],
        )
    integration = draw(st.sampled_from([i for i in platform.integrations if i != "scrape-config"] or ["scrape-config"]))
    monitoring = config.get("gpuplane:monitoring", {})
    return (
        stack,
        kind,
        {**config, "gpuplane:monitoring": {**monitoring, "integration": "scrape-config"}},
        {**config, "gpuplane:monitoring": {**monitoring, "integration": integration}},
        integration,
    )


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool_change())
def test_a_change_touches_only_what_it_is_about(change: tuple[str, str, dict[str, Any], dict[str, Any], str]) -> None:
    stack, kind, smaller, larger, subject = change
    base = load(stack, ROOT)
    small, large = plan_config(base, smaller), plan_config(base, larger)
    if small is None or large is None:  # a combination the platform refuses (e.g. MIG on a T4 pool)
        return
    platform = smaller["gpuplane:platform"]
    holder = lambda typ: HOLDERS[kind](platform, typ)  # noqa: E731
    if kind == "monitoring":
        monitoring_urns = {r.urn for p in (small, large) for r in p.resources if "-monitoring" in r.urn}

        def owned(urn: str) -> bool:
            return urn in monitoring_urns

    else:

        def owned(urn: str) -> bool:
            return owned_by_pool(urn, subject)

    assert changed_elsewhere(small, large, owned, holder) == []
    assert changed_elsewhere(large, small, owned, holder) == []
    # The new pool really made resources (NAP: changed its holder). Autopilot classes make none.
    if kind == "pool" and platform != "gke-autopilot":
        assert len(index(large)) > len(index(small)) or index(large) != index(small)


def test_the_stability_check_can_fail() -> None:
    """Renaming the cluster renames every resource: the same check must report it."""
    base = load("gcp-standard", ROOT)
    renamed = copy.deepcopy(base.config)
    renamed["gpuplane:cluster"] = {**renamed["gpuplane:cluster"], "name": "ml-gke2"}
    before, after = plan_stack(base), plan_config(base, renamed)
    assert after is not None
    found = changed_elsewhere(before, after, lambda urn: False, lambda typ: False)
    assert ("removed", next(r.urn for r in before.resources if r.type == "gcp:container/cluster:Cluster")) in found


@pytest.mark.parametrize("stack", SINGLE)
def test_deletion_protection_on_by_default(stack: str, plan_of: Callable[..., Plan]) -> None:
    clusters = [r for r in plan_of(stack).resources if r.type in CLUSTERS - {"aws:kms/key:Key"}]
    assert clusters and all(r.inputs["deletionProtection"] is True for r in clusters)
    assert not any(r.protect or r.retain_on_delete for r in plan_of(stack).resources)


@pytest.mark.parametrize("stack", ["gcp-standard", "gcp-autopilot", "aws-managed", "aws-automode"])
def test_protect_and_retain_on_delete_reach_the_cluster(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(
        stack_with(
            stack, cluster={**load(stack, ROOT).config["gpuplane:cluster"], "protect": True, "retainOnDelete": True}
        )
    )
    kept = {r.type for r in plan.resources if r.protect and r.retain_on_delete}
    want = {t for t in CLUSTERS if any(r.type == t for r in plan.resources)}
    assert want and kept == want
