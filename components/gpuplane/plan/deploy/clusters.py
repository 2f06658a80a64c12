"""Which cluster a resource of the plan belongs to, and the node shapes a pod template can land on there
(split from the simulator's rules, which apply them)."""

from __future__ import annotations

from ..runner import Plan, PlannedResource
from . import rules, scheduling
from .graph import DeployGraph, provider_urn


def _cluster_refs(r: PlannedResource) -> set[str]:
    """How others may name the cluster: its URN, name and ID, with what the engine and provider fill in."""
    ct = rules.CLUSTERS[r.type]
    i = {**r.filled, **r.inputs}
    name = str(i.get(ct.name_input, r.name))
    fields = {"name": name, "project": i.get("project", ""), "location": i.get("location", "")}
    return {r.urn, name, ct.id_format.format(**fields)}


def clusters(plan: Plan) -> list[PlannedResource]:
    return [r for r in plan.resources if r.type in rules.CLUSTERS]


def cluster_of(plan: Plan, r: PlannedResource) -> PlannedResource | None:
    """The cluster in this plan that a cluster-scoped resource names (by URN, name or ID), if any."""
    spec = rules.CLUSTER_SCOPED.get(r.type)
    if spec is None:
        return None
    ref = str(r.inputs.get(spec.cluster_input, ""))
    for c in clusters(plan):
        if ref in _cluster_refs(c):
            return c
    return None


def _cluster_for_provider(g: DeployGraph, provider: str) -> PlannedResource | None:
    for u in g.ancestors(provider) | {provider}:
        r = g.by_urn.get(u)
        if r is not None and r.type in rules.CLUSTERS:
            return r
    return None


def nodes_for(g: DeployGraph, provider: str) -> list[scheduling.NodeShape] | None:
    """Node shapes of the cluster behind a Kubernetes provider; None when the cluster is not in the plan."""
    cluster = _cluster_for_provider(g, provider)
    return None if cluster is None else nodes_of(g, cluster)


def nodes_of(g: DeployGraph, cluster: PlannedResource) -> list[scheduling.NodeShape]:
    """Node shapes of a cluster of the plan: its node pools/groups and the NodePools created on it."""
    mine = [cluster]
    owners: dict[str, PlannedResource | None] = {}
    for r in g.plan.resources:
        if r.type in rules.CLUSTER_SCOPED and cluster_of(g.plan, r) is cluster:
            mine.append(r)
        elif r.type.startswith("kubernetes:") and r.provider:
            p = provider_urn(r.provider) or ""
            if p not in owners:
                owners[p] = _cluster_for_provider(g, p)
            if owners[p] is cluster:
                mine.append(r)
    return scheduling.node_shapes(g.plan, mine)


def pod_nodes(
    g: DeployGraph, pod: scheduling.PodTemplate, cache: dict[str, list[scheduling.NodeShape] | None]
) -> list[scheduling.NodeShape] | None:
    """The node shapes a pod template can land on: its Kubernetes provider's cluster, or for an EKS add-on
    the cluster it names. None when that cluster is not in the plan."""
    r = g.by_urn[pod.urn]
    if r.type in rules.CLUSTER_SCOPED:
        cluster = cluster_of(g.plan, r)
        key = f"cluster:{cluster.urn}" if cluster is not None else ""
        if key and key not in cache:
            cache[key] = nodes_of(g, cluster)  # type: ignore[arg-type]
        return cache.get(key) if key else None
    provider = provider_urn(r.provider)
    if provider is None:
        return None
    if provider not in cache:
        cache[provider] = nodes_for(g, provider)
    return cache[provider]
