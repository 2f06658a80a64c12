"""Day two: the read-back model (a second `up` is a no-op), routine changes on every shipped stack, and the
rules behind them (fixed physical names, update constraints), each shown to catch the defect it models."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from typing import Any

import pytest

from gpuplane.cli import main
from gpuplane.plan import Plan, PlannedResource, load, routine
from gpuplane.plan.deploy.readback import READ_BACK, second_up
from gpuplane.plan.diff import diff
from gpuplane.plan.routine import CATALOGUE, Outcome, RoutineChange, check_stack, markdown_table, outcome
from gpuplane.plan.routine.constraints import CONSTRAINTS

from .conftest import ROOT, STACKS, cached_plan, session_cache

P = "urn:pulumi:s::p::"


def resource(type_: str, inputs: dict[str, Any], **opts: Any) -> dict[str, Any]:
    return {"urn": f"{P}{type_}::r", "type": type_, "name": "r", "inputs": inputs, **opts}


def doc(*resources: dict[str, Any]) -> dict[str, Any]:
    return {"resources": list(resources)}


CHANGE = CATALOGUE[0]
NG = "eks:index:ManagedNodeGroup"


# --- Read-back: every rule fires on a resource that sets its field, and its fix silences it -----------------

EXAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("gcp:container/cluster:Cluster", "nodeConfig"): {
        "name": "c",
        "removeDefaultNodePool": True,
        "nodeConfig": {"serviceAccount": "n@p.iam.gserviceaccount.com"},
    },
    ("gcp:container/cluster:Cluster", "nodeVersion"): {"name": "c", "nodeVersion": "1.33.5-gke.1201000"},
    ("gcp:container/nodePool:NodePool", "nodeCount"): {"nodeCount": 1, "autoscaling": {"minNodeCount": 0}},
    ("gcp:container/nodePool:NodePool", "version"): {"version": "1.33.5-gke.1201000"},
    ("eks:index:ManagedNodeGroup", "scalingConfig.desiredSize"): {"scalingConfig": {"desiredSize": 0, "maxSize": 2}},
    ("aws:eks/nodeGroup:NodeGroup", "scalingConfig.desiredSize"): {"scalingConfig": {"desiredSize": 0, "maxSize": 2}},
}


AUTOSCALER = PlannedResource(
    f"{P}kubernetes:helm.sh/v3:Release::ca",
    "kubernetes:helm.sh/v3:Release",
    "ca",
    None,
    True,
    {"chart": "cluster-autoscaler"},
)


def planned(type_: str, inputs: dict[str, Any], ignore: tuple[str, ...] = ()) -> Plan:
    r = PlannedResource(f"{P}{type_}::r", type_, "r", None, True, inputs, ignore_changes=ignore)
    return Plan("p", "s", [r, AUTOSCALER])


def test_a_node_group_no_autoscaler_resizes_keeps_its_desired_size() -> None:
    group = {"scalingConfig": {"minSize": 0, "desiredSize": 0, "maxSize": 2}}
    alone = Plan("p", "s", [PlannedResource(f"{P}{NG}::r", NG, "r", None, True, group)])
    assert list(second_up(alone)) == []
    fixed = {"scalingConfig": {"minSize": 2, "desiredSize": 2, "maxSize": 2}}
    assert list(second_up(planned(NG, fixed))) == []  # nothing to resize within


def test_every_read_back_rule_has_an_example_and_a_source() -> None:
    rules = {(t, rule.path) for t, rs in READ_BACK.items() for rule in rs}
    assert rules == set(EXAMPLES)
    for rs in READ_BACK.values():
        for rule in rs:
            assert re.search(r"[\w-]+/[\w-]+ |API|#\d+", rule.source), rule.source
            assert rule.why and rule.fix


@pytest.mark.parametrize(("type_", "path"), sorted(EXAMPLES))
def test_a_read_back_rule_drifts_until_its_field_is_ignored(type_: str, path: str) -> None:
    drifts = list(second_up(planned(type_, EXAMPLES[(type_, path)])))
    assert [d.rule.path for d in drifts] == [path]
    assert list(second_up(planned(type_, EXAMPLES[(type_, path)], ignore=(path,)))) == []


def test_the_gke_default_pool_config_would_replace_the_cluster(plan_of: Any) -> None:
    """The defect the model was built for: without `ignoreChanges: [nodeConfig]` the second up replaces."""
    shipped = plan_of("gcp-standard")
    (cluster,) = shipped.by_type("gcp:container/cluster:Cluster")
    assert "nodeConfig" in cluster.ignore_changes
    bare = dataclasses.replace(
        shipped, resources=[dataclasses.replace(r, ignore_changes=()) if r is cluster else r for r in shipped.resources]
    )
    (drift,) = [d for d in second_up(bare) if d.urn == cluster.urn]
    assert drift.effect == "replaces" and "nodeConfig.serviceAccount" not in drift.paths  # same SA on all pools
    assert {"nodeConfig.machineType", "nodeConfig.labels"} <= set(drift.paths)


# --- Fixed physical names, delete-before-replace and update constraints -------------------------------------


def test_a_replaced_node_group_with_a_fixed_name_is_deleted_first() -> None:
    """A hand-set name makes the bridged provider delete the old group first (a capacity gap); a prefix lets
    the new group come up first."""
    old = resource(NG, {"nodeGroupName": "c-gpu", "instanceTypes": ["g6.xlarge"]})
    new = resource(NG, {"nodeGroupName": "c-gpu", "instanceTypes": ["g6.2xlarge"]})
    (change,) = diff(doc(old), doc(new)).changed
    assert change.replaces and "nodeGroupName is set by hand" in change.delete_first
    fixed = outcome(CHANGE, doc(old), doc(new))
    assert fixed.failures == [] and fixed.capacity_gaps
    prefixed = [
        resource(NG, {"nodeGroupNamePrefix": "c-gpu-", "instanceTypes": r["inputs"]["instanceTypes"]})
        for r in (old, new)
    ]
    created_first = outcome(CHANGE, doc(prefixed[0]), doc(prefixed[1]))
    assert created_first.replaced and created_first.capacity_gaps == [] and created_first.failures == []


def test_a_capacity_block_group_replaced_create_first_is_refused() -> None:
    def group(types: list[str], **name: str) -> dict[str, Any]:
        return resource(NG, {**name, "capacityType": "CAPACITY_BLOCK", "instanceTypes": types})

    prefixed = outcome(
        CHANGE,
        doc(group(["p5.48xlarge"], nodeGroupNamePrefix="c-t-")),
        doc(group(["p5e.48xlarge"], nodeGroupNamePrefix="c-t-")),
    )
    assert any("Capacity Block" in f for f in prefixed.failures)
    fixed = outcome(
        CHANGE, doc(group(["p5.48xlarge"], nodeGroupName="c-t")), doc(group(["p5e.48xlarge"], nodeGroupName="c-t"))
    )
    assert fixed.failures == [] and fixed.capacity_gaps


def test_a_replaced_gke_pool_is_deleted_first_a_capacity_gap_not_a_failure() -> None:
    pool = "gcp:container/nodePool:NodePool"
    old = resource(pool, {"name": "gpu", "nodeConfig": {"spot": False}})
    new = resource(pool, {"name": "gpu", "nodeConfig": {"spot": True}})
    for head in (new, {**new, "deleteBeforeReplace": True}):
        o = outcome(CHANGE, doc(old), doc(head))
        assert o.failures == [] and o.capacity_gaps and o.replaced


def test_scaling_past_the_stored_desired_size_is_refused() -> None:
    def group(low: int, desired: int, high: int, ignore: bool = True) -> dict[str, Any]:
        sc = {"minSize": low, "desiredSize": desired, "maxSize": high}
        return resource(NG, {"nodeGroupNamePrefix": "c-gpu-", "scalingConfig": sc, "ignoreScalingChanges": ignore})

    assert outcome(CHANGE, doc(group(0, 0, 4)), doc(group(1, 1, 4))).failures  # min above the stored desired
    assert outcome(CHANGE, doc(group(0, 0, 4)), doc(group(0, 0, 3))).failures  # max below it (scaled up to 4)
    assert outcome(CHANGE, doc(group(1, 1, 4)), doc(group(0, 0, 4))).failures == []
    assert outcome(CHANGE, doc(group(0, 0, 4)), doc(group(0, 0, 6))).failures == []
    assert outcome(CHANGE, doc(group(0, 0, 4, False)), doc(group(1, 1, 4, False))).failures == []


def test_a_capacity_block_group_that_rolls_with_nodes_up_is_refused() -> None:
    rule = next(c for c in CONSTRAINTS if c.id == "capacity-block-roll")
    cb = {"capacityType": "CAPACITY_BLOCK", "scalingConfig": {"desiredSize": 2}}
    assert rule.refuses(cb, cb, "rolls") and not rule.refuses(cb, cb, "in place")
    assert not rule.refuses(cb, {**cb, "scalingConfig": {"desiredSize": 0}}, "rolls")


def test_a_cluster_replacement_fails_the_change() -> None:
    gke = "gcp:container/cluster:Cluster"
    old, new = resource(gke, {"name": "c", "location": "us-central1"}), resource(gke, {"name": "c", "location": "eu"})
    assert any("cluster is replaced" in f for f in outcome(CHANGE, doc(old), doc(new)).failures)


# --- Every shipped stack ------------------------------------------------------------------------------------


@session_cache
def outcomes(stack: str) -> tuple[Outcome, ...]:
    return tuple(check_stack(load(stack, ROOT), planner=cached_plan))


@pytest.mark.parametrize("stack", STACKS)
def test_no_routine_change_replaces_a_cluster_or_fails(stack: str) -> None:
    results = outcomes(stack)
    assert [o.change for o in results] == [c.id for c in CATALOGUE]
    failing = {(stack, o.change): o.failures for o in results if o.failures}
    assert failing == {}, failing
    # Some change applies and does something visible on every stack (the catalogue's edits are not no-ops).
    assert any(o.in_place or o.rolls or o.replaced or o.added or o.removed for o in results), stack


@pytest.mark.parametrize("stack", STACKS)
def test_a_second_up_of_every_stack_is_a_no_op(stack: str) -> None:
    assert list(second_up(cached_plan(stack))) == []


def test_reordering_pools_only_updates_lists_in_place() -> None:
    """Names, subnets and node shapes are keyed by pool name, never by position."""
    for stack in STACKS:
        o = next(o for o in outcomes(stack) if o.change == "reorder-pools")
        assert not o.applies or (o.rolls, o.replaced, o.added, o.removed) == ([], [], [], []), stack


def test_upgrading_doc_table_is_generated_from_the_command() -> None:
    table = markdown_table({s: list(outcomes(s)) for s in STACKS})
    text = (ROOT / "docs" / "upgrading.md").read_text()
    start, end = "<!-- lifecycle:start -->\n", "\n<!-- lifecycle:end -->"
    assert start in text and end in text
    assert text.split(start, 1)[1].split(end, 1)[0] == table, "regenerate: python scripts/upgrading_table.py"


# --- The command, the plan JSON and the mocks behind them ---------------------------------------------------


def test_lifecycle_command_json_and_exit_codes(capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    assert main(["lifecycle", "gcp-standard", "--change", "raise-max-nodes", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["stack"] == "gcp-standard" and [c["change"] for c in got["changes"]] == ["raise-max-nodes"]
    assert got["changes"][0]["ok"] is True and got["changes"][0]["inPlace"]

    # A change that fails (here: renaming the cluster, which removes it and makes another) exits 1.
    def rename(c: dict[str, Any]) -> dict[str, Any]:
        return {**c, "gpuplane:cluster": {**c["gpuplane:cluster"], "name": "ml-renamed"}}

    monkeypatch.setattr(routine, "CATALOGUE", (*CATALOGUE, RoutineChange("rename", "rename the cluster", rename)))
    assert main(["lifecycle", "gcp-standard", "--change", "rename"]) == 1
    assert "a cluster is removed" in capsys.readouterr().out
    assert main(["lifecycle", "gcp-standard", "--change", "raise-mni-nodes"]) == 2
    err = capsys.readouterr().err
    assert "unknown routine change 'raise-mni-nodes' (did you mean 'raise-min-nodes'?)" in err


def test_plan_json_carries_resource_options(plan_of: Any) -> None:
    from gpuplane.plan.render import to_json

    resources = {r["name"]: r for r in json.loads(to_json(plan_of("gcp-standard")))["resources"]}
    assert resources["ml-gke-cluster"]["ignoreChanges"] == ["nodeConfig"]
    assert resources["ml-gke-training"]["deleteBeforeReplace"] is True
    assert "deleteBeforeReplace" not in resources["ml-gke-cluster"]
    assert all(isinstance(r.get("aliases", []), list) for r in resources.values())


def test_eks_node_groups_are_named_by_prefix_within_the_limit(plan_of: Any) -> None:
    from gpuplane.plan.stackfile import StackFile

    base = load("aws-managed", ROOT)
    long = copy.deepcopy(base.config)
    long["gpuplane:cluster"] = {**long["gpuplane:cluster"], "name": "research-gpu-platform-us-east-1-prod"}
    for plan in (plan_of("aws-managed"), plan_of(StackFile(base.project, "long", long))):
        groups = plan.by_type(NG)
        assert groups and all("nodeGroupName" not in g.inputs for g in groups)
        prefixes = [g.inputs["nodeGroupNamePrefix"] for g in groups]
        assert len(set(prefixes)) == len(prefixes) and all(len(p) + 26 <= 63 for p in prefixes)


def test_each_aws_resource_answers_in_its_own_providers_region(plan_of: Any) -> None:
    """A fleet registers a provider per region: a queue's ARN is in its own region, not the last one's."""
    plan = plan_of("aws-fleet")
    regions = {r.urn: r.inputs.get("region") for r in plan.resources if r.type == "pulumi:providers:aws"}
    targets = plan.by_type("aws:cloudwatch/eventTarget:EventTarget")
    assert targets
    for t in targets:
        provider_region = regions[t.provider.rsplit("::", 1)[0]] if t.provider else None
        assert provider_region and f"arn:aws:sqs:{provider_region}:" in t.inputs["arn"], t.urn


def test_scaling_a_ceiling_changes_something_on_every_stack_it_applies_to() -> None:
    """A fleet's ceilings are its totals (pool maxNodes are overridden per region): the edit follows them.
    Autopilot is the exception: it takes no autoscaling limits, so a class's ceiling lives only in the
    capacity summary and Kueue's quotas (docs/platforms.md)."""
    for stack in (s for s in STACKS if s != "gcp-autopilot"):
        for change in ("raise-max-nodes", "lower-max-nodes"):
            o = next(o for o in outcomes(stack) if o.change == change)
            assert not o.applies or o.in_place or o.rolls or o.replaced, (stack, change)


def test_plan_check_reruns_a_program_that_read_live_state_and_a_plain_plan_trusts_it(monkeypatch: Any) -> None:
    """`gpuplane plan --check` compares the second run's inputs; a plain plan (its time budget) trusts the reads."""
    from gpuplane.plan.deploy import readback

    seen: list[bool] = []
    real = readback.second_up

    def spy(plan: Any, again: Any = None) -> Any:
        seen.append(again is None)
        return real(plan, again)

    monkeypatch.setattr(readback, "second_up", spy)
    assert main(["plan", "aws-managed", "--check"]) == 0
    assert main(["plan", "aws-managed", "--format", "json"]) == 0
    assert seen == [True, False]


# --- Exact examples where the mutation benchmark found the rules unheld -------------------------------------


@pytest.mark.parametrize(
    ("management", "drifts"),
    [
        (None, True),  # GKE auto-upgrades a pool by default (node pool management.autoUpgrade defaults true)
        ({"autoUpgrade": True}, True),
        ({"autoUpgrade": False}, False),  # a pool pinned off auto-upgrade keeps the version it was sent
        ({"autoRepair": True}, True),
    ],
)
def test_a_gke_pools_version_drifts_only_while_gke_auto_upgrades_it(management: Any, drifts: bool) -> None:
    """terraform-provider-google flattenNodePool reads `version` from the API; GKE moves it only on pools with
    management.autoUpgrade (GKE docs, "Auto-upgrading nodes": on by default, off only outside release channels)."""
    pool = {"version": "1.33.5-gke.1201000", **({"management": management} if management is not None else {})}
    found = [d.rule.path for d in second_up(planned("gcp:container/nodePool:NodePool", pool))]
    assert found == (["version"] if drifts else [])


def test_the_lifecycle_text_says_what_each_change_does() -> None:
    """`gpuplane lifecycle` text, written out for hand-made outcomes."""
    refused = "2 problems in the stack config:\n  - gpuPools[0].minNodes: must be at most maxNodes\n  - other\n"
    results = [
        Outcome("raise-min-nodes", "raise", applies=False, refused_by_config=refused),
        Outcome("add-region", "add", applies=False),
        Outcome("add-pool", "add", in_place=["a"], added=["b", "c"]),
        Outcome(
            "remove-pool",
            "remove",
            rolls=["NodePool::x"],
            replaced=["NodePool::y"],
            removed=["z"],
            failures=["Cluster::c: the cluster is replaced"],
            capacity_gaps=["NodePool::y: deleted first"],
            workloads=["ClusterQueue::q: drain"],
        ),
    ]
    assert routine.to_text("s", results) == "\n".join(
        [
            "routine changes on s:",
            "  raise-min-nodes: does not apply (the config refuses it: gpuPools[0].minNodes: must be at most maxNodes)",
            "  add-region: does not apply",
            "  add-pool: OK: 1 updated in place, 0 roll nodes, 0 replaced, 2 added, 0 removed",
            "  remove-pool: FAILS: 0 updated in place, 1 roll nodes, 1 replaced, 0 added, 1 removed",
            "    rolls nodes: NodePool::x",
            "    replaced: NodePool::y",
            "    capacity gap: NodePool::y: deleted first",
            "    admitted workloads: ClusterQueue::q: drain",
            "    FAILS: Cluster::c: the cluster is replaced",
        ]
    )
    # A one-line refusal is shown as it is.
    assert routine.to_text("s", [Outcome("x", "x", applies=False, refused_by_config="bad")]).endswith(
        "x: does not apply (the config refuses it: bad)"
    )


def test_the_lifecycle_json_of_a_change_that_does_not_apply() -> None:
    assert Outcome("x", "y", applies=False).to_json() == {"change": "x", "what": "y", "applies": False}
    assert Outcome("x", "y", applies=False, refused_by_config="no").to_json() == {
        "change": "x",
        "what": "y",
        "applies": False,
        "refusedByConfig": "no",
    }
    assert Outcome("x", "y", workloads=["q"]).to_json()["workloads"] == ["q"]


def test_a_routine_change_is_planned_against_what_the_last_up_left() -> None:
    """plan_against plans with the cloud the last `up` left: an EKS node group that cluster-autoscaler grew is
    sent its live desired size (aws.live_size reads it with eks.getNodeGroup), where a first `up` sends 0."""
    from gpuplane.plan.cloud import Cloud
    from gpuplane.plan.deploy.readback import cloud_after
    from gpuplane.plan.routine import plan_against

    stack = load("aws-managed", ROOT)
    first = plan_against(stack)
    ((cluster, groups),) = cloud_after(first).node_groups.items()
    name = next(n for n in groups if "inference" in n)
    grown = {**groups[name], "scalingConfig": {**groups[name]["scalingConfig"], "desiredSize": 3}}
    later = plan_against(stack, Cloud(node_groups={cluster: {**groups, name: grown}}))

    def desired(plan: Plan) -> int:
        (group,) = [r for r in plan.by_type(NG) if r.inputs["nodeGroupNamePrefix"].endswith("-inference-")]
        return int(group.inputs["scalingConfig"]["desiredSize"])

    assert (desired(first), desired(later)) == (0, 3)


def test_the_upgrading_table_cells_for_failures_gaps_and_queues() -> None:
    """docs/upgrading.md's words for what no shipped stack's routine change does today."""
    assert routine.cell(Outcome("x", "x", failures=["c: replaced"], capacity_gaps=["p"])) == "**fails**"
    gap = Outcome("x", "x", replaced=["gcp:container/nodePool:NodePool::p"], capacity_gaps=["p: first"])
    assert routine.cell(gap) == "pool deleted first"
    assert routine.cell(Outcome("x", "x", in_place=["q"], workloads=["q: drain"])) == "drain the queues"
    doc = Outcome("x", "x", capacity_gaps=["p"]).to_json()
    assert doc["capacityGaps"] == ["p"] and "capacity_gaps" not in doc


def test_a_refusal_is_shown_by_its_first_problem_as_written() -> None:
    refused = "1 problem in the stack config:\n  - gpuPools[0].name: lowercase letters, not X\n"
    text = routine.to_text("s", [Outcome("x", "x", applies=False, refused_by_config=refused)])
    assert text.endswith("x: does not apply (the config refuses it: gpuPools[0].name: lowercase letters, not X)")
