"""Kueue MultiKueue on a fleet's manager (`MultiKueueManager`): objects valid against the v0.19.2 CRDs with CEL,
linked by name as Kueue resolves them, the fleet's totals as quota, worker kubeconfigs kept secret, every bad
argument named, and the deploy simulator's rule that a MultiKueueCluster's Secret comes first."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

import gpuplane.testing
from gpuplane.args.checks import ArgsError
from gpuplane.k8s.kubeconfig import eks_document, gke_document
from gpuplane.kueue import multikueue as mk
from gpuplane.kueue.multikueue_component import MultiKueueManager
from gpuplane.plan import Plan
from gpuplane.plan.deploy import check
from gpuplane.plan.deploy.graph import DeployGraph
from gpuplane.plan.deploy.multikueue import check_multikueue_secrets
from gpuplane.plan.render import to_json

from .conftest import need_reference
from .multikueue_cases import multikueue_cases
from .test_deploy import SYSTEM_GROUP, eks_base, gke_base, plan, res

TOKEN = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.sig"


def token_kubeconfig(server: str = "https://34.1.2.3", token: str = TOKEN) -> str:
    """A worker kubeconfig as Kueue's create-multikueue-kubeconfig.sh writes it: a ServiceAccount's token and the
    CA inline (kueue v0.19.2 site/static/examples/multikueue/create-multikueue-kubeconfig.sh)."""
    return f"""apiVersion: v1
kind: Config
clusters:
- name: worker
  cluster: {{server: "{server}", certificate-authority-data: Q0EK}}
users:
- name: multikueue-sa
  user: {{token: "{token}"}}
contexts:
- name: worker
  context: {{cluster: worker, user: multikueue-sa}}
current-context: worker
"""


WORKERS = {"us-east": token_kubeconfig(), "eu-west": token_kubeconfig("https://eu.example.com")}
QUOTAS = {"nvidia.com/gpu": 72, "nvidia.com/mig-1g.10gb": 14}


def objects() -> list[dict[str, Any]]:
    return mk.manager_objects(WORKERS, QUOTAS, ["research", "serving"])


def of_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def test_every_object_validates_against_the_v0_19_2_crds_with_cel() -> None:
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    objs = [o for o in objects() if o["apiVersion"].startswith("kueue.x-k8s.io/")]
    assert {o["kind"] for o in objs} == {
        "MultiKueueCluster",
        "MultiKueueConfig",
        "AdmissionCheck",
        "ResourceFlavor",
        "ClusterQueue",
        "LocalQueue",
    }
    evaluated = 0
    for obj in objs:
        schema = crd_schema(ref, obj["apiVersion"], obj["kind"])
        assert not schema_errors(obj, schema), (obj["kind"], schema_errors(obj, schema))
        failures, n = cel_results(obj, schema)
        assert not failures, (obj["kind"], failures)
        evaluated += n
    assert evaluated >= 4, "the MultiKueue CRDs' CEL rules were evaluated"


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("MultiKueueConfig", lambda s: s["clusters"].append(s["clusters"][0]), "must be unique"),
        (
            "MultiKueueCluster",
            lambda s: s["clusterSource"].update({"clusterProfileRef": {"name": "x"}}),
            "exactly one of the fields in [kubeConfig clusterProfileRef] must be set",
        ),
    ],
)
def test_cel_rules_catch_a_broken_object(kind: str, change: Callable[[dict[str, Any]], Any], message: str) -> None:
    from .crds import cel_results, crd_schema

    ref = need_reference()
    obj = copy.deepcopy(of_kind(objects(), kind)[0])
    change(obj["spec"])
    failures, _ = cel_results(obj, crd_schema(ref, obj["apiVersion"], obj["kind"]))
    assert any(message in f for f in failures), failures


def test_the_objects_kueue_links_by_name_refer_to_each_other() -> None:
    """MultiKueueCluster -> Secret (location, in kueue-system, key kubeconfig); MultiKueueConfig -> the clusters;
    AdmissionCheck -> the config (apiGroup/kind/name); ClusterQueue -> flavor and check; LocalQueue -> ClusterQueue."""
    objs = objects()
    secrets = {o["metadata"]["name"]: o for o in of_kind(objs, "Secret")}
    clusters = of_kind(objs, "MultiKueueCluster")
    assert [c["metadata"]["name"] for c in clusters] == list(WORKERS)
    for c in clusters:
        source = c["spec"]["clusterSource"]["kubeConfig"]
        assert source["locationType"] == "Secret"
        s = secrets[source["location"]]
        assert s["metadata"]["namespace"] == "kueue-system" and s["type"] == "Opaque"
        assert s["stringData"] == {"kubeconfig": WORKERS[c["metadata"]["name"]]}
    (config,) = of_kind(objs, "MultiKueueConfig")
    assert config["spec"]["clusters"] == list(WORKERS)
    (ac,) = of_kind(objs, "AdmissionCheck")
    assert ac["spec"] == {
        "controllerName": "kueue.x-k8s.io/multikueue",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": config["metadata"]["name"]},
    }
    (flavor,) = of_kind(objs, "ResourceFlavor")
    assert flavor["spec"] == {}, "the manager runs no jobs: no node labels or taints"
    (cq,) = of_kind(objs, "ClusterQueue")
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": ac["metadata"]["name"]}]}
    assert "admissionChecks" not in cq["spec"], "v1beta2 has admissionChecksStrategy only"
    assert {f["name"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"]} == {flavor["metadata"]["name"]}
    lqs = of_kind(objs, "LocalQueue")
    assert {(q["metadata"]["namespace"], q["spec"]["clusterQueue"]) for q in lqs} == {
        ("research", "gpuplane-fleet"),
        ("serving", "gpuplane-fleet"),
    }
    assert cq["spec"]["namespaceSelector"]["matchExpressions"][0]["values"] == ["research", "serving"]


def test_names_are_deterministic_dns_1123() -> None:
    label = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    names = [o["metadata"]["name"] for o in objects()]
    assert all(label.match(n) and len(n) <= 63 for n in names), names
    assert names == [o["metadata"]["name"] for o in objects()]
    assert {"gpuplane-multikueue", "gpuplane-fleet", "us-east", "gpuplane-multikueue-us-east"} <= set(names)


def test_the_queue_holds_the_fleets_totals() -> None:
    (cq,) = of_kind(objects(), "ClusterQueue")
    quota = {
        r["name"]: r["nominalQuota"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"] for r in f["resources"]
    }
    assert quota == QUOTAS
    assert [g["coveredResources"] for g in cq["spec"]["resourceGroups"]] == [sorted(QUOTAS)]


def test_kueue_refuses_exec_kubeconfigs_and_takes_a_token() -> None:
    """gpuplane's own cluster kubeconfigs run an exec plugin, which Kueue v0.19.2 refuses for a MultiKueueCluster
    (multikueuecluster.go `validateRestConfig`: "exec plugins are not allowed")."""
    assert mk.kubeconfig_problems(token_kubeconfig()) == []
    for doc in (
        eks_document("c", "https://abc.eks.amazonaws.com", "Q0E=", "us-east-1"),
        gke_document("g", "1.2.3.4", "Q0E="),
    ):
        assert any("exec plugin" in p for p in mk.kubeconfig_problems(doc)), doc
    insecure = token_kubeconfig().replace("certificate-authority-data: Q0EK", "insecure-skip-tls-verify: true")
    assert any("skips TLS" in p for p in mk.kubeconfig_problems(insecure))
    assert any("DNS name" in p for p in mk.kubeconfig_problems(token_kubeconfig("https://bad_host:443")))
    assert mk.kubeconfig_problems("just text") == ["not a kubeconfig (YAML with clusters, users and contexts)"]


# --- the component in a user's program ---------------------------------------------------------------------------


def manager_plan() -> Plan:
    with gpuplane.testing.offline(project="mine") as result:
        provider = k8s.Provider("manager", kubeconfig="{}")
        kueue = k8s.helm.v3.Release(
            "kueue",
            chart="kueue",
            name="kueue",
            namespace="kueue-system",
            opts=pulumi.ResourceOptions(provider=provider),
        )
        workers: dict[str, Any] = {
            "us-east": pulumi.Output.from_input(token_kubeconfig()),
            "eu-west": WORKERS["eu-west"],
        }
        manager = MultiKueueManager(
            "fleet",
            {"workers": workers, "quotas": QUOTAS, "namespaces": ["research"]},
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[kueue]),
        )
        pulumi.export("queues", manager.local_queues)
    return result


def test_the_component_in_a_users_program() -> None:
    p = manager_plan()
    assert p.outputs["queues"] == {"research": "research/gpuplane-fleet"}
    (release,) = p.by_type("kubernetes:helm.sh/v3:Release")
    (component,) = p.by_type("gpuplane:kueue:MultiKueueManager")
    children = [r for r in p.resources if r.parent == component.urn]
    assert {r.name for r in children} == {
        "fleet-secret-us-east",
        "fleet-secret-eu-west",
        "fleet-cluster-us-east",
        "fleet-cluster-eu-west",
        "fleet-config",
        "fleet-check",
        "fleet-flavor",
        "fleet-cq",
        "fleet-lq-research",
    }
    providers = {r.provider.rsplit("::", 1)[0] for r in children if r.provider}
    assert len(providers) == 1 and "::manager" in providers.pop(), "the user's provider, passed through"
    assert all(release.urn in r.dependencies for r in children), "everything waits for Kueue's CRDs"
    for c in p.by_type(mk_type("MultiKueueCluster")):
        worker = c.name.removeprefix("fleet-cluster-")
        assert any(d.endswith(f"::fleet-secret-{worker}") for d in c.dependencies), c.dependencies
    assert [str(v) for v in check(p)] == []
    assert list(check_multikueue_secrets(DeployGraph(p))) == []


def mk_type(kind: str) -> str:
    return f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}"


def test_worker_kubeconfigs_are_secret_in_the_plan() -> None:
    """Plain or Output, each kubeconfig is registered as a secret: the plan records `[secret]`, and neither the
    token nor the server appears anywhere in the plan's JSON."""
    p = manager_plan()
    secrets = p.by_type("kubernetes:core/v1:Secret")
    assert len(secrets) == 2 and all(s.inputs["stringData"] == "[secret]" for s in secrets)
    text = to_json(p)
    assert TOKEN not in text and "eu.example.com" not in text and "34.1.2.3" not in text


def refused(args: Any) -> dict[str, str]:
    with gpuplane.testing.offline() as p, pytest.raises(ArgsError) as info:
        MultiKueueManager("bad", args)
    assert [r.type for r in p.resources] == ["pulumi:pulumi:Stack"], "nothing registered"
    return dict(info.value.problems)


GOOD: dict[str, Any] = {"workers": {"us-east": token_kubeconfig()}, "quotas": {"nvidia.com/gpu": 8}}


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        ({"workers": None}, "workers", "required argument is missing"),
        ({"quotas": None}, "quotas", "required argument is missing"),
        ({"workers": {}}, "workers", "at least one worker"),
        (
            {"workers": {f"w{i}": token_kubeconfig() for i in range(21)}},
            "workers",
            "a MultiKueueConfig lists at most 20",
        ),
        ({"workers": {"US_east": token_kubeconfig()}}, "workers.US_east", "must be a DNS label"),
        (
            {"workers": {"us-east": eks_document("c", "https://x.eks.amazonaws.com", "Q0E=", "")}},
            "workers.us-east",
            "runs an exec plugin",
        ),
        ({"workers": {"us-east": 7}}, "workers.us-east", "a kubeconfig is a string"),
        ({"workers": pulumi.Output.from_input({})}, "workers", "must be a mapping of worker name to kubeconfig"),
        ({"quotas": {}}, "quotas", "at least one resource"),
        ({"quotas": {"nvidia.com/gpu": -1}}, "quotas.nvidia.com/gpu", "a whole number, 0 or more"),
        ({"quotas": {"GPU s": 1}}, "quotas.GPU s", "not a Kubernetes resource name"),
        ({"namespaces": "research"}, "namespaces", "a list of namespaces, not one string"),
        ({"namespaces": ["Research"]}, "namespaces[0]", "must be a DNS label"),
        ({"namespaces": ["a", "a"]}, "namespaces", "'a' appears twice"),
        ({"queue_name": "Fleet"}, "queue_name", "must be a DNS label"),
        ({"queue_name": pulumi.Output.from_input("q")}, "queue_name", "must be a plain value, not an Output"),
        ({"quota": {}}, "quota", "unknown argument (did you mean 'quotas'?)"),
    ],
)
def test_each_bad_argument_is_named(change: dict[str, Any], path: str, message: str) -> None:
    args = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    problems = refused(args)
    assert path in problems and message in problems[path], problems


def test_every_bad_argument_in_one_error() -> None:
    problems = refused({"workers": {"Bad": 1}, "quotas": {"x": -2}, "namespaces": ["B"], "queue_name": "Q"})
    assert set(problems) == {"workers.Bad", "quotas.x", "namespaces[0]", "queue_name"}, problems
    assert not any(TOKEN in m for m in problems.values())


def test_a_refused_kubeconfig_is_never_echoed() -> None:
    leaky = token_kubeconfig().replace("certificate-authority-data: Q0EK", "insecure-skip-tls-verify: true")
    problems = refused({**GOOD, "workers": {"us-east": leaky}})
    assert "skips TLS" in problems["workers.us-east"] and TOKEN not in problems["workers.us-east"]


# --- the deploy simulator ----------------------------------------------------------------------------------------

CASES = multikueue_cases(res, plan, eks_base, gke_base, SYSTEM_GROUP)


@pytest.mark.parametrize(("rule", "broken", "fixed"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_rule_rejects_a_graph_that_breaks_it(rule: str, broken: Plan, fixed: Plan) -> None:
    found = list(check_multikueue_secrets(DeployGraph(broken)))
    assert [f[0] for f in found] == [rule], found
    assert all(urn and message and fix for _, urn, message, fix in found)
    assert {v.rule for v in check(broken)} <= {rule}, "nothing else in the broken graph is wrong (once wired)"
    assert list(check_multikueue_secrets(DeployGraph(fixed))) == []
    assert [str(v) for v in check(fixed)] == []
