"""Updates the API server refuses: every custom resource a routine change updates in place, held to its
published CRD's transition rules (CEL rules naming `oldSelf`: Kueue's immutable queue references and
topology levels, Karpenter's nodeClassRef group and kind, a ComputeDomain's whole spec) with the object stored
before the change as `oldSelf`. A refused update fails `pulumi up` halfway; the component must replace such an
object instead (`replaceOnChanges`). The rules are read from the CRDs, not from gpuplane's tables."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpuplane.plan import load, routine
from gpuplane.plan.deploy.readback import cloud_after, stored
from gpuplane.plan.diff import diff, to_text
from gpuplane.plan.routine import RoutineChange, planned_changes
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT, STACKS, cached_plan, load_stack_config, need_reference, session_cache, stack_with
from .crds import CRD_FILES, _yaml_file, cel_results, crd_schema
from .test_replacement_cases import nested

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "queue": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "size": {"type": "integer", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
                        },
                    },
                },
                "plain": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "size": {"type": "integer", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
                        },
                    },
                },
            },
        }
    },
}


def test_transition_rules_see_the_stored_object_where_it_correlates() -> None:
    stored = {"spec": {"queue": "a", "items": [{"name": "x", "size": 1}], "plain": [{"size": 1}]}}
    assert cel_results(stored, SCHEMA, old=stored)[0] == []
    moved = copy.deepcopy(stored)
    moved["spec"]["queue"] = "b"
    assert cel_results(moved, SCHEMA, old=stored)[0] == [".spec.queue: self == oldSelf"]
    # A list-map item correlates by its keys: the same name is the same item, a new name is a create.
    grown = copy.deepcopy(stored)
    grown["spec"]["items"] = [{"name": "x", "size": 2}, {"name": "y", "size": 5}]
    assert cel_results(grown, SCHEMA, old=stored)[0] == [".spec.items[0].size: self == oldSelf"]
    # Items of an atomic list never correlate: their transition rules do not run on update.
    plain = copy.deepcopy(stored)
    plain["spec"]["plain"] = [{"size": 9}]
    assert cel_results(plain, SCHEMA, old=stored)[0] == []
    # A field the stored object lacked is created, not changed; so is one stored as null.
    assert cel_results(stored, SCHEMA, old={"spec": {}})[0] == []
    assert cel_results(stored, SCHEMA, old={"spec": {"queue": None}})[0] == []
    # A list-map item without every key set correlates with nothing.
    keyless = {"spec": {"items": [{"size": 1}]}}
    assert cel_results({"spec": {"items": [{"size": 2}]}}, SCHEMA, old=keyless)[0] == []


def custom_resource(resource: dict[str, Any]) -> tuple[str, str] | None:
    inputs = resource.get("inputs") or {}
    api, kind = str(inputs.get("apiVersion", "")), str(inputs.get("kind", ""))
    group = api.split("/")[0] if "/" in api else ""
    return (api, kind) if (group, kind) in CRD_FILES else None


def refusals(base: Any, head: Any) -> list[str]:
    """What the API server refuses among the custom resources `head` updates in place over `base` (plan JSON
    documents), judged by the published CRDs' transition rules."""
    ref = need_reference()
    before = {r["urn"]: r for r in base["resources"]}
    after = {r["urn"]: r for r in head["resources"]}
    out = []
    for change in diff(base, head).changed:
        which = custom_resource(after[change.urn])
        if change.replaces or which is None:
            continue
        failures, _ = cel_results(
            after[change.urn]["inputs"], crd_schema(ref, *which), old=before[change.urn]["inputs"]
        )
        out += [f"{change.urn.rsplit('::', 1)[-1]}{f}" for f in failures]
    return out


@session_cache
def refused_updates(stack: str) -> tuple[str, ...]:
    out = []
    for p in planned_changes(load(stack, ROOT), planner=cached_plan):
        if p.base is not None and p.head is not None:
            out += [f"{p.change.id}: {f}" for f in refusals(p.base, p.head)]
    return tuple(out)


@pytest.mark.parametrize("stack", STACKS)
def test_no_routine_change_updates_an_immutable_field_in_place(stack: str) -> None:
    assert refused_updates(stack) == ()


def managed_training(min_nodes: int, topology: bool = True) -> StackFile:
    pools = load_stack_config("aws-managed")["gpuplane:gpuPools"]
    pools = [p | {"minNodes": min_nodes, "maxNodes": 2} if p["name"] == "training" else p for p in pools]
    queues = {"topology": topology, "teams": [{"name": "ml", "quota": {"training": 16, "inference": 10}}]}
    return stack_with("aws-managed", gpuPools=pools, queues=queues)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (managed_training(2), managed_training(0)),  # scales from zero: its nodes lose EKS's topology labels
        (managed_training(2), managed_training(2, topology=False)),  # topology-aware scheduling turned off
        (managed_training(0), managed_training(2)),  # back onto the topology
    ],
    ids=["scale-from-zero", "topology-off", "topology-on"],
)
def test_a_pool_moving_off_or_onto_a_topology_is_not_refused(before: StackFile, after: StackFile) -> None:
    """Kueue refuses a change of a ResourceFlavor's nodeLabels, tolerations or topologyName once topologyName is
    set, and keeps a flavor a ClusterQueue names (finalizer kueue.x-k8s.io/resource-in-use): the change must
    make a new flavor, move the ClusterQueue to it in place and delete the old one."""
    base = stored(cached_plan(before))
    head = cached_plan(after, cloud_after(cached_plan(before))).to_json()
    assert refusals(base, head) == []
    outcome = routine.outcome(RoutineChange("edit", "edit", lambda c: c), base, head)
    assert outcome.failures == []
    kinds = {r["urn"]: r["type"].rsplit(":", 1)[-1] for r in [*base["resources"], *head["resources"]]}
    flavors_added = [u for u in diff(base, head).added if kinds[u] == "ResourceFlavor"]
    flavors_removed = [u for u in diff(base, head).removed if kinds[u] == "ResourceFlavor"]
    assert len(flavors_added) == len(flavors_removed) == 1, (flavors_added, flavors_removed)
    (queue,) = [c for c in diff(base, head).changed if kinds[c.urn] == "ClusterQueue"]
    assert not queue.replaces
    # ... and says what the move does to jobs already admitted on the old flavor (drain the queue first).
    assert len(outcome.workloads) == 1 and "stopPolicy: Hold" in outcome.workloads[0]


def test_the_diff_names_a_refused_update_and_the_lifecycle_fails_it() -> None:
    """The product's own model of the same rules: a Topology's levels changed in place."""
    base = stored(cached_plan(managed_training(2)))
    head = copy.deepcopy(base)
    (topology,) = [r for r in head["resources"] if r["type"].endswith(":Topology")]
    topology["inputs"]["spec"]["levels"] = topology["inputs"]["spec"]["levels"][1:]
    assert len(refusals(base, head)) == 1
    (change,) = diff(base, head).changed
    assert list(change.refused) == ["spec.levels"] and not change.replaces
    assert "REFUSED" in to_text(diff(base, head))
    failures = routine.outcome(RoutineChange("edit", "edit", lambda c: c), base, head).failures
    assert len(failures) == 1 and "refused by the API server" in failures[0]


def transition_rules(schema: dict[str, Any], path: str = "") -> list[tuple[str, str]]:
    """(field path, rule) of every CEL rule naming `oldSelf` in a CRD schema."""
    out = [(path, v["rule"]) for v in schema.get("x-kubernetes-validations", []) if "oldSelf" in v["rule"]]
    for key, sub in (schema.get("properties") or {}).items():
        out += transition_rules(sub, f"{path}.{key}" if path else key)
    if isinstance(schema.get("items"), dict):
        out += transition_rules(schema["items"], path)
    return out


SPEC_LEVEL = {
    ("karpenter.sh", "NodePool", "spec"): "static and dynamic NodePools (spec.replicas): gpuplane never sets replicas",
    ("kueue.x-k8s.io", "ResourceFlavor", "spec"): "nodeLabels, tolerations and topologyName once topologyName is set",
}
"""Transition rules on a whole object, with what they guard (the field rules below are read mechanically)."""
EMITTED = {
    ("karpenter.sh", "NodePool"): "kubernetes:karpenter.sh/v1:NodePool",
    ("kueue.x-k8s.io", "ResourceFlavor"): "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
    ("kueue.x-k8s.io", "LocalQueue"): "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
    ("kueue.x-k8s.io", "AdmissionCheck"): "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
    ("kueue.x-k8s.io", "Topology"): "kubernetes:kueue.x-k8s.io/v1beta2:Topology",
    ("resource.nvidia.com", "ComputeDomain"): "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain",
}
"""The custom resources gpuplane (or its placement helper) makes whose CRDs have transition rules."""


def test_the_diff_knows_every_immutable_field_of_the_crds_gpuplane_emits() -> None:
    """Each `self == oldSelf` (or `self.x == oldSelf.x`) rule of a CRD gpuplane emits: changing that field in
    place is what `gpuplane diff` calls refused. Read from the published CRDs, not from the table."""
    import re

    from gpuplane.plan.replacement import Effect, classify

    ref = need_reference()
    seen = set()
    for (group, kind), file in CRD_FILES.items():
        doc = _yaml_file(ref / "crds" / file)
        (version,) = [v for v in doc["spec"]["versions"] if v.get("storage")]
        for path, rule in transition_rules(version["schema"]["openAPIV3Schema"]):
            if (group, kind, path) in SPEC_LEVEL:
                seen.add((group, kind))
                continue
            field = re.fullmatch(r"self == oldSelf|self(\.\w+) == oldSelf\1", rule)
            assert field, (kind, path, rule)  # a new kind of transition rule: model it, or list it above
            assert (group, kind) in EMITTED, (kind, path)
            seen.add((group, kind))
            full = path + (field.group(1) or "")
            old, new = nested(full, "a"), nested(full, "b")
            findings = classify(EMITTED[group, kind], [full], old, new)
            assert findings and findings[full].effect is Effect.REFUSED, (kind, full)
    assert seen == set(EMITTED)
