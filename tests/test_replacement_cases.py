"""Every replacement-table entry, held to the providers' behaviour restated in `tests/replacement_cases.py`.

Each case changes one input of one resource (old plan JSON -> new plan JSON) and asks `gpuplane diff` what
the change does. The expected kind is written from the providers' source, not read from the table, so a
deleted, added or mis-typed rule fails here by name. Then the planted bug of the audit: a spot toggle on a
shipped GKE pool must replace it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpuplane.plan.diff import change_of, diff
from gpuplane.plan.replacement import RULES, Effect

from .conftest import cached_plan
from .replacement_cases import CASES
from .test_replacement import doc, pools, with_config

P = "urn:pulumi:s::p::"


def nested(path: str, value: Any) -> dict[str, Any]:
    """`{"a": {"b": value}}` for path `a.b` (a `*` key becomes `k`)."""
    out: Any = value
    for key in reversed(path.replace("*", "k").split(".")):
        out = {key: out}
    return dict(out)


def resource(type_: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"urn": f"{P}{type_}::r", "type": type_, "name": "r", "inputs": inputs}


def effect(type_: str, old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    """What `gpuplane diff` says about the change: {"replaces"}, {"disrupts nodes"}, {"child:<what>"}, or {}."""
    change = change_of(resource(type_, old), resource(type_, new))
    assert change is not None, (type_, old, new)
    return {f"child:{f.target}" if f.target else f.effect.value for f in change.findings.values()}


def outcomes(type_: str, path: str, kind: str) -> list[tuple[str, dict[str, Any], dict[str, Any], set[str]]]:
    """(what, old inputs, new inputs, expected effects) for one case."""
    changed = (nested(path, "a"), nested(path, "b"))
    if kind == "BLOCK":
        return [
            ("added", {}, nested(path, {"x": 1}), {"replaces"}),
            ("removed", nested(path, {"x": 1}), {}, {"replaces"}),
            ("changed inside", nested(path, {"x": 1}), nested(path, {"x": 2}), set()),
        ]
    if kind == "REMOVED":
        return [
            ("removed", changed[0], {}, {"replaces"}),
            ("added", {}, changed[0], set()),
            ("changed", *changed, set()),
        ]
    simple = {"R": {"replaces"}, "D": {"disrupts nodes"}, "-": set()}
    expected = simple[kind] if kind in simple else {kind.replace("CHILD:", "child:")}
    return [("changed", *changed, expected)]


CASE_IDS = [(t, p, k) for t, paths in CASES.items() for p, k in paths.items()]


@pytest.mark.parametrize(("type_", "path", "kind"), CASE_IDS, ids=[f"{t}:{p}" for t, p, _ in CASE_IDS])
def test_changing_one_input_does_what_the_provider_does(type_: str, path: str, kind: str) -> None:
    for what, old, new, expected in outcomes(type_, path, kind):
        assert effect(type_, old, new) == expected, (type_, path, what)


def test_every_table_rule_has_a_case() -> None:
    """A rule added to the table without a restated case (or a type without cases) fails here."""
    missing = [(t, r.path) for t, rules in RULES.items() for r in rules if r.path not in CASES.get(t, {})]
    assert missing == []


def test_a_spot_toggle_replaces_the_gke_pool() -> None:
    """The audit's planted bug (the `spot` ForceNew rule deleted): the shipped inference pool turned on-demand
    is a new node pool, and `gpuplane diff` says so."""
    base = pools("gcp-standard")
    (spot,) = [p for p in base if p.get("spot")]
    flipped = copy.deepcopy(base)
    next(p for p in flipped if p["name"] == spot["name"])["spot"] = False
    before = cached_plan(with_config("gcp-standard", gpuPools=base))
    after = cached_plan(with_config("gcp-standard", gpuPools=flipped))
    d = diff(doc(before), doc(after))
    changes = [c for c in d.changed if c.type == "gcp:container/nodePool:NodePool" and c.replaces]
    assert [spot["name"] in c.urn for c in changes] == [True], [c.urn for c in changes]
    (change,) = changes
    assert {p: f.effect for p, f in change.findings.items()} == {"nodeConfig.spot": Effect.REPLACES}
