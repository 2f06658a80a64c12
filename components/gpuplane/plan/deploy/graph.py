"""The dependency graph a real engine walks: explicit `depends_on`, the resources behind Output inputs,
and the provider (created before anything that uses it). Depending on a component means depending on
every resource under it (Pulumi's `depends_on` expands a component to its children: pulumi/pulumi
sdk/python/lib/pulumi/resource.py `_expand_dependencies` / `get_all_transitive_resources`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from ..runner import Plan, PlannedResource


def provider_urn(ref: str | None) -> str | None:
    """A provider reference is `URN::ID`; the URN is everything before the last `::`."""
    if not ref:
        return None
    return ref.rsplit("::", 1)[0]


def at_path(inputs: Mapping[str, object], path: str, missing: object = None) -> object:
    """The value at a dot path of an input tree, or `missing`."""
    cur: object = inputs
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return missing
        cur = cur[part]
    return cur


def switch(values: Mapping[str, object], path: str, default: object) -> object:
    """A chart value, or the chart's default where the values leave it unset (Helm's merge)."""
    found = at_path(values, path)
    return default if found is None else found


@dataclass
class DeployGraph:
    """A plan's resources with their direct and transitive creation dependencies."""

    plan: Plan

    @cached_property
    def by_urn(self) -> dict[str, PlannedResource]:
        return {r.urn: r for r in self.plan.resources}

    @cached_property
    def children(self) -> dict[str, list[str]]:
        kids: dict[str, list[str]] = {}
        for r in self.plan.resources:
            if r.parent:
                kids.setdefault(r.parent, []).append(r.urn)
        return kids

    def descendants(self, urn: str) -> list[str]:
        out: list[str] = []
        stack = list(self.children.get(urn, []))
        while stack:
            u = stack.pop()
            out.append(u)
            stack.extend(self.children.get(u, []))
        return out

    def resolve(self, urn: str) -> str:
        """A URN the plan does not list is a resource a remote component (pulumi-eks) created inside
        itself, e.g. `...eks:index:Cluster$aws:eks/cluster:Cluster::c-eks-eksCluster`: waiting for it
        means waiting for that component (its type is the chain's parent, its name a prefix)."""
        if urn in self.by_urn:
            return urn
        head, _, name = urn.rpartition("::")
        chain = head.rsplit("::", 1)[-1].split("$")
        if len(chain) < 2:
            return urn
        owners = [r for r in self.plan.resources if r.type == chain[-2] and name.startswith(r.name)]
        return max(owners, key=lambda r: len(r.name)).urn if owners else urn

    def direct(self, r: PlannedResource) -> set[str]:
        """What the engine must have created before `r`: its dependencies (components expanded to
        their children) and its provider."""
        deps: set[str] = set()
        for raw in r.dependencies:
            d = self.resolve(raw)
            deps.add(d)
            dep = self.by_urn.get(d)
            if dep is not None and not dep.custom:
                deps.update(self.descendants(d))
        p = provider_urn(r.provider)
        if p:
            deps.add(p)
        deps.discard(r.urn)
        return deps

    @cached_property
    def _direct(self) -> dict[str, set[str]]:
        return {r.urn: self.direct(r) for r in self.plan.resources}

    @cached_property
    def _closure(self) -> dict[str, frozenset[str]]:
        memo: dict[str, frozenset[str]] = {}
        for start in self.by_urn:
            if start in memo:
                continue
            # iterative DFS with post-order to fill memo without recursion limits
            stack: list[tuple[str, bool]] = [(start, False)]
            visiting: set[str] = set()
            while stack:
                urn, done = stack.pop()
                if done:
                    acc: set[str] = set()
                    for d in self._direct.get(urn, ()):
                        acc.add(d)
                        acc |= memo.get(d, frozenset())
                    memo[urn] = frozenset(acc)
                    visiting.discard(urn)
                    continue
                if urn in memo or urn in visiting:
                    continue
                visiting.add(urn)
                stack.append((urn, True))
                stack.extend((d, False) for d in self._direct.get(urn, ()) if d not in memo)
        return memo

    def ancestors(self, urn: str) -> frozenset[str]:
        """Everything that must exist before `urn` is created (transitively)."""
        return self._closure.get(urn, frozenset())

    def waits_for(self, urn: str, other: str) -> bool:
        return other in self.ancestors(urn)

    def order(self) -> list[str]:
        """A creation order the engine could take (dependencies first, ties by plan order)."""
        done: set[str] = set()
        out: list[str] = []
        for r in self.plan.resources:
            for u in sorted(self.ancestors(r.urn), key=lambda u: len(self.ancestors(u))):
                if u not in done and u in self.by_urn:
                    done.add(u)
                    out.append(u)
            if r.urn not in done:
                done.add(r.urn)
                out.append(r.urn)
        return out


def of_types(plan: Plan, types: Iterable[str]) -> list[PlannedResource]:
    wanted = set(types)
    return [r for r in plan.resources if r.type in wanted]
