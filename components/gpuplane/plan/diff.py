"""Offline plan diff for pull requests: resources added, removed and changed (with the changed input
paths), and which changes replace a resource or disrupt its nodes.

The classification is the replacement table (components/gpuplane/plan/replacement.py), taken from the providers'
schema source. Paths a resource lists in `ignoreChanges` never count as changes, as in the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .replacement import Finding, classify, covers, ignored_paths


@dataclass
class Change:
    urn: str
    type: str
    paths: list[str]
    findings: dict[str, Finding] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    """Changed paths the resource's `ignoreChanges` hides from the engine."""

    @property
    def disruptive(self) -> dict[str, str]:
        """Changed path -> "replaces …" / "disrupts nodes …" with the cited reason."""
        return {p: f.text() for p, f in self.findings.items()}

    @property
    def replaces(self) -> bool:
        """The resource itself is replaced (a child replacement counts as disruptive only)."""
        return any(f.replaces_self for f in self.findings.values())


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
                {
                    "urn": c.urn,
                    "type": c.type,
                    "paths": c.paths,
                    "disruptive": c.disruptive,
                    "effects": {p: f.effect.value for p, f in c.findings.items()},
                    "replaces": c.replaces,
                    **({"ignored": c.ignored} if c.ignored else {}),
                }
                for c in self.changed
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
    """Changed paths the replacement table marks as replacing or disrupting, with the cited reason."""
    return {p: f.text() for p, f in classify(type_, paths).items()}


def change_of(old: Mapping[str, Any], new: Mapping[str, Any]) -> Change | None:
    """How one resource (a plan JSON entry in both plans) changes, honouring the new `ignoreChanges`."""
    paths = list(changed_paths(old["inputs"], new["inputs"]))
    if not paths:
        return None
    ignore = ignored_paths(new["type"], new["inputs"], new.get("ignoreChanges", ()))
    kept = [p for p in paths if not any(covers(i, p) for i in ignore)]
    findings = classify(new["type"], kept, old["inputs"], new["inputs"], new.get("replaceOnChanges", ()))
    return Change(new["urn"], new["type"], kept, findings, [p for p in paths if p not in kept])


def diff(base: Mapping[str, Any], head: Mapping[str, Any]) -> PlanDiff:
    """Compare two `gpuplane plan --format json` documents."""
    old = {r["urn"]: r for r in base["resources"]}
    new = {r["urn"]: r for r in head["resources"]}
    result = PlanDiff(added=sorted(set(new) - set(old)), removed=sorted(set(old) - set(new)))
    for urn in sorted(set(old) & set(new)):
        change = change_of(old[urn], new[urn])
        if change and change.paths:
            result.changed.append(change)
    return result


def to_text(d: PlanDiff) -> str:
    lines = []
    for urn in d.added:
        lines.append(f"+ {urn}")
    for urn in d.removed:
        lines.append(f"- {urn}  [DISRUPTIVE: removed]")
    for c in d.changed:
        lines.append(f"{'+-' if c.replaces else '~'} {c.urn}" + ("  [REPLACED]" if c.replaces else ""))
        for p in c.paths:
            f = c.findings.get(p)
            mark = f"  [DISRUPTIVE: {f.text()}]" if f else ""
            lines.append(f"    {p}{mark}")
        for p in c.ignored:
            lines.append(f"    {p}  (ignored: ignoreChanges)")
    summary = f"{len(d.added)} to add, {len(d.changed)} to change, {len(d.removed)} to remove"
    lines.append(summary + ("; DISRUPTIVE changes above" if d.disruptive else "; nothing disruptive"))
    return "\n".join(lines)


def load_plan(path: str) -> dict[str, Any]:
    with open(path) as f:
        doc: dict[str, Any] = json.load(f)
    return doc
