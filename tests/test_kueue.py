"""Kueue queues (`gpuplane:queues`): objects valid against the v0.19.2 CRDs with CEL, flavors that admit
exactly what `placement()` builds for their pool, quotas within the pools' ceilings, the chart on the
system nodes, gang admission, DWS and topology."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.config import parse_flat
from gpuplane.kueue import render as r
from gpuplane.plan import Plan, StackFile, deploy

from .conftest import load_stack_config, need_reference, stack_with
from .graph import RELEASE, kube_objects

GCP_POOLS = [
    *load_stack_config("gcp-standard")["gpuplane:gpuPools"],
    {"name": "a3", "gpu": "h100", "gpusPerNode": 8, "maxNodes": 4, "diskSizeGb": 500, "capacity": ["queued"]},
]
GCP_QUEUES: dict[str, Any] = {
    "cohort": "ml",
    "teams": [
        {"name": "research", "quota": {"training": 8, "a3": 16, "inference": 16}},
        {"name": "prod", "namespace": "serving", "quota": {"inference": 16, "a3": 16}},
    ],
}
AWS_QUEUES: dict[str, Any] = {
    "podsReadyTimeout": "5m",
    "teams": [
        {"name": "research", "quota": {"training": 8, "notebooks": 28}},
        {"name": "prod", "quota": {"inference": 16, "training": 8, "notebooks": 28}},
    ],
}


def gcp_queued() -> StackFile:
    return stack_with("gcp-standard", gpuPools=GCP_POOLS, queues=GCP_QUEUES)


def aws_queued() -> StackFile:
    return stack_with("aws-karpenter", queues=AWS_QUEUES)


STACKS: dict[str, Callable[[], StackFile]] = {"gcp": gcp_queued, "aws": aws_queued}


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    from gpuplane.plan import plan_stack

    return {k: plan_stack(f()) for k, f in STACKS.items()}


def kueue_objects(plan: Plan, kind: str | None = None) -> list[dict[str, Any]]:
    return [
        o.inputs
        for o in kube_objects(plan)
        if o.inputs["apiVersion"].startswith("kueue.x-k8s.io/") and kind in (None, o.inputs["kind"])
    ]


def by_name(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    """The plan's objects of `kind` by name; ResourceFlavors by their pool (label `gpuplane.io/pool`), since a
    flavor on a topology is named after its pool and a digest of its immutable fields."""
    if kind == "ResourceFlavor":
        return {o["metadata"]["labels"]["gpuplane.io/pool"]: o for o in kueue_objects(plan, kind)}
    return {o["metadata"]["name"]: o for o in kueue_objects(plan, kind)}


def pool_of(plan: Plan) -> dict[str, str]:
    """Flavor name -> its pool."""
    return {o["metadata"]["name"]: pool for pool, o in by_name(plan, "ResourceFlavor").items()}


# --- Kueue's admission rules, as Kueue v0.19.2 applies them ---------------------------------------------


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, str]) -> bool:
    """k8s.io/api core/v1 toleration.go `ToleratesTaint` (what corev1helpers.FindMatchingUntoleratedTaint uses)."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("key") and t["key"] != taint["key"]:
            continue
        if t.get("operator") == "Exists" or str(t.get("value", "")) == str(taint.get("value", "")):
            return True
    return False


def admits(flavor: dict[str, Any], pod: dict[str, Any]) -> bool:
    """Kueue's flavor check for one pod set (flavorassigner.go `checkFlavorForPodSets`): every NoSchedule or
    NoExecute `nodeTaints` entry tolerated, and the pod's nodeSelector and required node affinity, cut to
    the flavor's label keys, matched by a node carrying exactly the flavor's `nodeLabels`."""
    spec = flavor["spec"]
    labels = spec.get("nodeLabels", {})
    tolerations = pod.get("tolerations", []) + spec.get("tolerations", [])
    if any(not tolerates(tolerations, t) for t in spec.get("nodeTaints", []) if t["effect"] != "PreferNoSchedule"):
        return False
    if any(k in labels and labels[k] != v for k, v in (pod.get("nodeSelector") or {}).items()):
        return False
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]

    def term_ok(term: dict[str, Any]) -> bool:
        for e in term["matchExpressions"]:
            if e["key"] not in labels:
                continue
            value = labels[e["key"]]
            if e["operator"] == "In" and value not in e["values"]:
                return False
            if e["operator"] == "NotIn" and value in e["values"]:
                return False
        return True

    return any(term_ok(t) for t in terms)


# --- Tests -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", ["gcp", "aws"])
def test_every_kueue_object_validates_against_its_crd_with_cel(cloud: str, plans: dict[str, Plan]) -> None:
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    objs = kueue_objects(plans[cloud])
    kinds = {o["kind"] for o in objs}
    assert {"ResourceFlavor", "ClusterQueue", "LocalQueue"} <= kinds
    if cloud == "gcp":
        assert {"AdmissionCheck", "ProvisioningRequestConfig", "Topology"} <= kinds
    evaluated = 0
    for obj in objs:
        schema = crd_schema(ref, obj["apiVersion"], obj["kind"])
        assert not schema_errors(obj, schema), (obj["metadata"]["name"], schema_errors(obj, schema))
        failures, n = cel_results(obj, schema)
        assert not failures, (obj["kind"], obj["metadata"]["name"], failures)
        evaluated += n
    assert evaluated >= 10, "CEL rules of flavors, queues and the topology were evaluated"


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        (
            "ClusterQueue",
            lambda s: s["resourceGroups"][0]["flavors"][0]["resources"].append({"name": "cpu", "nominalQuota": 1}),
            "same number of resources",
        ),
        (
            "ClusterQueue",
            lambda s: (
                s.pop("cohortName"),
                s["resourceGroups"][0]["flavors"][0]["resources"][0].update({"borrowingLimit": 1}),
            ),
            "borrowingLimit must be nil when cohort is empty",
        ),
        ("ResourceFlavor", lambda s: s["nodeTaints"].append({"key": "x", "effect": "Sometimes"}), "supported taint"),
        ("Topology", lambda s: s["levels"].reverse(), "kubernetes.io/hostname label can only be used at the lowest"),
    ],
)
def test_cel_rules_catch_a_broken_object(kind: str, change: Callable[[dict[str, Any]], Any], message: str) -> None:
    """The CEL check is real: breaking a rendered object the way each rule forbids is caught."""
    import copy

    from gpuplane.kueue.component import objects
    from gpuplane.kueue.stack import kueue_args

    from .crds import cel_results, crd_schema

    ref = need_reference()
    obj = copy.deepcopy(
        next(o for o in objects(kueue_args(parse_flat(gcp_queued().flat_config()))) if o["kind"] == kind)
    )
    change(obj["spec"])
    failures, _ = cel_results(obj, crd_schema(ref, obj["apiVersion"], obj["kind"]))
    assert any(message in f for f in failures), failures


@pytest.mark.parametrize("cloud", ["gcp", "aws"])
def test_placement_for_a_pool_is_admitted_by_that_pools_flavor_only(cloud: str, plans: dict[str, Plan]) -> None:
    """For every pool and team: the fragment `gpuplane placement STACK POOL --queue TEAM` prints passes
    Kueue's flavor check for the pool's own flavor (labels and tolerations match), and no other pool's
    flavor (a job never lands on a pool its placement did not ask for)."""
    from gpuplane.kueue.placement import queued_placement

    cfg = parse_flat(STACKS[cloud]().flat_config())
    flavors = by_name(plans[cloud], "ResourceFlavor")
    assert set(flavors) == {p.name for p in cfg.gpuPools}, "one flavor per pool"
    assert cfg.queues is not None
    for team in cfg.queues.teams:
        for pool in cfg.gpuPools:
            if pool.name not in team.quota and cfg.queues.cohort is None:
                continue
            fragment = queued_placement(cfg, pool.name, 1, team.name)
            assert fragment["metadata"]["labels"] == {r.QUEUE_LABEL: team.name}
            for name, flavor in flavors.items():
                assert admits(flavor, fragment) == (name == pool.name), (team.name, pool.name, name)


def test_queued_pool_flavor_and_placement_carry_the_queued_taint(plans: dict[str, Plan]) -> None:
    flavor = by_name(plans["gcp"], "ResourceFlavor")["a3"]
    assert r.QUEUED_TAINT["key"] in [t["key"] for t in flavor["spec"]["nodeTaints"]]
    from gpuplane.scheduling.placement import placement

    plain = placement(parse_flat(gcp_queued().flat_config()), "a3")
    # The queued taint is among the pool's own taints, so even the plain fragment tolerates it ...
    assert r.QUEUED_TAINT["key"] in [t["key"] for t in plain["tolerations"]]
    assert admits(flavor, plain)
    # ... and without that toleration Kueue would not pick the DWS flavor.
    bare = {**plain, "tolerations": [t for t in plain["tolerations"] if t["key"] != r.QUEUED_TAINT["key"]]}
    assert not admits(flavor, bare)


@pytest.mark.parametrize("cloud", ["gcp", "aws"])
def test_quotas_sum_to_at_most_the_capacity_summarys_ceilings(cloud: str, plans: dict[str, Plan]) -> None:
    """Per pool, the teams' nominal quotas in the ClusterQueues sum to at most `slots_at_max` of the
    capacity summary (the stack's `capacity` output)."""
    summary = plans[cloud].outputs["capacity"]
    ceilings = {row["pool"]: row["slotsAtMax"] for row in summary["rows"]}
    totals: dict[str, float] = {}
    for cq in kueue_objects(plans[cloud], "ClusterQueue"):
        for group in cq["spec"]["resourceGroups"]:
            for f in group["flavors"]:
                pool = pool_of(plans[cloud])[f["name"]]
                totals[pool] = totals.get(pool, 0) + sum(float(x["nominalQuota"]) for x in f["resources"])
    assert totals and all(totals[p] <= ceilings[p] for p in totals), (totals, ceilings)
    assert {(q["pool"], q["team"]) for q in summary["queues"]} == {
        (p, t["name"]) for t in (GCP_QUEUES if cloud == "gcp" else AWS_QUEUES)["teams"] for p in t["quota"]
    }


def over_quota() -> dict[str, Any]:
    teams = [{"name": "a", "quota": {"training": 16}}, {"name": "b", "quota": {"training": 8, "inference": 4}}]
    return {"teams": teams}


def test_overcommitting_quotas_are_refused_unless_explicit() -> None:
    from gpuplane.config import ConfigError

    with pytest.raises(ConfigError) as info:
        parse_flat(stack_with("gcp-standard", queues=over_quota()).flat_config())
    ((key, message),) = info.value.problems
    assert key == "gpuplane:queues" and "training: 24 > 16 nvidia.com/gpu" in message and "overcommit" in message
    cfg = parse_flat(stack_with("gcp-standard", queues={**over_quota(), "overcommit": True}).flat_config())
    assert cfg.queues is not None and cfg.queues.overcommit


def test_kueue_runs_on_the_system_nodes_and_the_simulator_passes(plans: dict[str, Plan]) -> None:
    for cloud, plan in plans.items():
        cfg = parse_flat(STACKS[cloud]().flat_config())
        (release,) = [x for x in plan.by_type(RELEASE) if x.inputs["name"] == "kueue"]
        values = release.inputs["values"]["controllerManager"]
        assert values["nodeSelector"] == dict(cfg.platform_spec.system_pods.node_selector)
        assert not deploy.check(plan, deploy.stated_crds(cfg)), cloud
        for obj in kube_objects(plan):
            if obj.inputs["apiVersion"].startswith("kueue.x-k8s.io/"):
                assert release.urn in obj.dependencies, obj.urn


def test_the_simulator_refuses_kueue_objects_without_their_crds(plans: dict[str, Plan]) -> None:
    """Without the kueue chart's CRD row the simulator reports the queues: the row is what lets them pass."""
    from gpuplane.plan.deploy import rules

    saved = rules.CHART_CRDS
    rules.CHART_CRDS = {k: v for k, v in saved.items() if k != "kueue"}  # type: ignore[misc]
    try:
        found = deploy.check(plans["aws"], deploy.stated_crds(parse_flat(aws_queued().flat_config())))
    finally:
        rules.CHART_CRDS = saved  # type: ignore[misc]
    assert any("kueue.x-k8s.io" in str(v) for v in found)


def test_gang_admission_and_gpu_only_quota_in_the_kueue_configuration(plans: dict[str, Plan]) -> None:
    (release,) = [x for x in plans["aws"].by_type(RELEASE) if x.inputs["name"] == "kueue"]
    config = yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"] == {"timeout": "5m", "blockAdmission": False}
    assert config["resources"] == {"quotaCheckStrategy": "IgnoreUndeclared"}
    assert "pod" in config["integrations"]["frameworks"], "plain pod groups are managed"


def test_chart_values_exist_in_the_pinned_chart_and_keep_its_config() -> None:
    """Every values key set exists in kueue 0.19.2's values.yaml, and the config restates the chart's own
    default configuration (plus only gang admission and the quota strategy)."""
    ref = need_reference()
    chart = yaml.safe_load((ref / "charts" / "kueue" / "values.yaml").read_text())
    values = r.chart_values("10m", {"gpuplane.io/role": "system"}, [{"key": "k", "operator": "Exists"}])

    def missing(ours: dict[str, Any], theirs: Any, prefix: str = "") -> list[str]:
        """Keys of `ours` absent from the chart; a chart map that is empty by default (a nodeSelector)
        takes any keys."""
        out = []
        for k, v in ours.items():
            p = f"{prefix}.{k}" if prefix else k
            if not isinstance(theirs, dict) or k not in theirs:
                out.append(p)
            elif isinstance(v, dict) and theirs[k]:
                out += missing(v, theirs[k], p)
        return out

    assert not missing(values, chart)
    default = yaml.safe_load(chart["managerConfig"]["controllerManagerConfigYaml"])
    ours = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert {k: v for k, v in ours.items() if k not in ("waitForPodsReady", "resources")} == default


def test_pin_matches_the_chart() -> None:
    from gpuplane.pins import CHARTS

    ref = need_reference()
    meta = yaml.safe_load((ref / "charts" / "kueue" / "Chart.yaml").read_text())
    assert (CHARTS["kueue"].version, CHARTS["kueue"].app_version) == (str(meta["version"]), meta["appVersion"])
    assert r.IMAGE["tag"] == meta["appVersion"]


def test_dws_admission_check_applies_to_the_queued_pool_only(plans: dict[str, Plan]) -> None:
    plan = plans["gcp"]
    (prc,) = kueue_objects(plan, "ProvisioningRequestConfig")
    assert prc["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
    }
    (check,) = kueue_objects(plan, "AdmissionCheck")
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    for cq in kueue_objects(plan, "ClusterQueue"):
        strategy = cq["spec"]["admissionChecksStrategy"]["admissionChecks"]
        assert strategy == [
            {"name": r.DWS_CHECK, "onFlavors": [by_name(plan, "ResourceFlavor")["a3"]["metadata"]["name"]]}
        ]
    assert not kueue_objects(plans["aws"], "AdmissionCheck")


def test_topology_only_on_pools_whose_machines_carry_the_labels(plans: dict[str, Plan]) -> None:
    """a3-highgpu-8g carries GKE's topology labels and the pool is queued (Kueue counts nodes only after
    provisioning); the L4 and A100 pools get no topology. The Karpenter stack's classes scale from zero
    without a ProvisioningRequest, so none of them does."""
    from gpuplane.catalog.topology import TOPOLOGY

    flavors = by_name(plans["gcp"], "ResourceFlavor")
    assert {n for n, f in flavors.items() if "topologyName" in f["spec"]} == {"a3"}
    # Named after the pool and a digest of its fields Kueue makes immutable on a topology; the others by the pool.
    assert re.fullmatch(r"a3-[0-9a-f]{8}", flavors["a3"]["metadata"]["name"])
    assert all(f["metadata"]["name"] == n for n, f in flavors.items() if n != "a3")
    (topo,) = kueue_objects(plans["gcp"], "Topology")
    assert [lv["nodeLabel"] for lv in topo["spec"]["levels"]] == list(TOPOLOGY["gcp"].levels)
    assert not kueue_objects(plans["aws"], "Topology")
    assert TOPOLOGY["aws"].levels[:3] == tuple(f"topology.k8s.aws/network-node-layer-{i}" for i in (1, 2, 3))


def test_cohort_lists_every_pool_so_teams_can_borrow(plans: dict[str, Plan]) -> None:
    cqs = by_name(plans["gcp"], "ClusterQueue")
    prod = cqs["prod"]["spec"]
    assert prod["cohortName"] == "ml"
    quotas = {
        pool_of(plans["gcp"])[f["name"]]: f["resources"][0]["nominalQuota"]
        for g in prod["resourceGroups"]
        for f in g["flavors"]
    }
    assert quotas == {"inference": 16, "training": 0, "a3": 16}
    assert prod["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "serving"}}
    (lq,) = [o for o in kueue_objects(plans["gcp"], "LocalQueue") if o["metadata"]["name"] == "prod"]
    assert lq["metadata"]["namespace"] == "serving" and lq["spec"] == {"clusterQueue": "prod"}


def test_mig_pool_quota_is_in_slices(plans: dict[str, Plan]) -> None:
    cq = by_name(plans["aws"], "ClusterQueue")["research"]["spec"]
    covered = {g["coveredResources"][0]: [f["name"] for f in g["flavors"]] for g in cq["resourceGroups"]}
    assert covered == {"nvidia.com/gpu": ["training"], "nvidia.com/mig-1g.5gb": ["notebooks"]}


def write_stack(sf: StackFile, tmp_path: Path) -> str:
    path = tmp_path / f"Pulumi.{sf.stack}.yaml"
    path.write_text(yaml.safe_dump({"config": dict(sf.config)}))
    return str(path)


def test_cli_placement_with_queue_and_pod_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplane.cli import main

    stack = write_stack(gcp_queued(), tmp_path)
    assert (
        main(["placement", stack, "a3", "--gpus", "8", "--queue", "prod", "--pod-group", "llm", "--group-size", "4"])
        == 0
    )
    out = yaml.safe_load(capsys.readouterr().out)
    assert out["metadata"] == {
        "namespace": "serving",
        "labels": {r.QUEUE_LABEL: "prod", r.POD_GROUP_LABEL: "llm"},
        "annotations": {r.POD_GROUP_COUNT: "4"},
    }
    assert out["resources"] == {"limits": {"nvidia.com/gpu": 8}}
    assert main(["placement", stack, "a3", "--queue", "nobody"]) == 2
    assert "no team 'nobody' (teams: research, prod)" in capsys.readouterr().err


def test_cli_capacity_shows_each_teams_quota_against_the_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplane.cli import main

    assert main(["capacity", write_stack(aws_queued(), tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = [ln.split() for ln in out.splitlines()]
    assert ["notebooks", "research", "28", "56", "nvidia.com/mig-1g.5gb"] in lines
    assert ["training", "prod", "8", "16", "nvidia.com/gpu"] in lines


def test_fixed_pool_that_keeps_its_nodes_gets_the_eks_topology() -> None:
    """On managed node groups a p4d pool with minNodes = maxNodes keeps its nodes, which carry EKS's
    network-node-layer labels: its flavor references the Topology; the same pool scaling from zero, or
    with `topology: false`, does not."""
    from gpuplane.kueue.component import objects
    from gpuplane.kueue.stack import kueue_args

    def flavors(min_nodes: int, topology: bool = True) -> dict[str, Any]:
        pools = load_stack_config("aws-managed")["gpuplane:gpuPools"]
        pools = [p | {"minNodes": min_nodes} if p["name"] == "training" else p for p in pools]
        queues = {"topology": topology, "teams": [{"name": "a", "quota": {"training": 16}}]}
        cfg = parse_flat(stack_with("aws-managed", gpuPools=pools, queues=queues).flat_config())
        objs = objects(kueue_args(cfg))
        return {
            o["metadata"]["labels"].get("gpuplane.io/pool", o["metadata"]["name"]): o
            for o in objs
            if o["kind"] in ("ResourceFlavor", "Topology")
        }

    static = flavors(2)
    assert static["training"]["spec"]["topologyName"] == "aws-network" and "aws-network" in static
    assert "topologyName" not in static["inference"]["spec"]
    assert "aws-network" not in flavors(0) and "topologyName" not in flavors(0)["training"]["spec"]
    assert "aws-network" not in flavors(2, topology=False)


def test_queued_run_time_reaches_the_provisioning_requests(plan_of: Any) -> None:
    """The node pool's max_run_duration does not reach a ProvisioningRequest: Kueue copies the config's
    parameters into each request, and GKE reads `maxRunDurationSeconds` there."""
    plan = plan_of("gcp-dws")
    (config,) = [r for r in plan.resources if r.inputs.get("kind") == "ProvisioningRequestConfig"]
    (queued,) = [p for p in load_stack_config("gcp-dws")["gpuplane:gpuPools"] if p.get("capacity") == ["queued"]]
    hours = int(queued["maxRunDuration"].removesuffix("h"))
    assert config.inputs["spec"]["parameters"] == {"maxRunDurationSeconds": str(hours * 3600)}


# --- a team's ClusterQueue on exact examples (Kueue's ClusterQueue API, concepts/cluster_queue) ------------

TEAM_NODES: list[Any] = [
    {"pool": "a", "resource": "nvidia.com/gpu"},
    {"pool": "b", "resource": "nvidia.com/gpu"},
    {"pool": "m", "resource": "nvidia.com/mig-1g.10gb"},
]


def test_a_team_queue_lists_its_pools_by_resource_and_borrows_only_in_a_cohort() -> None:
    from gpuplane.kueue.render import cluster_queue

    team: Any = {"name": "ml", "namespace": "ml-jobs", "quota": {"a": 4, "m": 7}}
    alone = cluster_queue(team, TEAM_NODES)
    assert alone["metadata"]["name"] == "ml" and alone["kind"] == "ClusterQueue"
    assert alone["spec"] == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ml-jobs"}},
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [{"name": "a", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}],
            },
            {
                "coveredResources": ["nvidia.com/mig-1g.10gb"],
                "flavors": [{"name": "m", "resources": [{"name": "nvidia.com/mig-1g.10gb", "nominalQuota": 7}]}],
            },
        ],
    }
    shared = cluster_queue({"name": "cv", "quota": {"b": 2}}, TEAM_NODES, cohort="gpus", queued_pools=["b", "z"])
    assert shared["spec"] == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "cv"}},
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {"name": "a", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 0}]},
                    {"name": "b", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 2}]},
                ],
            },
            {
                "coveredResources": ["nvidia.com/mig-1g.10gb"],
                "flavors": [{"name": "m", "resources": [{"name": "nvidia.com/mig-1g.10gb", "nominalQuota": 0}]}],
            },
        ],
        "cohortName": "gpus",
        "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        "admissionChecksStrategy": {"admissionChecks": [{"name": "gpuplane-dws", "onFlavors": ["b"]}]},
    }


def test_overcommitted_pools_are_those_whose_quotas_exceed_the_ceiling() -> None:
    from gpuplane.kueue.render import overcommitted

    teams: Any = [{"name": "x", "quota": {"a": 4, "b": 1}}, {"name": "y", "quota": {"a": 5}}]
    assert overcommitted(teams, {"a": 8, "b": 1, "c": 0}) == {"a": (9, 8)}
    assert overcommitted(teams, {"a": 9}) == {}


def test_the_objects_kueue_links_by_name_refer_to_each_other() -> None:
    """Kueue resolves these references by name: a LocalQueue's clusterQueue, an AdmissionCheck's parameters
    (apiGroup/kind/name of its ProvisioningRequestConfig). Each must name an object gpuplane creates."""
    from gpuplane.kueue.render import cluster_queue, local_queue, provisioning_objects

    team: Any = {"name": "ml", "namespace": "ml-jobs", "quota": {"a": 4}}
    lq, cq = local_queue(team), cluster_queue(team, TEAM_NODES)
    assert lq["metadata"]["namespace"] == "ml-jobs" and lq["spec"]["clusterQueue"] == cq["metadata"]["name"]
    config, check = provisioning_objects(["nvidia.com/gpu"])
    ref = check["spec"]["parameters"]
    assert (ref["apiGroup"], ref["kind"], ref["name"]) == (
        config["apiVersion"].split("/")[0],
        config["kind"],
        config["metadata"]["name"],
    )
    shared = cluster_queue(team, TEAM_NODES, cohort="c", queued_pools=["a"])
    assert shared["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["name"] == check["metadata"]["name"]
    for obj in (lq, cq, config, check):
        assert obj["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpuplane"}, obj["kind"]


def test_a_queued_pool_gets_gkes_queued_taint_once() -> None:
    """GKE taints queued-provisioning nodes `cloud.google.com/gke-queued=true:NoSchedule` (GKE docs, DWS)."""
    from gpuplane.kueue.render import queued, resource_flavor

    nodes: Any = {"pool": "q", "resource": "nvidia.com/gpu", "labels": {}, "taints": []}
    once = queued(nodes)
    assert [(t["key"], t["value"]) for t in once["taints"]] == [("cloud.google.com/gke-queued", "true")]
    assert queued(once)["taints"] == once["taints"] and nodes["taints"] == []
    flavor = resource_flavor(once)
    assert flavor["spec"]["nodeTaints"] == [
        {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"}
    ]


def test_a_users_taints_reach_the_flavor_with_taintargs_defaults_spelled_out() -> None:
    """TaintArgs: value "" and effect NoSchedule when unset (args/inputs.py); Kueue's nodeTaints are corev1.Taint,
    whose effect is the Kubernetes spelling. The pod `placement()` builds for these nodes tolerates every one."""
    from gpuplane.args.inputs import GpuNodes, TaintArgs, TaintEffect

    nodes = GpuNodes(
        pool="p",
        labels={"gpuplane.io/pool": "p"},
        taints=[TaintArgs(key="team"), TaintArgs(key="x", value="v", effect=TaintEffect.NO_EXECUTE)],
    )
    flavor = r.resource_flavor(nodes)
    assert flavor["spec"]["nodeTaints"] == [
        {"key": "team", "value": "", "effect": "NoSchedule"},
        {"key": "x", "value": "v", "effect": "NoExecute"},
    ]
    assert all(type(t["effect"]) is str for t in flavor["spec"]["nodeTaints"])
    assert r.selecting_labels(nodes) == {"gpuplane.io/pool": "p"}


def test_only_single_valued_in_expressions_select_a_flavor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flavor's nodeLabels are exact labels: an `In` with two values or a `NotIn` selects no single value."""
    monkeypatch.setattr(
        r,
        "affinity_of",
        lambda nodes: [
            {"key": "a", "operator": "In", "values": ["1"]},
            {"key": "b", "operator": "In", "values": ["1", "2"]},
            {"key": "c", "operator": "NotIn", "values": ["1"]},
            {"key": "d", "operator": "Exists"},
        ],
    )
    assert r.selecting_labels({"pool": "p", "labels": {}, "taints": []}) == {"a": "1"}  # type: ignore[typeddict-item]


def test_the_controller_tolerates_the_system_nodes_taints() -> None:
    taints = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
    values = r.chart_values("7m", {"role": "system"}, taints)
    assert values["controllerManager"]["tolerations"] == taints
    assert values["controllerManager"]["nodeSelector"] == {"role": "system"}
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"]["timeout"] == "7m"
    assert "tolerations" not in r.chart_values("7m", {"role": "system"})["controllerManager"]


def test_a_topology_flavors_name_follows_exactly_the_fields_kueue_freezes() -> None:
    """The name of a flavor on a topology changes with its nodeLabels or topologyName (frozen by Kueue once
    topologyName is set), not with the order the labels come in nor with nodeTaints (which Kueue lets change)."""
    from gpuplane.kueue.render import resource_flavor

    def nodes(*pairs: tuple[str, str], taints: list[Any] | None = None) -> Any:
        affinity = [{"key": k, "operator": "In", "values": [v]} for k, v in pairs]
        return {
            "pool": "train",
            "resource": "nvidia.com/gpu",
            "labels": {},
            "affinity": affinity,
            "taints": taints or [],
        }

    labels = (("karpenter.sh/nodepool", "train"), ("karpenter.k8s.aws/instance-gpu-name", "h100"))
    name = resource_flavor(nodes(*labels), "aws-network")["metadata"]["name"]
    assert re.fullmatch(r"train-[0-9a-f]{8}", name)
    assert resource_flavor(nodes(*reversed(labels)), "aws-network")["metadata"]["name"] == name
    taint = {"key": "team", "value": "ml", "effect": "NoSchedule"}
    assert resource_flavor(nodes(*labels, taints=[taint]), "aws-network")["metadata"]["name"] == name
    others = {
        resource_flavor(nodes(labels[0], ("karpenter.k8s.aws/instance-gpu-name", "h200")), "aws-network")["metadata"][
            "name"
        ],
        resource_flavor(nodes(*labels), "other-topology")["metadata"]["name"],
        resource_flavor(nodes(*labels))["metadata"]["name"],
    }
    assert name not in others and len(others) == 3 and "train" in others
