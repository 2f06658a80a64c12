"""`gpuplane:fleet.multikueue`: a fleet run as a stack per region, one region's cluster the MultiKueue manager and
the others its workers. Expected values are worked out by hand from the shipped fleets' configs and Kueue's docs
(kubernetes-sigs/kueue v0.19.2 site/content/en/docs/concepts/multikueue.md, tasks/manage/setup_multikueue.md,
site/static/examples/multikueue/create-multikueue-kubeconfig.sh), not from gpuplane's functions."""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuplane.config import ConfigError
from gpuplane.fleet.stacks import REFERENCES_KEY, FleetStack, expand
from gpuplane.k8s.kubeconfig import eks_document, gke_document
from gpuplane.kueue import multikueue as mk
from gpuplane.kueue.multikueue_worker import worker_kubeconfig
from gpuplane.plan import Plan, load, plan_stack
from gpuplane.plan.deploy import check, stated_crds
from gpuplane.plan.stackfile import StackFile
from gpuplane.stack.parts import references_for_central

from .conftest import ROOT, cached_plan, need_reference, schema_version, session_cache
from .graph import kube_objects
from .test_kubernetes_objects import BUILTIN_GROUPS

NAMESPACES = ["ml", "research"]
MANAGER = {"gcp-fleet": "us-central1", "aws-fleet": "us-east-1"}
"""The first region of each shipped fleet (stacks/Pulumi.*-fleet.yaml): the default manager."""
WORKER_GPUS = {"gcp-fleet": 40, "aws-fleet": None}
"""gcp-fleet, by hand: 48 L4 (quota l4: 16, 16, 24) fill us-central1 16, us-east4 16, europe-west4 16; 24 A100
(quota 16 in us-central1, 8 in europe-west4) fill us-central1 16, europe-west4 8. Without the manager us-central1,
the workers hold 16 + 16 + 8 = 40 `nvidia.com/gpu`."""


EGRESS = ["34.1.2.3/32", "34.1.2.4/32"]
"""The manager cluster's NAT addresses, as the user lists them (`fleet.multikueue.managerEgress`)."""


def with_multikueue(fleet: str, **settings: Any) -> StackFile:
    sf = load(fleet, ROOT)
    config = copy.deepcopy(sf.config)
    config["gpuplane:fleet"]["multikueue"] = {"namespaces": NAMESPACES, "managerEgress": EGRESS, **settings}
    return dataclasses.replace(sf, config=config)


@session_cache
def part_plans(fleet: str) -> dict[str, Plan]:
    """Region -> its stack's plan, and `central` -> the central stack's, planned with the regions' outputs as its
    stack references (as `gpuplane fleet plan` does)."""
    sf = with_multikueue(fleet)
    parts = expand(sf)
    plans = {p.region or "central": cached_plan(p.stack_file(sf.project)) for p in parts[:-1]}
    central = parts[-1]
    refs = references_for_central(sf.project, sf.stack, {r: p.outputs for r, p in plans.items()})
    wired = FleetStack(central.name, None, {**central.config, REFERENCES_KEY: refs}, central.reads)
    plans["central"] = cached_plan(wired.stack_file(sf.project))
    return plans


def objects(plan: Plan, kind: str) -> list[dict[str, Any]]:
    return [r.inputs for r in kube_objects(plan) if r.inputs.get("kind") == kind]


@pytest.mark.parametrize("fleet", sorted(MANAGER))
def test_every_part_passes_the_deploy_checks(fleet: str) -> None:
    """The central part's MultiKueue objects need Kueue's CRDs, which the manager region's stack installs: stated for
    the central part, and only there."""
    sf = with_multikueue(fleet)
    for part in expand(sf):
        config = part.stack_file(sf.project).flat_config()
        from gpuplane.config import parse_flat

        stated = stated_crds(parse_flat(config))
        assert ("kueue.x-k8s.io" in stated) == (part.region is None), part.name
        plan = part_plans(fleet)[part.region or "central"]
        assert check(plan, stated) == [], part.name
    central = part_plans(fleet)["central"]
    workers = len(part_plans(fleet)) - 2
    # unstated, every MultiKueue object would be refused: the clusters, config, check, flavor, queue, local queues
    expected = workers + 4 + len(NAMESPACES)
    assert [v.rule for v in check(central, frozenset(), rerun=False)].count("custom-resource-waits-for-crd") == expected


def test_the_manager_queue_holds_the_workers_gpus() -> None:
    central = part_plans("gcp-fleet")["central"]
    (cq,) = objects(central, "ClusterQueue")
    quota = {
        r["name"]: r["nominalQuota"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"] for r in f["resources"]
    }
    assert quota == {"nvidia.com/gpu": WORKER_GPUS["gcp-fleet"]}
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": mk.NAME}]}
    assert cq["spec"]["namespaceSelector"]["matchExpressions"][0]["values"] == NAMESPACES


@pytest.mark.parametrize("fleet", sorted(MANAGER))
def test_the_manager_reaches_every_worker_and_only_the_workers(fleet: str) -> None:
    plans = part_plans(fleet)
    workers = [r for r in plans if r not in ("central", MANAGER[fleet])]
    central = plans["central"]
    (config,) = objects(central, "MultiKueueConfig")
    assert config["spec"]["clusters"] == workers  # the fleet's order, the manager left out (Kueue's limitation)
    assert sorted(c["metadata"]["name"] for c in objects(central, "MultiKueueCluster")) == sorted(workers)
    # every object goes to the manager's cluster, through the provider made from its region stack's kubeconfig
    cluster = load(fleet, ROOT).config["gpuplane:cluster"]["name"]
    providers = {r.provider.split("::")[-2] if r.provider else None for r in kube_objects(central)}
    assert providers == {f"{cluster}-multikueue-k8s"}
    (provider,) = [r for r in central.resources if r.type == "pulumi:providers:kubernetes"]
    assert provider.inputs["kubeconfig"] == "[secret]"
    secrets = [r for r in kube_objects(central) if r.inputs["kind"] == "Secret"]
    assert len(secrets) == len(workers)
    assert all(r.inputs["stringData"] == {"masked": "[secret]"} for r in secrets)  # never in plain text


@pytest.mark.parametrize("fleet", sorted(MANAGER))
def test_each_region_runs_kueue_with_the_queue_its_role_needs(fleet: str) -> None:
    """Workers: a LocalQueue named like the manager's in every namespace (MultiKueue copies a job into the same
    namespace and LocalQueue), and the manager's account. The manager: its own `-local` queue, no account."""
    for region, plan in part_plans(fleet).items():
        if region == "central":
            continue
        worker = region != MANAGER[fleet]
        queue = "gpuplane-fleet" if worker else "gpuplane-fleet-local"
        local = objects(plan, "LocalQueue")
        assert sorted((q["metadata"]["namespace"], q["metadata"]["name"]) for q in local) == [
            (ns, queue) for ns in NAMESPACES
        ], region
        assert len(objects(plan, "ClusterRoleBinding")) == worker, region
        tokens = [o for o in objects(plan, "Secret") if o.get("type") == "kubernetes.io/service-account-token"]
        assert len(tokens) == worker, region
        if worker:
            (binding,) = objects(plan, "ClusterRoleBinding")
            (account,) = objects(plan, "ServiceAccount")
            (token,) = tokens
            assert binding["subjects"] == [
                {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": "kueue-system"}
            ]
            assert token["metadata"]["annotations"] == {
                "kubernetes.io/service-account.name": account["metadata"]["name"]
            }
            assert plan.outputs["multikueueKubeconfig"] == "[secret]"
        else:
            assert "multikueueKubeconfig" not in plan.outputs


def test_a_workers_namespaces_share_its_pools_in_a_cohort() -> None:
    """us-east4 holds 16 L4 (two 8-GPU halves, one per namespace); europe-west4 16 L4 and one 8-GPU A100 node."""
    plan = part_plans("gcp-fleet")["us-east4"]
    queues = {q["metadata"]["name"]: q["spec"] for q in objects(plan, "ClusterQueue")}
    assert sorted(queues) == ["gpuplane-fleet-ml", "gpuplane-fleet-research"]
    for spec in queues.values():
        assert spec["cohortName"] == "gpuplane-fleet"
        (group,) = spec["resourceGroups"]
        assert [r["nominalQuota"] for f in group["flavors"] for r in f["resources"]] == [8]
    europe = {
        q["metadata"]["name"]: q["spec"] for q in objects(part_plans("gcp-fleet")["europe-west4"], "ClusterQueue")
    }
    totals = [
        sum(r["nominalQuota"] for g in s["resourceGroups"] for f in g["flavors"] for r in f["resources"])
        for s in europe.values()
    ]
    assert sum(totals) == 16 + 8


@pytest.mark.parametrize("fleet", sorted(MANAGER))
def test_the_objects_validate_against_kubernetes_and_the_kueue_crds(fleet: str) -> None:
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    version = schema_version(fleet)
    seen: set[str] = set()
    for plan in part_plans(fleet).values():
        for r in kube_objects(plan):
            obj, kind = r.inputs, r.inputs["kind"]
            seen.add(kind)
            if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
                schema = crd_schema(ref, obj["apiVersion"], kind)
                assert not schema_errors(obj, schema), (r.urn, schema_errors(obj, schema))
                assert cel_results(obj, schema)[0] == [], r.urn
            elif obj["apiVersion"] in BUILTIN_GROUPS and "masked" not in str(obj.get("stringData")):
                kubernetes_validate.validate(obj, version, strict=True)
    assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "MultiKueueCluster", "LocalQueue"} <= seen


MULTIKUEUE_FRAMEWORKS = ["batch/job", "pod", "deployment", "statefulset"]
"""kueue v0.19.2 test/e2e/config/multikueue/baseline/controller_manager_config.yaml: the manager watches each enabled
framework on every worker, and one failed watch (no CRD, or a role without it) fails the whole connection
(multikueuecluster.go); these four need no CRD."""
WATCHED = {("batch", "jobs"), ("", "pods"), ("apps", "statefulsets")}
"""What the manager copies and watches for those (test/util/multikueue.go `frameworkRules`; deployment has none)."""


@pytest.mark.parametrize("fleet", sorted(MANAGER))
def test_every_region_enables_only_frameworks_every_worker_can_serve(fleet: str) -> None:
    for region, plan in part_plans(fleet).items():
        if region == "central":
            continue
        (release,) = [
            r for r in plan.resources if r.type == "kubernetes:helm.sh/v3:Release" and "kueue" in str(r.inputs["chart"])
        ]
        config = yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
        assert config["integrations"]["frameworks"] == MULTIKUEUE_FRAMEWORKS, region


def test_the_worker_role_covers_every_kind_the_manager_watches() -> None:
    """A few rules restated from Kueue's e2e setup (test/util/multikueue.go v0.19.2 `MultiKueueRulesForManager`):
    the manager creates, watches and deletes the copied jobs and pods, patches remote workloads and their status,
    and only reads queues."""
    plan = part_plans("gcp-fleet")["us-east4"]
    (role,) = objects(plan, "ClusterRole")
    rules = {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in role["rules"]}
    every = ["create", "update", "patch", "delete", "get", "list", "watch"]
    for group, resource in WATCHED:
        assert rules[group, resource] == every
        assert rules[group, f"{resource}/status"] == ["get"]
    assert rules["kueue.x-k8s.io", "workloads"] == every
    assert rules["kueue.x-k8s.io", "workloads/status"] == ["get", "patch", "update"]
    assert (
        rules["kueue.x-k8s.io", "clusterqueues"] == rules["kueue.x-k8s.io", "localqueues"] == ["get", "list", "watch"]
    )
    assert {g for g, _ in rules} == {"kueue.x-k8s.io", "batch", "", "apps"}  # built-in kinds only: no CRD needed


def test_a_standalone_worker_role_follows_its_frameworks() -> None:
    """`queues.multikueueWorker` with the chart's frameworks: the role covers each kind with a MultiKueue adapter,
    the ones Kueue's script forgets (trainjobs) included."""
    from gpuplane.kueue.component import frameworks_of
    from gpuplane.kueue.multikueue_worker import rules

    granted = {r["resources"][0] for r in rules(frameworks_of({}))}  # type: ignore[typeddict-item]
    assert {
        "jobs",
        "pods",
        "statefulsets",
        "jobsets",
        "mpijobs",
        "rayjobs",
        "rayclusters",
        "rayservices",
        "appwrappers",
        "trainjobs",
        "leaderworkersets",
    } <= granted


@pytest.mark.parametrize(
    "cluster_kubeconfig",
    [
        gke_document("gke_acme_us-east4_ml-fleet-us-east4", "34.1.2.3", "Q0EtREFUQQ=="),
        eks_document("ml-fleet-us-west-2", "https://ABC.gr7.us-west-2.eks.amazonaws.com", "Q0EtREFUQQ==", "us-west-2"),
        # pulumi-eks's kubeconfigJson (nodejs/eks/cluster/cluster.ts generateKubeconfig), as eks_platform outputs it
        json.dumps(
            {
                "apiVersion": "v1",
                "clusters": [
                    {
                        "cluster": {
                            "server": "https://ABC.gr7.us-west-2.eks.amazonaws.com",
                            "certificate-authority-data": "Q0EtREFUQQ==",
                        },
                        "name": "kubernetes",
                    }
                ],
                "contexts": [{"context": {"cluster": "kubernetes", "user": "aws"}, "name": "aws"}],
                "current-context": "aws",
                "kind": "Config",
                "users": [
                    {
                        "name": "aws",
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": "aws",
                                "args": ["eks", "get-token"],
                            }
                        },
                    }
                ],
            }
        ),
    ],
    ids=["gke", "eks", "pulumi-eks"],
)
def test_a_workers_kubeconfig_is_one_kueue_accepts(cluster_kubeconfig: str) -> None:
    """The platform's kubeconfig runs an exec plugin, which Kueue refuses; the worker's keeps its server and CA and
    signs in with the token."""
    assert mk.kubeconfig_problems(cluster_kubeconfig) != []
    text = worker_kubeconfig(cluster_kubeconfig, "eyJ.tok.en", "ml-fleet-w")
    assert mk.kubeconfig_problems(text) == []
    doc, original = yaml.safe_load(text), yaml.safe_load(cluster_kubeconfig)
    assert doc["clusters"][0]["cluster"] == {
        k: original["clusters"][0]["cluster"][k] for k in ("server", "certificate-authority-data")
    }
    assert doc["users"][0]["user"] == {"token": "eyJ.tok.en"}


def test_the_token_controller_fills_the_token_secret_in_the_mocks() -> None:
    from gpuplane.plan.mocks import _token_data

    data = _token_data("kueue-system", "w")
    assert sorted(data) == ["ca.crt", "namespace", "token"]
    assert base64.b64decode(data["namespace"]).decode() == "kueue-system"
    assert base64.b64decode(data["token"]).decode().count(".") == 2  # a JWT


def test_a_single_stack_fleet_refuses_multikueue() -> None:
    with pytest.raises(ConfigError) as info:
        plan_stack(with_multikueue("gcp-fleet"))
    assert list(dict(info.value.problems)) == ["gpuplane:fleet.multikueue"]
    assert "stack per region" in dict(info.value.problems)["gpuplane:fleet.multikueue"]


def test_a_chosen_manager_swaps_roles() -> None:
    sf = with_multikueue("gcp-fleet", manager="europe-west4")
    parts = {p.region: p for p in expand(sf)}
    plan = cached_plan(parts["europe-west4"].stack_file(sf.project))
    assert {q["metadata"]["name"] for q in objects(plan, "LocalQueue")} == {"gpuplane-fleet-local"}
    plan = cached_plan(parts["us-central1"].stack_file(sf.project))
    assert {q["metadata"]["name"] for q in objects(plan, "LocalQueue")} == {"gpuplane-fleet"}
    assert objects(plan, "ClusterRoleBinding")


@pytest.mark.parametrize("fleet", sorted(MANAGER))
def test_the_workers_endpoints_admit_the_managers_egress_and_only_theirs_change(fleet: str) -> None:
    """The manager's Kueue calls each worker's API server: GKE's master authorized networks (Compute Engine's public
    IPs kept out) or EKS's publicAccessCidrs must list where it comes from."""
    runners = ["203.0.113.0/24"]  # the shipped fleets' CI runners
    for region, plan in part_plans(fleet).items():
        if region == "central":
            continue
        if fleet == "gcp-fleet":
            (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
            cfg = cluster.inputs["masterAuthorizedNetworksConfig"]
            allowed = [b["cidrBlock"] for b in cfg["cidrBlocks"]]
            assert cfg["gcpPublicCidrsAccessEnabled"] is False
        else:
            (cluster,) = plan.by_type("eks:index:Cluster")
            allowed = cluster.inputs["publicAccessCidrs"]
        assert allowed == (runners if region == MANAGER[fleet] else runners + EGRESS), region


@pytest.mark.parametrize(
    ("fleet", "settings", "path", "message"),
    [
        ("gcp-fleet", {"managerEgress": []}, "gpuplane:fleet.multikueue.managerEgress", "egress"),
        ("aws-fleet", {"managerEgress": []}, "gpuplane:fleet.multikueue.managerEgress", "egress"),
        ("gcp-fleet", {"managerEgress": ["34.1.2.3/24"]}, "gpuplane:fleet.multikueue.managerEgress", "not IPv4 CIDR"),
        ("gcp-fleet", {"manager": "us-east5"}, "gpuplane:fleet.multikueue.manager", "did you mean 'us-east4'"),
        ("gcp-fleet", {"namespaces": ["ml", "ml"]}, "gpuplane:fleet.multikueue.namespaces", "repeated: ml"),
        ("gcp-fleet", {"namespaces": []}, "gpuplane:fleet.multikueue.namespaces", "at least 1"),
    ],
)
def test_a_multikueue_the_manager_could_not_use_is_refused(
    fleet: str, settings: dict[str, Any], path: str, message: str
) -> None:
    from gpuplane.config import parse_flat

    with pytest.raises(ConfigError) as info:
        parse_flat(with_multikueue(fleet, **settings).flat_config())
    problems = dict(info.value.problems)
    assert list(problems) == [path], problems
    assert message in problems[path]


def test_a_private_worker_endpoint_or_public_manager_nodes_are_refused() -> None:
    from gpuplane.config import parse_flat

    sf = with_multikueue("gcp-fleet")
    sf.config["gpuplane:gcp"]["privateEndpoint"] = True
    with pytest.raises(ConfigError) as info:
        parse_flat(sf.flat_config())
    assert list(dict(info.value.problems)) == ["gpuplane:gcp.privateEndpoint"]
    sf = with_multikueue("gcp-fleet")
    sf.config["gpuplane:gcp"]["privateNodes"] = False
    with pytest.raises(ConfigError) as info:
        parse_flat(sf.flat_config())
    assert list(dict(info.value.problems)) == ["gpuplane:gcp.privateNodes"]
    sf = with_multikueue("aws-fleet")
    sf.config["gpuplane:aws"]["publicAccessCidrs"] = []
    with pytest.raises(ConfigError) as info:
        parse_flat(sf.flat_config())
    assert list(dict(info.value.problems)) == ["gpuplane:aws.publicAccessCidrs"]


def test_an_eks_fleet_open_to_everyone_needs_no_egress_a_gke_one_does() -> None:
    """Whether GKE's 0.0.0.0/0 admits Compute Engine's public IPs (the manager's Cloud NAT) while
    `gcp_public_cidrs_access_enabled` is false, as gpuplane sets it, is not documented: the egress is asked for."""
    from gpuplane.config import parse_flat

    sf = with_multikueue("aws-fleet", managerEgress=[])
    sf.config["gpuplane:aws"]["publicAccessCidrs"] = ["0.0.0.0/0"]
    assert parse_flat(sf.flat_config()).fleet is not None
    sf = with_multikueue("gcp-fleet", managerEgress=[])
    sf.config["gpuplane:gcp"]["authorizedNetworks"] = [{"cidrBlock": "0.0.0.0/0"}]
    with pytest.raises(ConfigError) as info:
        parse_flat(sf.flat_config())
    assert list(dict(info.value.problems)) == ["gpuplane:fleet.multikueue.managerEgress"]


def test_a_worker_region_passes_the_lifecycle_checks() -> None:
    """Every routine change on a worker region (`gpuplane fleet plan` runs them on every region), the second `up`
    after the token controller filled the token Secret included."""
    from gpuplane.fleet.stacks import plan_part

    sf = with_multikueue("gcp-fleet")
    (worker,) = [p for p in expand(sf) if p.region == "us-east4"]
    report = plan_part(sf.project, worker, lifecycle=True)
    assert report.lifecycle_checked and report.ok, report.to_json()


def test_a_new_manager_kubeconfig_updates_the_provider_instead_of_replacing_everything() -> None:
    """A GKE control-plane IP or CA rotation changes the manager's kubeconfig. Without `clusterIdentifier`
    pulumi-kubernetes would replace the provider, and with it every MultiKueue object, create first, on fixed names
    (AlreadyExists); with one kept the same, the provider is updated (provider.go DiffConfig)."""
    import copy as copying

    from gpuplane.plan.diff import change_of
    from gpuplane.plan.render import to_json

    doc = json.loads(to_json(part_plans("gcp-fleet")["central"]))
    (provider,) = [r for r in doc["resources"] if r["type"] == "pulumi:providers:kubernetes"]
    assert provider["inputs"]["clusterIdentifier"] == "ml-fleet-us-central1"
    rotated = copying.deepcopy(provider)
    rotated["inputs"]["kubeconfig"] = "apiVersion: v1\nclusters: [{name: x, cluster: {server: https://34.9.9.9}}]\n"
    change = change_of(provider, rotated)
    assert change is not None and change.paths == ["kubeconfig"]
    assert not change.disruptive
    del provider["inputs"]["clusterIdentifier"], rotated["inputs"]["clusterIdentifier"]
    assert change_of(provider, rotated).disruptive  # type: ignore[union-attr]


@pytest.mark.parametrize("fleet", sorted(MANAGER))
def test_a_workers_kubeconfig_output_has_its_endpoint_and_its_accounts_token(fleet: str) -> None:
    """The output itself, not its mask: the server and CA of the worker's own kubeconfig, the token the token
    controller wrote into the account's Secret (as the mocks return it), and nothing Kueue refuses."""
    from pulumi.runtime.sync_await import _sync_await

    import gpuplane.testing
    from gpuplane.config import parse_flat
    from gpuplane.plan.mocks import _token_data
    from gpuplane.stack.parts import region_part
    from gpuplane.stack.program import builder_for

    sf = with_multikueue(fleet)
    (part,) = [p for p in expand(sf) if p.region not in (None, MANAGER[fleet])][:1]
    cfg = parse_flat(part.stack_file(sf.project).flat_config())
    with gpuplane.testing.offline(project=sf.project, stack=part.name):
        outputs = region_part(cfg, builder_for(cfg))
        text = _sync_await(outputs["multikueueKubeconfig"].future())  # type: ignore[attr-defined]
        own = yaml.safe_load(_sync_await(pulumi_output(outputs["kubeconfig"]).future()))
    doc = yaml.safe_load(text)
    assert mk.kubeconfig_problems(text) == []
    own_cluster = {c["name"]: c["cluster"] for c in own["clusters"]}
    own_context = {c["name"]: c["context"] for c in own["contexts"]}[own["current-context"]]
    assert doc["clusters"][0]["cluster"] == own_cluster[own_context["cluster"]]  # server and CA, nothing else
    (secret,) = [
        r
        for r in part_plans(fleet)[str(part.region)].resources
        if r.type == "kubernetes:core/v1:Secret" and r.inputs.get("type") == "kubernetes.io/service-account-token"
    ]
    token = base64.b64decode(_token_data("kueue-system", secret.name)["token"]).decode()
    assert doc["users"][0]["user"] == {"token": token}


def pulumi_output(value: Any) -> Any:
    import pulumi

    return pulumi.Output.from_input(value)
