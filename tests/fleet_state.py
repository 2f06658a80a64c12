"""A plan as the engine would store it (`pulumi stack export`'s `deployment.resources`), for the fleet migration's
tests. The mocks' URNs follow the Python SDK's mock monitor (the parent's last type only, and the root stack's type
on top-level resources: pulumi/runtime/mocks.py `make_urn`); the engine's carry the parent's whole qualified type and
leave the root stack's out (pulumi/pulumi sdk/go/common/resource/urn.go `NewURN`). This restates the engine's rule."""

from __future__ import annotations

from typing import Any

from gpuplane.fleet.migrate import STACK_TYPE, root_urn, urn
from gpuplane.plan import Plan


def engine_state(plan: Plan) -> list[dict[str, Any]]:
    by_urn = {r.urn: r for r in plan.resources}
    qualified: dict[str, str] = {}

    def qtype(u: str) -> str:
        if u not in qualified:
            r = by_urn[u]
            parent = by_urn.get(r.parent or "")
            inherited = qtype(parent.urn) if parent is not None and parent.type != STACK_TYPE else ""
            qualified[u] = f"{inherited}${r.type}" if inherited else r.type
        return qualified[u]

    def engine(u: str) -> str:
        r = by_urn[u]
        if r.type == STACK_TYPE:
            return root_urn(plan.stack, plan.project)
        return urn(plan.stack, plan.project, qtype(u), r.name)

    from gpuplane.fleet.migrate import renamed

    names = {u: engine(u) for u in by_urn}  # resource references in inputs, too
    out = []
    for r in plan.resources:
        state: dict[str, Any] = {
            "urn": names[r.urn],
            "custom": r.custom,
            "type": r.type,
            "inputs": renamed(r.inputs, names),
        }
        if r.parent and r.parent in by_urn:
            state["parent"] = engine(r.parent)
        if r.provider:
            p_urn, _, p_id = r.provider.rpartition("::")
            state["provider"] = f"{engine(p_urn) if p_urn in by_urn else p_urn}::{p_id}"
        state["dependencies"] = [engine(d) for d in r.dependencies if d in by_urn]
        out.append(state)
    return dependency_order(out)


def dependency_order(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each resource refers to before it, as a real export lists them (the engine writes a snapshot in the
    order its integrity check demands: pulumi/pulumi pkg/resource/deploy/snapshot.go VerifyIntegrity)."""
    import graphlib

    by_urn = {r["urn"]: r for r in states}

    def refs(r: dict[str, Any]) -> set[str]:
        found = {r.get("parent"), *r.get("dependencies", [])}
        if r.get("provider"):
            found.add(r["provider"].rpartition("::")[0])
        return {u for u in found if u in by_urn}

    order = graphlib.TopologicalSorter({r["urn"]: refs(r) for r in states}).static_order()
    return [by_urn[u] for u in order]
