"""Show a plan: an indented tree, the JSON contract, or a Graphviz DOT graph."""

from __future__ import annotations

import json
from typing import Any

from ..text import jsontext
from .runner import Plan, PlannedResource


def _children(plan: Plan) -> dict[str | None, list[PlannedResource]]:
    kids: dict[str | None, list[PlannedResource]] = {}
    for r in plan.resources:
        kids.setdefault(r.parent, []).append(r)
    return kids


def _short(value: Any, width: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    first = text.strip().splitlines()[0] if text.strip() else ""
    more = " …" if len(text.strip().splitlines()) > 1 or len(first) > width else ""
    return first[:width] + more


def to_tree(plan: Plan) -> str:
    """Resources nested under their parents, then the stack outputs."""
    kids = _children(plan)
    lines: list[str] = []

    def walk(parent: str | None, prefix: str) -> None:
        items = kids.get(parent, [])
        for i, r in enumerate(items):
            last = i == len(items) - 1
            branch = "" if parent is None else ("└─ " if last else "├─ ")
            lines.append(f"{prefix}{branch}{r.name}  ({r.type})")
            walk(r.urn, prefix + ("" if parent is None else ("   " if last else "│  ")))

    walk(None, "")
    custom = sum(1 for r in plan.resources if r.custom)
    lines.append("")
    lines.append(
        f"{len(plan.resources)} resources ({custom} cloud/Kubernetes resources), stack {plan.project}/{plan.stack}"
    )
    lines.append("Outputs:")
    for k, v in plan.outputs.items():
        if k != "capacity":
            lines.append(f"  {k}: {_short(v)}")
    if isinstance(plan.outputs.get("capacity"), dict):
        from ..stack.capacity import table

        lines += ["", "Capacity and cost (output `capacity`):", table(plan.outputs["capacity"])]
    return "\n".join(lines)


def to_json(plan: Plan) -> str:
    """The JSON contract: {project, stack, resources: [{urn, type, name, parent, custom, inputs, dependsOn,
    provider}], outputs}."""
    return jsontext.dumps(plan.to_json())


def _dot_id(urn: str) -> str:
    return json.dumps(urn)


def dependency_edges(plan: Plan) -> list[tuple[str, PlannedResource]]:
    """(dependency URN, resource) for each registered dependency and provider, in plan order: what the
    engine creates first. Drawn dashed, beside the solid parent -> child edges."""
    from .deploy.graph import provider_urn

    known = {r.urn for r in plan.resources}
    edges = []
    for r in plan.resources:
        deps = set(r.dependencies) | ({provider_urn(r.provider)} if r.provider else set())
        edges += [(d, r) for d in sorted(d for d in deps if d in known and d != r.parent)]
    return edges


def to_dot(plan: Plan) -> str:
    """A Graphviz digraph: one node per resource (components as boxes), parent -> child edges (solid) and
    dependency edges (dashed: the dependency is created first)."""
    out = ["digraph plan {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];']
    for r in plan.resources:
        shape = "ellipse" if r.custom else "box"
        label = json.dumps(f"{r.name}\n{r.type}")
        out.append(f"  {_dot_id(r.urn)} [label={label}, shape={shape}];")
    for r in plan.resources:
        if r.parent:
            out.append(f"  {_dot_id(r.parent)} -> {_dot_id(r.urn)};")
    for dep, r in dependency_edges(plan):
        out.append(f'  {_dot_id(dep)} -> {_dot_id(r.urn)} [style=dashed, color="#888888"];')
    out.append("}")
    return "\n".join(out)


def to_mermaid(plan: Plan) -> str:
    """A Mermaid flowchart (GitHub renders it): components as rounded boxes, parent -> child edges, and
    dotted dependency edges."""
    ids = {r.urn: f"r{i}" for i, r in enumerate(plan.resources)}
    out = ["flowchart LR"]
    for r in plan.resources:
        label = f"{r.name}<br/><small>{r.type}</small>".replace('"', "'")
        out.append(f'  {ids[r.urn]}["{label}"]' if r.custom else f'  {ids[r.urn]}("{label}")')
    for r in plan.resources:
        if r.parent in ids:
            out.append(f"  {ids[r.parent]} --> {ids[r.urn]}")
    for dep, r in dependency_edges(plan):
        if dep in ids:
            out.append(f"  {ids[dep]} -.-> {ids[r.urn]}")
    return "\n".join(out)


FORMATS = {"tree": to_tree, "json": to_json, "dot": to_dot, "mermaid": to_mermaid}
