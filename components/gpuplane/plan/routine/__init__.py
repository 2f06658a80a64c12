"""Routine changes, checked: what each everyday edit of a stack does on the next `pulumi up`.

`CATALOGUE` lists the edits platform teams make every week (scale a pool, add or drop one, bump Kubernetes,
switch monitoring, ...). `check_stack` applies each to a stack's config, plans it offline and compares the
plans with the same rules `gpuplane diff` uses (the replacement table and the order a replacement takes:
a hand-set name makes the provider delete first, `plan.diff.delete_first`), plus the providers' update
constraints (`CONSTRAINTS`). A node pool deleted first is a capacity gap; no routine change may replace a
cluster or fail.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...config import ConfigError, parse_config
from ..cloud import Cloud
from ..deploy.readback import cloud_after, stored
from ..deploy.rules import CLUSTER_SCOPED_KINDS
from ..diff import PlanDiff, diff
from ..mocks import PlanMocks
from ..replacement import Effect
from ..runner import Plan, plan_stack
from ..stackfile import StackFile
from .catalogue import CATALOGUE, RoutineChange, raw
from .constraints import CONSTRAINTS

__all__ = [
    "CATALOGUE",
    "CONSTRAINTS",
    "Outcome",
    "Planned",
    "RoutineChange",
    "check_stack",
    "markdown_table",
    "outcome",
    "planned_changes",
    "to_text",
]

CLUSTER_TYPES = frozenset({"gcp:container/cluster:Cluster", "eks:index:Cluster", "aws:eks/cluster:Cluster"})
POOL_TYPES = frozenset(
    {"gcp:container/nodePool:NodePool", "eks:index:ManagedNodeGroup", "kubernetes:karpenter.sh/v1:NodePool"}
)


@dataclass
class Outcome:
    change: str
    what: str
    applies: bool = True
    refused_by_config: str = ""
    in_place: list[str] = field(default_factory=list)
    rolls: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """What the cloud or the engine refuses (a failed `up`), or a cluster replaced or removed."""
    capacity_gaps: list[str] = field(default_factory=list)
    """Node pools replaced delete-first: their nodes are gone until the new pool is up."""
    workloads: list[str] = field(default_factory=list)
    """Updates that disturb admitted workloads (a queue moved to a renamed flavor): drain the queue first."""

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"change": self.change, "what": self.what, "applies": self.applies}
        if not self.applies:
            return {**out, **({"refusedByConfig": self.refused_by_config} if self.refused_by_config else {})}
        keys = ("in_place", "rolls", "replaced", "added", "removed", "failures", "capacity_gaps", "workloads")
        camel = {"in_place": "inPlace", "capacity_gaps": "capacityGaps"}
        return {**out, **{camel.get(k, k): getattr(self, k) for k in keys}, "ok": self.ok}


def short(urn: str) -> str:
    """`type::name` of a URN (the type's last segment), for tables."""
    head, _, name = urn.rpartition("::")
    return f"{head.rsplit('::', 1)[-1].rsplit('$', 1)[-1]}::{name}"


def outcome(change: RoutineChange, base: Mapping[str, Any], head: Mapping[str, Any]) -> Outcome:
    """What `head` does to a stack deployed as `base` (two plan JSON documents)."""
    d: PlanDiff = diff(base, head)
    by_urn = {r["urn"]: r for r in base["resources"]}
    heads = {r["urn"]: r for r in head["resources"]}
    out = Outcome(change.id, change.what, added=[short(u) for u in d.added], removed=[short(u) for u in d.removed])
    types = {r["urn"]: r["type"] for r in base["resources"]}
    for urn in d.removed:
        if types[urn] in CLUSTER_TYPES:
            out.failures.append(f"{short(urn)}: a cluster is removed")
    out.failures += moved_objects(base, head, d.added, d.removed)
    for c in d.changed:
        name = short(c.urn)
        rolls = any(f.effect is Effect.DISRUPTS for f in c.findings.values())
        if c.replaces:
            out.replaced.append(name)
            if c.type in CLUSTER_TYPES:
                out.failures.append(f"{name}: the cluster is replaced ({', '.join(c.disruptive)})")
            if c.delete_first and c.type in POOL_TYPES:
                out.capacity_gaps.append(f"{name}: deleted before its replacement is created ({c.delete_first})")
        elif rolls:
            out.rolls.append(name)
        else:
            out.in_place.append(name)
        new = heads[c.urn]
        how = (
            ("replaced delete-first" if c.delete_first else "replaced create-first")
            if c.replaces
            else "rolls"
            if rolls
            else "in place"
        )
        out.failures += [f"{name}: {text}" for text in c.refused.values()]
        out.workloads += [f"{name}: {f.text()}" for f in c.findings.values() if f.effect is Effect.REQUEUES]
        for rule in CONSTRAINTS:
            if rule.type == c.type and rule.refuses(by_urn[c.urn]["inputs"], new["inputs"], how):
                out.failures.append(f"{name}: {rule.why} ({rule.source})")
    return out


def _object_key(r: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    """A Kubernetes object's identity on its cluster: (provider, kind, namespace, name)."""
    meta = (r.get("inputs") or {}).get("metadata")
    if not r["type"].startswith("kubernetes:") or not isinstance(meta, Mapping) or not meta.get("name"):
        return None
    namespace = "" if r["type"].rsplit(":", 1)[-1] in CLUSTER_SCOPED_KINDS else str(meta.get("namespace") or "default")
    return (str(r.get("provider") or ""), r["type"], namespace, str(meta["name"]))


def moved_objects(
    base: Mapping[str, Any], head: Mapping[str, Any], added: Sequence[str], removed: Sequence[str]
) -> list[str]:
    """A Kubernetes object whose resource changes URN (a new logical name or parent) with the same name: the engine
    creates the new resource before it deletes the old one (pulumi/pulumi pkg/resource/deploy/step_generator.go:
    deletes of resources no longer in the program come after every create), so the API server answers the create
    with AlreadyExists; and deleting the old one then deletes the object (a Namespace: with everything in it)."""
    gone = {k: u for u in removed if (k := _object_key(_resource(base, u))) is not None}
    return [
        f"{short(u)}: {k[1].rsplit(':', 1)[-1]} {k[3]} moves from {short(gone[k])}: the create meets AlreadyExists "
        "(the old one is deleted after it), and that delete would take the object"
        for u in added
        if (k := _object_key(_resource(head, u))) is not None and k in gone
    ]


def _resource(plan: Mapping[str, Any], urn: str) -> Mapping[str, Any]:
    return next(r for r in plan["resources"] if r["urn"] == urn)


def plan_against(stack: StackFile, cloud: Cloud | None = None) -> Plan:
    """The stack's plan for an `up` that meets `cloud` (what an earlier `up` left; none: a first `up`)."""
    return plan_stack(stack, PlanMocks(cloud=cloud))


@dataclass(frozen=True)
class Planned:
    """One routine change on a stack, planned: the stored state before it and the plan after it (both plan
    JSON documents), or why it does not apply."""

    change: RoutineChange
    base: Mapping[str, Any] | None = None
    head: Mapping[str, Any] | None = None
    refused_by_config: str = ""


def planned_changes(
    stack: StackFile,
    changes: tuple[RoutineChange, ...] = CATALOGUE,
    planner: Callable[[StackFile, Cloud | None], Plan] = plan_against,
) -> Iterator[Planned]:
    """Every routine change on `stack`, planned offline (by `planner`, which a test may cache) against what the
    unchanged stack left in the cloud."""
    first = planner(stack, None)
    for change in changes:
        start = change.start(copy.deepcopy(stack.config)) if change.start else stack.config
        edited = change.apply(copy.deepcopy(start)) if start is not None else None
        if edited is None or start is None:
            yield Planned(change)
            continue
        try:
            for config in (start, edited):
                parse_config(raw(config))
        except ConfigError as exc:
            yield Planned(change, refused_by_config=str(exc))
            continue

        def plan(config: dict[str, Any], cloud: Cloud | None = None) -> Plan:
            return planner(StackFile(stack.project, stack.stack, config, stack.path), cloud)

        base = first if change.start is None else plan(start)
        yield Planned(change, stored(base), plan(edited, cloud_after(base)).to_json())


def check_stack(
    stack: StackFile,
    changes: tuple[RoutineChange, ...] = CATALOGUE,
    planner: Callable[[StackFile, Cloud | None], Plan] = plan_against,
) -> list[Outcome]:
    """Every routine change on `stack` (`planned_changes`), compared with the unchanged stack's plan."""
    out = []
    for p in planned_changes(stack, changes, planner):
        if p.base is None or p.head is None:
            out.append(Outcome(p.change.id, p.change.what, applies=False, refused_by_config=p.refused_by_config))
        else:
            out.append(outcome(p.change, p.base, p.head))
    return out


def to_text(stack: str, outcomes: list[Outcome]) -> str:
    lines = [f"routine changes on {stack}:"]
    for o in outcomes:
        if not o.applies:
            why = f" (the config refuses it: {_first_problem(o.refused_by_config)})" if o.refused_by_config else ""
            lines.append(f"  {o.change}: does not apply{why}")
            continue
        verdict = "OK" if o.ok else "FAILS"
        counts = (
            f"{len(o.in_place)} updated in place, {len(o.rolls)} roll nodes, {len(o.replaced)} replaced, "
            f"{len(o.added)} added, {len(o.removed)} removed"
        )
        lines.append(f"  {o.change}: {verdict}: {counts}")
        lines += [f"    rolls nodes: {n}" for n in o.rolls]
        lines += [f"    replaced: {n}" for n in o.replaced]
        lines += [f"    capacity gap: {n}" for n in o.capacity_gaps]
        lines += [f"    admitted workloads: {n}" for n in o.workloads]
        lines += [f"    FAILS: {n}" for n in o.failures]
    return "\n".join(lines)


def _first_problem(message: str) -> str:
    """The first problem of a `ConfigError` message (its first line is a count)."""
    lines = [ln.strip(" -") for ln in message.splitlines()]
    return next((ln for ln in lines[1:] if ln), lines[0] if lines else "")


def cell(o: Outcome) -> str:
    """One stack's result for one change, in a few words (docs/upgrading.md)."""
    if not o.applies:
        return "n/a"
    if o.failures:
        return "**fails**"
    words = []
    if o.capacity_gaps:
        words.append("pool deleted first")
    elif any(r.split("::")[0] in POOL_TYPES for r in o.replaced):
        words.append("pool replaced")
    karpenter = ("kubernetes:karpenter.sh/", "kubernetes:karpenter.k8s.aws/")
    if o.rolls and all(r.startswith(karpenter) for r in o.rolls):
        words.append("nodes drift (replaced once empty)")
    elif o.rolls:
        words.append("rolls nodes")
    if o.workloads:
        words.append("drain the queues")
    others = [r for r in o.replaced if r.split("::")[0] not in POOL_TYPES]
    if others:
        words.append(f"{len(others)} replaced")
    if o.added or o.removed:
        words.append(f"+{len(o.added)}/-{len(o.removed)}")
    if not words:
        words.append("in place" if o.in_place or o.replaced else "no change")
    return ", ".join(words)


def markdown_table(results: Mapping[str, list[Outcome]]) -> str:
    """Routine change x stack, as docs/upgrading.md shows it (generated by `gpuplane lifecycle`)."""
    stacks = list(results)
    lines = ["| change | " + " | ".join(f"`{s}`" for s in stacks) + " |", "|---|" + "---|" * len(stacks)]
    for i, change in enumerate(CATALOGUE):
        lines.append(f"| `{change.id}` | " + " | ".join(cell(results[s][i]) for s in stacks) + " |")
    return "\n".join(lines)
