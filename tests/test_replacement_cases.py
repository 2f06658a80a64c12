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

from gpuplane.plan import replacement
from gpuplane.plan.diff import change_of, diff
from gpuplane.plan.replacement import NO_REPLACE_INPUTS, RULES, Effect, Rule, _present, classify, covered, covers

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


def merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """`b` laid over `a`, key by key."""
    out = copy.deepcopy(a)
    for k, v in b.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


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
    if kind == "W_GONE":

        def queue(*names: str) -> dict[str, Any]:
            if path == "spec.resourceGroups":
                flavors = [{"name": n, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]} for n in names]
                return {"spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": flavors}]}}
            return {"spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "c", "onFlavors": list(names)}]}}}

        requeues = {"disrupts admitted workloads"}
        more_quota = merged(queue("a"), {})
        if path == "spec.resourceGroups":
            more_quota["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 16
        return [
            ("renamed", queue("a"), queue("a-1"), requeues),
            ("one dropped", queue("a", "b"), queue("b"), requeues),
            ("renamed while another is added", queue("a"), queue("b", "a-1"), requeues),
            ("one added", queue("a"), queue("a", "b"), set()),
            ("reordered", queue("a", "b"), queue("b", "a"), set()),
            *([("quota raised", queue("a"), more_quota, set())] if path == "spec.resourceGroups" else []),
        ]
    if kind == "R_UNLESS_ID":
        ident = {"clusterIdentifier": "ml-fleet-us-central1"}
        return [
            ("changed, no identifier", *changed, {"replaces"}),
            ("changed, identifier kept", merged(ident, changed[0]), merged(ident, changed[1]), set()),
            ("changed, identifier added", changed[0], merged(ident, changed[1]), {"replaces"}),
        ]
    if kind == "R_ID":
        return [
            ("changed", {"clusterIdentifier": "a"}, {"clusterIdentifier": "b"}, {"replaces"}),
            ("added", {}, {"clusterIdentifier": "a"}, set()),
        ]
    if kind == "F_TOPOLOGY":
        on = {"spec": {"topologyName": "t"}}
        old_on, new_on = (merged(on, c) for c in changed)
        return [
            ("changed, stored on a topology", old_on, new_on, {"refused by the API server"}),
            (
                "set, stored without one",
                {"spec": {}} if path == "spec.topologyName" else changed[0],
                merged(on, changed[1]) if path == "spec.topologyName" else changed[1],
                set(),
            ),
            (
                "removed, stored on a topology",
                old_on,
                on if path != "spec.topologyName" else {"spec": {}},
                {"refused by the API server"},
            ),
        ]
    simple = {
        "R": {"replaces"},
        "D": {"disrupts nodes"},
        "F": {"refused by the API server"},
        "W": {"disrupts admitted workloads"},
        "-": set(),
    }
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


# ---- how the classification reads the table (the mutation benchmark's survivors in replacement.py) ----


def test_a_finding_names_its_path_reason_and_source() -> None:
    (finding,) = classify("gcp:container/nodePool:NodePool", ["nodeConfig.spot"]).values()
    assert (finding.path, finding.effect) == ("nodeConfig.spot", Effect.REPLACES)
    assert finding.why and "node_config.spot" in finding.source and finding.text().startswith("replaces: ")
    (child,) = classify("eks:index:Cluster", ["accessEntries.admin.type"]).values()
    assert child.text().startswith("replaces access entry: ") and child.path == "accessEntries.admin.type"


def test_replace_on_changes_replaces_whatever_the_table_says() -> None:
    """Pulumi's `replaceOnChanges` option: a change under a listed path replaces the resource."""
    old = resource("kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"a": 1}, "x": 1}})
    new = resource("kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"a": 2}, "x": 2}})
    new["replaceOnChanges"] = ["spec.template"]
    change = change_of(old, new)
    assert change is not None and set(change.findings) == {"spec.template.a"}
    finding = change.findings["spec.template.a"]
    assert (finding.path, finding.effect, finding.source) == (
        "spec.template.a",
        Effect.REPLACES,
        "pulumi resource option",
    )
    assert finding.why == "replaceOnChanges set on the resource"


def test_ignore_and_replace_paths_in_pulumis_syntax() -> None:
    """Pulumi option paths: `a["b"]` is `a.b`, `a[*]` any element, `*` everything; a prefix covers its
    children and elements only."""
    assert covers('metadata["labels"]', "metadata.labels.team")
    assert covers("taints[*]", "taints[0]") and covers("taints[*]", "taints")
    assert covers("*", "anything.at.all") and covers("", "x")
    assert covers("scalingConfig", "scalingConfig.desiredSize") and covers("tags", "tags[2]")
    assert not covers("tag", "tags") and not covers("scaling", "scalingConfig.minSize")


def test_removal_rules_look_at_nested_paths() -> None:
    assert _present({"a": {"b": {"c": 1}}}, "a.b.c") and not _present({"a": {"b": {}}}, "a.b.c")
    assert not _present({"a": 1}, "a.b")


def test_a_path_two_rules_match_takes_the_replacing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Overlapping rules (none in today's table): the replacing rule wins over the disrupting one, and the
    resource's own replacement over a child's."""
    rules = (
        Rule("spec", Effect.DISRUPTS, "drift", "s/r a.go"),
        Rule("spec.a", Effect.REPLACES, "child", "s/r b.go", target="child"),
        Rule("spec.a", Effect.REPLACES, "self", "s/r c.go"),
    )
    monkeypatch.setattr(replacement, "RULES", {"x:y/z:Z": rules})
    (finding,) = classify("x:y/z:Z", ["spec.a"]).values()
    assert (finding.effect, finding.why, finding.target) == (Effect.REPLACES, "self", "")
    (drift,) = classify("x:y/z:Z", ["spec.b"]).values()
    assert drift.effect is Effect.DISRUPTS


def test_only_kubernetes_objects_get_the_metadata_rules() -> None:
    assert classify("kubernetes:core/v1:Namespace", ["metadata.name"])
    assert classify("aws:ec2/vpc:Vpc", ["metadata.name"]) == {}
    assert classify("kubernetes:helm.sh/v3:Release", ["metadata.name"]) == {}  # a release is not an object


def test_every_type_is_accounted_for_exactly() -> None:
    assert covered("gcp:container/nodePool:NodePool") == "rules"
    assert covered("pulumi:pulumi:Stack") == NO_REPLACE_INPUTS["pulumi:pulumi:Stack"]
    assert covered("gpuplane:index:GpuOperator") == NO_REPLACE_INPUTS["gpuplane:"]
    assert covered("pulumi:pulumi:StackX") is None and covered("aws:foo/bar:Bar") is None
