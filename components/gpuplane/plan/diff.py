"""Offline plan diff for pull requests: resources added, removed and changed (with the changed input
paths), and which changes replace a resource or disrupt its nodes.

The classification is the replacement table (components/gpuplane/plan/replacement.py), taken from the providers'
schema source. Paths a resource lists in `ignoreChanges` never count as changes, as in the engine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .deploy.rules import GLOBAL_NAMES
from .paths import UNSET, changed_paths, changed_values
from .replacement import Effect, Finding, classify, covers, ignored_paths

__all__ = ["UNSET", "Change", "PlanDiff", "changed_paths", "changed_values", "diff", "load_plan", "to_text"]


@dataclass
class Change:
    urn: str
    type: str
    paths: list[str]
    findings: dict[str, Finding] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    """Changed paths the resource's `ignoreChanges` hides from the engine."""
    values: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """Changed path -> (old value, new value); `UNSET` where a side has no such key."""
    delete_first: str = ""
    """Why a replacement deletes the old resource before creating the new one ("" when it creates first)."""

    @property
    def disruptive(self) -> dict[str, str]:
        """Changed path -> "replaces …" / "disrupts nodes …" with the cited reason."""
        return {p: f.text() for p, f in self.findings.items()}

    @property
    def replaces(self) -> bool:
        """The resource itself is replaced (a child replacement counts as disruptive only)."""
        return any(f.replaces_self for f in self.findings.values())

    @property
    def refused(self) -> dict[str, str]:
        """Changed path -> why the API server refuses the update in place (the `up` fails there)."""
        return {p: f.text() for p, f in self.findings.items() if f.effect is Effect.REFUSED}


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
                    **({"refused": c.refused} if c.refused else {}),
                    "values": {p: {"old": _plain(o), "new": _plain(n)} for p, (o, n) in c.values.items()},
                    **({"deletedFirst": c.delete_first} if c.replaces and c.delete_first else {}),
                    **({"ignored": c.ignored} if c.ignored else {}),
                }
                for c in self.changed
            ],
            "disruptive": self.disruptive,
        }


def _plain(value: Any) -> Any:
    return None if value is UNSET else value


def disruption(type_: str, paths: list[str]) -> dict[str, str]:
    """Changed paths the replacement table marks as replacing or disrupting, with the cited reason."""
    return {p: f.text() for p, f in classify(type_, paths).items()}


def change_of(old: Mapping[str, Any], new: Mapping[str, Any]) -> Change | None:
    """How one resource (a plan JSON entry in both plans) changes, honouring the new `ignoreChanges`."""
    values = {path: (a, b) for path, a, b in changed_values(old["inputs"], new["inputs"])}
    if not values:
        return None
    paths = list(values)
    ignore = ignored_paths(new["type"], new["inputs"], new.get("ignoreChanges", ()))
    kept = [p for p in paths if not any(covers(i, p) for i in ignore)]
    findings = classify(new["type"], kept, old["inputs"], new["inputs"], new.get("replaceOnChanges", ()))
    change = Change(
        new["urn"], new["type"], kept, findings, [p for p in paths if p not in kept], {p: values[p] for p in kept}
    )
    if change.replaces:
        change.delete_first = delete_first(new)
    return change


BRIDGED = ("aws:", "gcp:", "eks:index:ManagedNodeGroup")
"""Types whose physical resource a Terraform-bridged provider manages (pulumi-eks's node group is an
`aws.eks.NodeGroup`)."""


def delete_first(new: Mapping[str, Any]) -> str:
    """Why the engine deletes the old resource before creating its replacement, or "" (it creates first).

    Pulumi replaces create-first unless the resource sets `deleteBeforeReplace` or the provider's Diff asks
    (pulumi/pulumi pkg/resource/deploy/step_generator.go, `diff.DeleteBeforeReplace`). A bridged provider asks
    whenever the name Pulumi would autoname is set by hand (pulumi/pulumi-terraform-bridge pkg/tfbridge
    provider.go Diff, schema.go `nameRequiresDeleteBeforeReplace`): a fixed name never collides, the old
    resource is gone first. pulumi-kubernetes does the same for an object with a fixed `metadata.name`
    (provider/pkg/provider/provider.go Diff). A prefixed name (`nodeGroupNamePrefix`) creates first."""
    if new.get("deleteBeforeReplace"):
        return "deleteBeforeReplace is set on the resource"
    spec = GLOBAL_NAMES.get(new["type"])
    if spec is not None and new["type"].startswith(BRIDGED) and new["inputs"].get(spec.input) is not None:
        return (
            f"{spec.input} is set by hand, so the provider deletes first (pulumi-terraform-bridge "
            "nameRequiresDeleteBeforeReplace)"
        )
    meta = new["inputs"].get("metadata")
    if new["type"].startswith("kubernetes:") and isinstance(meta, Mapping) and meta.get("name"):
        return "a Kubernetes object with a fixed name is deleted first (pulumi-kubernetes Diff)"
    return ""


def name_key(urn: str) -> str:
    """A URN without its stack and project (`urn:pulumi:STACK::PROJECT::type$type::name` -> `type$type::name`),
    to match the same resource in plans of two stacks."""
    parts = urn.split("::", 2)
    return parts[2] if len(parts) == 3 else urn


def diff(base: Mapping[str, Any], head: Mapping[str, Any], match_names: bool = False) -> PlanDiff:
    """Compare two `gpuplane plan --format json` documents. With `match_names`, resources are matched by
    type and name, ignoring the stack and project in their URNs (two stacks of one program)."""
    key = name_key if match_names else str
    old = {key(r["urn"]): r for r in base["resources"]}
    new = {key(r["urn"]): r for r in head["resources"]}
    result = PlanDiff(
        added=sorted(new[k]["urn"] for k in set(new) - set(old)),
        removed=sorted(old[k]["urn"] for k in set(old) - set(new)),
    )
    for k in sorted(set(old) & set(new)):
        change = change_of(old[k], new[k])
        if change and change.paths:
            result.changed.append(change)
    return result


def show(value: Any, width: int = 60) -> str:
    """A changed value on one line: JSON, cut to `width` characters; `(unset)` for a missing key."""
    if value is UNSET:
        return "(unset)"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def to_text(d: PlanDiff) -> str:
    lines = []
    for urn in d.added:
        lines.append(f"+ {urn}")
    for urn in d.removed:
        lines.append(f"- {urn}  [DISRUPTIVE: removed]")
    for c in d.changed:
        lines.append(f"{'+-' if c.replaces else '~'} {c.urn}" + ("  [REPLACED]" if c.replaces else ""))
        if c.replaces and c.delete_first:
            lines.append(f"    deleted before its replacement is created: {c.delete_first}")
        for p in c.paths:
            f = c.findings.get(p)
            mark = f"  [{'REFUSED' if f.effect is Effect.REFUSED else 'DISRUPTIVE'}: {f.text()}]" if f else ""
            values = f": {show(c.values[p][0])} → {show(c.values[p][1])}" if p in c.values else ""
            lines.append(f"    {p}{values}{mark}")
        for p in c.ignored:
            lines.append(f"    {p}  (ignored: ignoreChanges)")
    summary = f"{len(d.added)} to add, {len(d.changed)} to change, {len(d.removed)} to remove"
    lines.append(summary + ("; DISRUPTIVE changes above" if d.disruptive else "; nothing disruptive"))
    if any(c.refused for c in d.changed):
        lines.append(
            "the API server refuses an update above: `pulumi preview` and `pulumi up` fail there (replace or recreate "
            "the object)"
        )
    return "\n".join(lines)


MAKE_ONE = "make one with `gpuplane plan STACK --format json`"


def load_plan(path: str) -> dict[str, Any]:
    """A plan JSON file, or an `InputError` naming the file when it is missing, not JSON or not a plan."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", "BASE HEAD") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text, so not a plan JSON ({MAKE_ONE})", "BASE HEAD") from None
    except json.JSONDecodeError as exc:
        msg = f"{path} is not JSON (line {exc.lineno}: {exc.msg}), so not a plan ({MAKE_ONE})"
        raise InputError(msg, "BASE HEAD") from None
    resources = doc.get("resources") if isinstance(doc, dict) else None
    if not isinstance(resources, list) or not all(_is_resource(r) for r in resources):
        raise InputError(f"{path} is not a gpuplane plan: no `resources` list of resources ({MAKE_ONE})", "BASE HEAD")
    plan: dict[str, Any] = doc
    return plan


def _is_resource(r: object) -> bool:
    return (
        isinstance(r, dict)
        and isinstance(r.get("urn"), str)
        and isinstance(r.get("type"), str)
        and isinstance(r.get("inputs"), dict)
    )
