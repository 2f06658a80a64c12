"""Exact examples for the deploy simulator (plan/deploy), written from the upstream behaviour each rule models."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from gpuplane.config.model import StackConfig
from gpuplane.plan import Plan, PlannedResource
from gpuplane.plan.deploy import (
    Violation,
    check_cluster_scoped,
    check_crds,
    check_daemonsets,
    check_job_awaits,
    check_kubernetes_names,
    check_kubernetes_providers,
    check_names,
    check_node_security_groups,
    crd_installers,
    go_duration,
    stated_crds,
)
from gpuplane.plan.deploy import _group as group_of
from gpuplane.plan.deploy import _needs as needs
from gpuplane.plan.deploy import _scope as scope
from gpuplane.plan.deploy import _security_group_kinds as security_group_kinds
from gpuplane.plan.deploy import scheduling as sched
from gpuplane.plan.deploy.graph import DeployGraph
from gpuplane.plan.mocks_aws import ec2_id, eks_cluster_security_group, pulumi_eks_cluster_security_group
from gpuplane.plan.mocks_engine import kubernetes_name

from .test_deploy import res, urn

P = "urn:pulumi:s::p::"
K8S = f"{P}pulumi:providers:kubernetes::k8s"
K8S_B = f"{P}pulumi:providers:kubernetes::k8s-b"
AWS = f"{P}pulumi:providers:aws::aws"


def graph(*resources: PlannedResource) -> DeployGraph:
    return DeployGraph(Plan(project="p", stack="s", resources=list(resources)))


# --- Go durations (Go `time.ParseDuration`: an optional sign, then decimal numbers each with an optional
# fraction and a unit suffix ns, us, µs, ms, s, m, h (case-sensitive), or a lone "0"; a number without a unit
# is an error) ---


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10m", 600.0),
        ("90s", 90.0),
        ("2h", 7200.0),
        ("1h5m", 3900.0),
        ("1h1m1s", 3661.0),
        ("1.5h", 5400.0),
        ("0.5m", 30.0),
        ("1s", 1.0),
        ("0", 0.0),
        ("500ms", 0.5),
        ("1000000us", 1.0),
        (".5h", 1800.0),
        ("+10m", 600.0),
        ("10", None),  # a number without unit
        ("", None),
        ("10M", None),  # units are case-sensitive
        ("10H", None),
        ("10S", None),
        ("10m ", None),  # trailing text
        ("x10m", None),
        ("10mjunk", None),
        ("10d", None),  # Go has no day unit
    ],
)
def test_go_duration(text: str, seconds: float | None) -> None:
    assert go_duration(text) == seconds


# --- Job awaits: pulumi-kubernetes provider/pkg/await/job.go waits DefaultJobTimeoutMins = 10 for a Job
# unless customTimeouts.create is set; annotation `pulumi.com/skipAwait: "true"` turns the wait off. ---

JOB = "kubernetes:batch/v1:Job"
JOB_FIX = "give the Job customTimeouts (create and update) beyond its activeDeadlineSeconds, or skipAwait"


def job(name: str, deadline: object, timeouts: dict[str, str] | None = None, **meta: Any) -> PlannedResource:
    spec = {} if deadline is None else {"activeDeadlineSeconds": deadline}
    return res(JOB, name, {"metadata": meta, "spec": spec}, provider=K8S, timeouts=timeouts)


def job_violation(name: str, wait: str, given: str, deadline: object) -> Violation:
    return Violation(
        "job-awaited-to-its-deadline",
        urn(JOB, name),
        f"pulumi up waits {wait} s for {name} (customTimeouts.create {given}), but the Job may run {deadline} s "
        "(activeDeadlineSeconds): the update fails while it still runs",
        JOB_FIX,
    )


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (job("j", 900), [job_violation("j", "600", "unset: 10m", 900)]),
        (job("j", 600), []),  # waits exactly as long as the Job may run
        (job("j", 601), [job_violation("j", "600", "unset: 10m", 601)]),
        (job("j", 3600, {"create": "1h"}), []),
        (job("j", 3601, {"create": "1h"}), [job_violation("j", "3600", "1h", 3601)]),
        (job("j", 1500, {"create": "20m"}), [job_violation("j", "1200", "20m", 1500)]),
        (job("j", 1500, {"create": "90s"}), [job_violation("j", "90", "90s", 1500)]),
        (job("j", 1500.5, {"create": "25m"}), [job_violation("j", "1500", "25m", 1500.5)]),
        (job("j", 9000, {"create": "forever"}), []),  # not a Go duration: the rule cannot tell
        (job("j", 900, annotations={"pulumi.com/skipAwait": "true"}), []),
        (job("j", 900, annotations={"pulumi.com/skipAwait": "false"}), [job_violation("j", "600", "unset: 10m", 900)]),
        (job("j", 900, annotations={"other": "true"}), [job_violation("j", "600", "unset: 10m", 900)]),
        (job("j", None), []),  # no deadline: the Job may run forever by design
        (job("j", "900"), []),
        (res("kubernetes:batch/v1:CronJob", "j", {"spec": {"activeDeadlineSeconds": 900}}, provider=K8S), []),
    ],
)
def test_job_awaits(resource: PlannedResource, expected: list[Violation]) -> None:
    assert list(check_job_awaits(graph(resource))) == expected


def test_job_awaits_goes_on_after_a_skipped_job() -> None:
    g = graph(
        job("a", 900, annotations={"pulumi.com/skipAwait": "true"}),
        job("b", None),
        job("c", 900),
    )
    assert list(check_job_awaits(g)) == [job_violation("c", "600", "unset: 10m", 900)]


# --- Kubernetes object names: one kind + namespace + name per cluster is one object (the API server answers
# a second create with AlreadyExists; Helm refuses `cannot re-use a name that is still in use`). A Helm
# release without a namespace goes to `default` (pulumi-kubernetes helm.sh/v3 Release `namespace` docs). ---

CM = "kubernetes:core/v1:ConfigMap"
RELEASE = "kubernetes:helm.sh/v3:Release"


def cm(name: str, meta: dict[str, Any], provider: str | None = K8S) -> PlannedResource:
    return res(CM, name, {"metadata": meta}, provider=provider)


def name_clash(type_: str, name: str, shown: str, first: str) -> Violation:
    return Violation(
        "kubernetes-name-unique",
        urn(type_, name),
        f"{type_} {shown} is also created by {urn(type_, first)} on the same cluster",
        "give one of them another name",
    )


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ([cm("a", {"name": "x", "namespace": "ns"}), cm("b", {"name": "x", "namespace": "ns"})], ["b:ns/x:a"]),
        ([cm("a", {"name": "x"}), cm("b", {"name": "x"})], ["b:x:a"]),
        ([cm("a", {"name": "x", "namespace": "ns"}), cm("b", {"name": "x", "namespace": "other"})], []),
        ([cm("a", {"name": "x"}), cm("b", {"name": "x"}, provider=K8S_B)], []),
        ([cm("a", {"name": "x"}, provider=None), cm("b", {"name": "x"}, provider=None)], ["b:x:a"]),
        ([cm("a", {"name": "x"}), cm("b", {"name": "y"}), cm("c", {"name": "x"})], ["c:x:a"]),
        ([cm("a", {"name": "x"}), cm("b", {"name": "x"}), cm("c", {"name": "x"})], ["b:x:a", "c:x:a"]),
        ([cm("a", {}), cm("b", {})], []),  # autonamed `<logical>-<8 hex>`: distinct
    ],
)
def test_kubernetes_names_of_objects(resources: list[PlannedResource], expected: list[str]) -> None:
    want = [name_clash(CM, *e.split(":")) for e in expected]
    assert list(check_kubernetes_names(graph(*resources))) == want


def rel(name: str, inputs: dict[str, Any]) -> PlannedResource:
    return res(RELEASE, name, {"chart": "c", **inputs}, provider=K8S)


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ([rel("a", {"name": "r"}), rel("b", {"name": "r"})], ["b:default/r:a"]),
        ([rel("a", {"name": "r", "namespace": "default"}), rel("b", {"name": "r"})], ["b:default/r:a"]),
        ([rel("a", {"name": "r", "namespace": "n"}), rel("b", {"name": "r", "namespace": "n"})], ["b:n/r:a"]),
        ([rel("a", {"name": "r", "namespace": "n"}), rel("b", {"name": "r"})], []),
        ([rel("a", {}), rel("b", {})], []),
        # a release's name is its `name` input, not `metadata.name`
        ([rel("a", {"metadata": {"name": "m"}}), rel("b", {"metadata": {"name": "m"}})], []),
    ],
)
def test_kubernetes_names_of_releases(resources: list[PlannedResource], expected: list[str]) -> None:
    want = [name_clash(RELEASE, *e.split(":")) for e in expected]
    assert list(check_kubernetes_names(graph(*resources))) == want


def test_kubernetes_names_only_for_kubernetes_resources() -> None:
    """Components (not custom) and other providers' resources are not Kubernetes objects."""
    group = "kubernetes:yaml/v2:ConfigGroup"
    sqs = "aws:sqs/queue:Queue"
    g = graph(
        res(group, "a", {"metadata": {"name": "x"}}, provider=K8S, custom=False),
        res(group, "b", {"metadata": {"name": "x"}}, provider=K8S, custom=False),
        res(sqs, "q1", {"metadata": {"name": "x"}}, provider=AWS),
        res(sqs, "q2", {"metadata": {"name": "x"}}, provider=AWS),
    )
    assert list(check_kubernetes_names(g)) == []


# --- Explicit providers: without one, pulumi-kubernetes' default provider reads the ambient kubeconfig
# (pulumi-kubernetes provider docs: KUBECONFIG, ~/.kube/config). ---


def test_kubernetes_providers() -> None:
    g = graph(
        cm("a", {"name": "x"}, provider=None),
        cm("b", {"name": "y"}),
        res("kubernetes:yaml/v2:ConfigGroup", "cg", custom=False),
        res("aws:sqs/queue:Queue", "q"),
        res(RELEASE, "r", {"chart": "c"}),
    )
    fix = (
        "pass `opts=ResourceOptions(provider=...)` (a platform's `k8s_provider`, or gpuplane.kubernetes_provider "
        "for your own cluster) to it or to its component"
    )
    assert list(check_kubernetes_providers(g)) == [
        Violation(
            "kubernetes-explicit-provider",
            urn(CM, "a"),
            f"{CM} has no provider: it would go to whatever cluster the ambient kubeconfig points at",
            fix,
        ),
        Violation(
            "kubernetes-explicit-provider",
            urn(RELEASE, "r"),
            f"{RELEASE} has no provider: it would go to whatever cluster the ambient kubeconfig points at",
            fix,
        ),
    ]


# --- Cluster-scoped cloud resources: CreateAddon on a cluster that does not exist yet fails with
# ResourceNotFoundException (terraform-provider-aws internal/service/eks/addon.go). ---

EKS_TYPE = "eks:index:Cluster"
ADDON = "aws:eks/addon:Addon"


def test_cluster_scoped_names_the_missing_dependency() -> None:
    cluster = res(EKS_TYPE, "c-eks", {"name": "c"}, custom=False)
    g = graph(
        cluster,
        res(ADDON, "ok", {"clusterName": "c"}, deps=(cluster.urn,)),
        res(ADDON, "early", {"clusterName": "c"}),
        res(ADDON, "elsewhere", {"clusterName": "not-in-plan"}),  # a cluster outside the plan: nothing to wait for
        res("aws:sqs/queue:Queue", "q", {"clusterName": "c"}),
    )
    assert list(check_cluster_scoped(g)) == [
        Violation(
            "cluster-scoped-waits-for-cluster",
            urn(ADDON, "early"),
            f"{ADDON} names cluster 'c' but does not depend on {cluster.urn}: the engine may create it first "
            "(terraform-provider-aws internal/service/eks/addon.go (CreateAddon): the EKS API rejects it until the "
            "cluster exists (ResourceNotFoundException))",
            "pass the cluster resource's output (e.g. its name or ID Output), not a config string",
        )
    ]


# --- Global names. EKS CreateCluster.name: `^[0-9A-Za-z][A-Za-z0-9\-_]*$`, at most 100, unique per account and
# region (botocore eks service-2.json); managed node groups: at most 63, unique per cluster, and a
# nodeGroupNamePrefix gets 26 characters more (terraform-plugin-sdk helper/id UniqueIDSuffixLength);
# Pulumi autonames `<logical>-<7 hex>` (pulumi-terraform-bridge AutoName, Randlen 7). ---

GKE_TYPE = "gcp:container/cluster:Cluster"
POOL = "gcp:container/nodePool:NodePool"
MNG = "eks:index:ManagedNodeGroup"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AWS_WEST = f"{P}pulumi:providers:aws::aws-west"
EKS_SOURCE = "botocore EKS service-2 CreateCluster.name (pattern, max 100), unique per account and region"
EKS_PATTERN = r"^[0-9A-Za-z][A-Za-z0-9\-_]*$"
MNG_SOURCE = (
    "EKS user guide, create-managed-node-group: node group names up to 63 characters, unique per cluster "
    "(botocore sets no limit; pulumi-aws autonames within 255, which EKS then rejects); a "
    "nodeGroupNamePrefix gets 26 characters more (hashicorp/terraform-provider-aws internal/create/naming.go "
    "`Name` -> id.PrefixedUniqueId, terraform-plugin-sdk helper/id UniqueIDSuffixLength 26)"
)
INVALID_FIX = "shorten the cluster or pool name, or derive this name with a hash suffix"
UNIQUE_FIX = "make the name unique (include the region or a hash of the full cluster name)"


def providers() -> list[PlannedResource]:
    return [
        res("pulumi:providers:aws", "aws", {"region": "us-east-1"}),
        res("pulumi:providers:aws", "aws-west", {"region": "us-west-2"}),
        res("pulumi:providers:aws", "aws-none", {}),
    ]


def eks(name: str, cluster_name: str, provider: str | None = AWS, component: bool = True) -> PlannedResource:
    r = res(EKS_TYPE, name, {"name": cluster_name}, custom=not component)
    if provider:
        r.providers = (("aws", f"{provider}::id"),)
    return r


@pytest.mark.parametrize(
    ("resource", "keys", "expected"),
    [
        (eks("e", "c"), ("region",), ("us-east-1",)),
        (eks("e", "c", AWS_WEST), ("region",), ("us-west-2",)),
        (res(EKS_TYPE, "e", provider=AWS), ("region",), ("us-east-1",)),  # `provider`, not `providers`
        (eks("e", "c", f"{P}pulumi:providers:aws::aws-none"), ("region",), ("",)),  # provider without region
        (eks("e", "c", f"{P}pulumi:providers:aws::gone"), ("region",), ("",)),  # provider not in the plan
        (eks("e", "c", None), ("region",), ("",)),
        (res(POOL, "np", {"cluster": "c"}), ("cluster",), (urn(GKE_TYPE, "gke"),)),
        (res(POOL, "np", {"cluster": "elsewhere"}), ("cluster",), ("elsewhere",)),
        (res(NODE_GROUP, "ng", {"clusterName": "e"}), ("cluster",), (urn(EKS_TYPE, "eks"),)),
        (res(NODE_GROUP, "ng", {"clusterName": "elsewhere"}), ("cluster",), ("elsewhere",)),
        (res("aws:sqs/queue:Queue", "q", {"cluster": "a", "clusterName": "b"}), ("cluster",), ("a",)),
        (res("aws:sqs/queue:Queue", "q", {"clusterName": "b"}), ("cluster",), ("b",)),
        (res("aws:sqs/queue:Queue", "q", {}), ("cluster",), ("",)),
        (res(POOL, "np", {"project": "p1", "location": "l1"}), ("project", "location"), ("p1", "l1")),
        (res(POOL, "np", {}), ("project",), ("",)),
        (res(POOL, "np", {"region": "r1"}), (), ()),
    ],
)
def test_name_scope(resource: PlannedResource, keys: tuple[str, ...], expected: tuple[str, ...]) -> None:
    g = graph(
        *providers(),
        res(GKE_TYPE, "gke", {"name": "c", "project": "p", "location": "l"}),
        eks("eks", "e"),
        resource,
    )
    assert scope(g, resource, keys) == expected


def not_unique(type_: str, name: str, what: str, first: str, scope_: dict[str, str], source: str) -> Violation:
    return Violation(
        "global-name-unique",
        urn(type_, name),
        f"{what} is also used by {urn(type_, first)} in the same scope {scope_} ({source})",
        UNIQUE_FIX,
    )


def test_eks_cluster_names_unique_per_region() -> None:
    g = graph(
        *providers(),
        eks("a", "c"),
        eks("b", "c", AWS_WEST),  # another region: fine
        eks("d", "c"),
        eks("e", "other"),
        eks("f", "c", None),
        eks("h", "c", None),
    )
    assert list(check_names(g)) == [
        not_unique(EKS_TYPE, "d", "name 'c'", "a", {"region": "us-east-1"}, EKS_SOURCE),
        not_unique(EKS_TYPE, "h", "name 'c'", "f", {"region": ""}, EKS_SOURCE),
    ]


def test_gke_node_pool_names_unique_per_cluster() -> None:
    source = "GKE API nodePools.create: same rule as cluster names, unique per cluster"
    g = graph(
        res(GKE_TYPE, "gke", {"name": "c", "project": "p", "location": "l"}),
        res(GKE_TYPE, "gke2", {"name": "c2", "project": "p", "location": "l"}),
        res(POOL, "a", {"name": "gpu", "cluster": "c"}),
        res(POOL, "b", {"name": "gpu", "cluster": "projects/p/locations/l/clusters/c"}),  # the same cluster, by ID
        res(POOL, "d", {"name": "gpu", "cluster": "c2"}),
        res(POOL, "e", {"name": "gpu", "cluster": "outside"}),
        res(POOL, "f", {"name": "gpu", "cluster": "outside"}),
    )
    assert list(check_names(g)) == [
        not_unique(POOL, "b", "name 'gpu'", "a", {"cluster": urn(GKE_TYPE, "gke")}, source),
        not_unique(POOL, "f", "name 'gpu'", "e", {"cluster": "outside"}, source),
    ]


def invalid(type_: str, name: str, what: str, max_len: int, pattern: str, source: str) -> Violation:
    return Violation(
        "global-name-valid",
        urn(type_, name),
        f"{what} is not a valid name: 1-{max_len} characters matching {pattern} ({source})",
        INVALID_FIX,
    )


def test_managed_node_group_names() -> None:
    cluster = eks("eks", "c")
    ok_prefix = "p" * 37  # 37 + 26 = 63
    long_prefix = "p" * 38  # 38 + 26 = 64
    ok_logical = "x" * 55  # 55 + `-` + 7 = 63
    long_logical = "y" * 56
    g = graph(
        *providers(),
        cluster,
        res(MNG, "given", {"nodeGroupName": "gpu", "cluster": "c"}),
        res(MNG, "prefixed-ok", {"nodeGroupNamePrefix": ok_prefix, "cluster": "c"}),
        res(MNG, "prefixed-long", {"nodeGroupNamePrefix": long_prefix, "cluster": "c"}),
        res(MNG, ok_logical, {"cluster": "c"}),
        res(MNG, long_logical, {"cluster": "c"}),
        res(MNG, "bad", {"nodeGroupName": "-gpu", "cluster": "c"}),
        res(MNG, "again", {"nodeGroupName": "gpu", "cluster": "c"}),
    )
    assert list(check_names(g)) == [
        invalid(
            MNG, "prefixed-long", f"nodeGroupNamePrefix {long_prefix!r} + 26 characters", 63, EKS_PATTERN, MNG_SOURCE
        ),
        invalid(MNG, long_logical, f"autoname {long_logical!r}-<7 hex>", 63, EKS_PATTERN, MNG_SOURCE),
        invalid(MNG, "bad", "nodeGroupName '-gpu'", 63, EKS_PATTERN, MNG_SOURCE),
        not_unique(MNG, "again", "nodeGroupName 'gpu'", "given", {"cluster": cluster.urn}, MNG_SOURCE),
    ]


def test_names_skip_unnamed_resources_without_autoname() -> None:
    """A GKE cluster or router without `name` gets no autoname check (GlobalName.autoname is off), and the
    rule goes on to the next resource."""
    router_source = "terraform-provider-google compute router: RFC1035 name, unique per project and region"
    g = graph(
        res(GKE_TYPE, "Not_A_Name", {"project": "p", "location": "l"}),
        res("gcp:compute/router:Router", "Bad_Router", {"project": "p"}),
        res("gcp:compute/router:Router", "r", {"name": "Bad_Router", "project": "p"}),
    )
    assert list(check_names(g)) == [
        invalid(
            "gcp:compute/router:Router",
            "r",
            "name 'Bad_Router'",
            63,
            r"^[a-z](?:[-a-z0-9]*[a-z0-9])?$",
            router_source,
        )
    ]


# --- Node security groups. A launch template that names security groups replaces the cluster security group EKS
# would add (EKS user guide launch-templates, "Security groups"); only the EKS-created cluster security group lets
# nodes and the control plane reach each other (EKS user guide sec-group-reqs); pulumi-eks's own cluster security
# group admits no node (pulumi-eks securitygroup.ts), and a group whose rules only name itself admits nothing else. ---

SG = "aws:ec2/securityGroup:SecurityGroup"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
SELF = {"self": True, "fromPort": 0, "toPort": 0, "protocol": "-1"}


def sg(
    name: str, ingress: list[dict[str, Any]] | None = None, egress: list[dict[str, Any]] | None = None
) -> PlannedResource:
    inputs: dict[str, Any] = {}
    if ingress is not None:
        inputs["ingress"] = ingress
    if egress is not None:
        inputs["egress"] = egress
    return res(SG, name, inputs, provider=AWS)


def sg_id(name: str) -> str:
    return ec2_id(SG, name)


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ([sg("both", [SELF], [SELF])], {"both": "self-only"}),
        ([sg("in", [SELF])], {"in": "self-only"}),
        ([sg("out", None, [SELF])], {"out": "self-only"}),
        ([sg("none")], {}),
        ([sg("empty", [], [])], {}),
        ([sg("cidr", [{**SELF, "cidrBlocks": ["10.0.0.0/8"]}], [SELF])], {}),
        ([sg("mixed", [SELF, {"cidrBlocks": ["0.0.0.0/0"]}])], {}),
        ([sg("notself", [{"self": False}])], {}),
        # a group other rules add to may admit anything
        ([sg("ruled", [SELF], [SELF]), res(SG_RULE, "r", {"securityGroupId": sg_id("ruled")})], {}),
        (
            [sg("a", [SELF]), sg("b", [SELF]), res(SG_RULE, "r", {"securityGroupId": sg_id("a")})],
            {"b": "self-only"},
        ),
    ],
)
def test_security_group_kinds_of_plan_groups(groups: list[PlannedResource], expected: dict[str, str]) -> None:
    assert security_group_kinds(graph(*groups)) == {sg_id(k): v for k, v in expected.items()}


def test_security_group_kinds_of_eks_clusters() -> None:
    g = graph(eks("named", "c"), res(EKS_TYPE, "logical", custom=False))
    assert security_group_kinds(g) == {
        eks_cluster_security_group("c"): "eks-cluster",
        pulumi_eks_cluster_security_group("c"): "pulumi-eks-cluster",
        eks_cluster_security_group("logical"): "eks-cluster",
        pulumi_eks_cluster_security_group("logical"): "pulumi-eks-cluster",
    }


def lt(name: str, ids: list[str], nic_ids: list[str] | None = None) -> PlannedResource:
    inputs: dict[str, Any] = {"vpcSecurityGroupIds": ids}
    if nic_ids is not None:
        inputs["networkInterfaces"] = [{"securityGroups": nic_ids}]
    return res(LT, name, inputs, provider=AWS)


PULUMI_EKS_WHY = (
    "pulumi/pulumi-eks nodejs/eks/cluster/securitygroup.ts createClusterSecurityGroup: egress only, and "
    "443 in from pulumi-eks's own node security group; nothing admits a node that carries it"
)
SELF_WHY = "a security group whose rules only name itself (an EFA group) admits nothing else"


def test_node_security_groups() -> None:
    pulumi_sg, eks_sg, efa = pulumi_eks_cluster_security_group("c"), eks_cluster_security_group("c"), sg_id("efa")
    g = graph(
        eks("eks", "c"),
        sg("efa", [SELF], [SELF]),
        lt("none", []),  # EKS adds its cluster security group
        lt("reach", [pulumi_sg, eks_sg]),
        lt("unknown", [pulumi_sg, "sg-0123456789abcdef0"]),  # a group the plan cannot read
        lt("pulumi-only", [pulumi_sg]),
        lt("efa-nic", [], [efa, pulumi_sg]),
        lt("efa-reach", [efa], [eks_sg]),
    )
    fix = "add the cluster security group EKS created (eksCluster.vpcConfig.clusterSecurityGroupId)"
    head = "so EKS adds no cluster security group, and none of them lets kubelet and the control plane reach each other"
    first, second = sorted([pulumi_sg, efa])
    why = {pulumi_sg: f"{pulumi_sg} (pulumi-eks-cluster: {PULUMI_EKS_WHY})", efa: f"{efa} (self-only: {SELF_WHY})"}
    assert list(check_node_security_groups(g)) == [
        Violation(
            "nodes-reach-control-plane",
            urn(LT, "pulumi-only"),
            f"the launch template names security groups {pulumi_sg}, {head}: {why[pulumi_sg]}",
            fix,
        ),
        Violation(
            "nodes-reach-control-plane",
            urn(LT, "efa-nic"),
            f"the launch template names security groups {first}, {second}, {head}: {why[first]}; {why[second]}",
            fix,
        ),
    ]


# --- CRDs. An API group outside the built-in ones (kubernetes/kubernetes pkg/controlplane) is served only once
# its CRD exists; Helm skips a chart's crds/ folder with --skip-crds (Helm docs, "Custom Resource Definitions");
# kube-prometheus-stack installs the monitoring.coreos.com CRDs behind `crds.enabled` (default true). ---

SM = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


@pytest.mark.parametrize(
    ("type_", "group"),
    [
        (SM, "monitoring.coreos.com"),
        ("kubernetes:core/v1:ConfigMap", "core"),
        ("kubernetes:karpenter.sh/v1:NodePool", "karpenter.sh"),
        ("kubernetes:apps/v1:Deployment", "apps"),
    ],
)
def test_group(type_: str, group: str) -> None:
    assert group_of(type_) == group


@pytest.mark.parametrize(
    ("resource", "groups"),
    [
        (rel("kps", {"chart": "kube-prometheus-stack"}), ["monitoring.coreos.com"]),
        (
            rel("kps", {"chart": "kube-prometheus-stack", "values": {"crds": {"enabled": True}}}),
            ["monitoring.coreos.com"],
        ),
        (rel("kps", {"chart": "kube-prometheus-stack", "values": {"crds": {"enabled": False}}}), []),
        (rel("kps", {"chart": "kube-prometheus-stack", "skipCrds": True}), []),
        (rel("kps", {"chart": "kube-prometheus-stack", "skipCrds": False}), ["monitoring.coreos.com"]),
        (rel("k", {"chart": "oci://public.ecr.aws/karpenter/karpenter"}), ["karpenter.sh", "karpenter.k8s.aws"]),
        (rel("k", {"chart": "karpenter", "skipCrds": True}), []),
        (rel("k", {"chart": "karpenter-crd", "skipCrds": True}), ["karpenter.sh", "karpenter.k8s.aws"]),  # templates
        (rel("keda", {"chart": "keda", "skipCrds": True}), ["keda.sh"]),  # templates, behind crds.install
        (rel("keda", {"chart": "keda", "values": {"crds": {"install": False}}}), []),
        (rel("other", {"chart": "nginx"}), []),
        (res(CRD, "crd", {"spec": {"group": "example.com"}}, provider=K8S), ["example.com"]),
        (res(CM, "cm", {"spec": {"group": "example.com"}}, provider=K8S), []),
        (res(EKS_TYPE, "auto", {"autoMode": {"enabled": True}}, custom=False), ["karpenter.sh", "eks.amazonaws.com"]),
        (res(EKS_TYPE, "plain", {"autoMode": {"enabled": False}}, custom=False), []),
    ],
)
def test_crd_installers(resource: PlannedResource, groups: list[str]) -> None:
    assert crd_installers(graph(resource)) == {grp: [resource.urn] for grp in groups}


def test_crd_installers_collects_every_installer() -> None:
    a = res(CRD, "a", {"spec": {"group": "example.com"}}, provider=K8S)
    b = res(CRD, "b", {"spec": {"group": "example.com"}}, provider=K8S)
    assert crd_installers(graph(a, b)) == {"example.com": [a.urn, b.urn]}


def crd_violation(resource: str, msg: str, fix: str) -> Violation:
    return Violation("custom-resource-waits-for-crd", resource, msg, fix)


def test_crds_missing_and_not_awaited() -> None:
    crds_a = rel("crds-a", {"chart": "prometheus-operator-crds"})
    crds_b = rel("crds-b", {"chart": "prometheus-operator-crds"})
    waits = res(SM, "waits", provider=K8S, deps=(crds_a.urn,))
    early = res(SM, "early", provider=K8S)
    pool = res("kubernetes:karpenter.sh/v1:NodePool", "pool", provider=K8S)
    gpu_op = rel("gpu-op", {"chart": "gpu-operator"})
    gpu_op_off = rel(
        "gpu-op-off", {"chart": "gpu-operator", "values": {"dcgmExporter": {"serviceMonitor": {"enabled": False}}}}
    )
    g = graph(crds_a, crds_b, waits, early, pool, gpu_op, gpu_op_off, res(CM, "cm", provider=K8S))
    from_both = f"comes from {crds_a.urn}, {crds_b.urn}, which it does not wait for"
    assert list(check_crds(g)) == [
        crd_violation(
            early.urn,
            f"ServiceMonitor is a custom resource; its CRD (monitoring.coreos.com) {from_both}",
            "add the CRD installer to depends_on",
        ),
        crd_violation(
            pool.urn,
            "NodePool is a custom resource; nothing in this stack installs the karpenter.sh CRDs, so the API server "
            "rejects it",
            "install the karpenter.sh CRDs in the stack, or state that the cluster already has them",
        ),
        crd_violation(
            gpu_op.urn,
            "values `dcgmExporter.serviceMonitor.enabled` is on (gpu-operator v26.7.0 values.yaml: "
            f"dcgmExporter.serviceMonitor.enabled defaults to true); its CRD (monitoring.coreos.com) {from_both}",
            "add the CRD installer to depends_on",
        ),
    ]
    # groups the cluster already has need nothing; the rule goes on to the next resource
    assert [v.urn for v in check_crds(g, existing=("monitoring.coreos.com",))] == [pool.urn]


def test_needs() -> None:
    sm = res(SM, "sm", provider=K8S)
    dcgm = rel("dcgm", {"chart": "dcgm-exporter"})
    g = graph(sm, dcgm, res(CM, "cm", provider=K8S), res(SM, "component", custom=False), rel("x", {"chart": "nginx"}))
    assert [(r.urn, grp, why) for r, grp, why in needs(g)] == [
        (sm.urn, "monitoring.coreos.com", "ServiceMonitor is a custom resource"),
        (
            dcgm.urn,
            "monitoring.coreos.com",
            "values `serviceMonitor.enabled` is on (dcgm-exporter 4.8.2 values.yaml: serviceMonitor.enabled defaults "
            "to true)",
        ),
    ]


@pytest.mark.parametrize(("value", "groups"), [("existing", {"monitoring.coreos.com"}), ("install", set())])
def test_stated_crds(value: str, groups: set[str]) -> None:
    """`monitoring.prometheusOperatorCrds: existing` states the prometheus-operator CRDs (config/monitoring.py)."""
    stub = SimpleNamespace(monitoring=SimpleNamespace(prometheusOperatorCrds=value), fleet=None, fleetStack=None)
    assert stated_crds(cast(StackConfig, stub)) == frozenset(groups)


# --- Node shapes. Karpenter NodePool (karpenter.sh/v1): `spec.template.spec.requirements` (In / NotIn / Exists /
# DoesNotExist / Gt / Lt) and `spec.template.metadata.labels` land on the node, Karpenter adds
# `karpenter.sh/nodepool=<name>` and the well-known `node.kubernetes.io/instance-type` and `kubernetes.io/arch`
# (karpenter.sh docs, NodePools / Well-Known Labels); EKS Auto Mode nodes (nodeClassRef group eks.amazonaws.com)
# carry `eks.amazonaws.com/compute-type=auto` (EKS user guide, Auto Mode). ---

ANY = sched.ANY
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


def fs(*values: str) -> frozenset[str]:
    return frozenset(values)


@pytest.mark.parametrize(
    ("reqs", "expected"),
    [
        ([{"key": "a", "operator": "In", "values": ["x", 1]}], {"a": fs("x", "1")}),
        ([{"key": "a", "operator": "In"}], {"a": fs()}),
        ([{"key": "a", "operator": "Exists"}], {"a": ANY}),
        ([{"key": "a", "operator": "NotIn", "values": ["x"]}], {"a": ANY}),
        ([{"key": "a", "operator": "Gt", "values": ["4"]}], {"a": ANY}),
        ([{"key": "a", "operator": "Lt", "values": ["4"]}], {"a": ANY}),
        ([{"key": "a", "operator": "DoesNotExist"}], {}),
        ([{"key": "a", "operator": "in", "values": ["x"]}], {}),  # operators are case-sensitive
        ([], {}),
        (None, {}),
        (
            [{"key": "a", "operator": "In", "values": ["x"]}, {"key": "b", "operator": "Exists"}],
            {"a": fs("x"), "b": ANY},
        ),
    ],
)
def test_karpenter_requirements(reqs: list[dict[str, Any]], expected: dict[str, frozenset[str]]) -> None:
    assert sched._requirements(reqs) == expected


def test_karpenter_pool_shape() -> None:
    pool = res(
        NODEPOOL,
        "gpu-pool",
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"team": "ml", "tier": 1, "karpenter.sh/nodepool": "spoofed"}},
                    "spec": {
                        "requirements": [
                            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6", "g6e"]},
                            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                            {"key": "team", "operator": "In", "values": ["other"]},
                        ],
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "taints": [
                            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                            {"key": "dedicated", "effect": "NoExecute"},
                        ],
                    },
                }
            },
        },
        provider=K8S,
    )
    assert sched._karpenter_pool(pool) == [
        sched.NodeShape(
            pool.urn,
            {
                "karpenter.k8s.aws/instance-family": fs("g6", "g6e"),
                "kubernetes.io/arch": fs("amd64"),
                "team": fs("ml"),  # the template's labels win over its requirements
                "tier": fs("1"),
                "karpenter.sh/nodepool": fs("gpu"),
                "node.kubernetes.io/instance-type": ANY,
                # Karpenter docs, NodePools: capacity-type left open defaults to on-demand
                "karpenter.sh/capacity-type": fs("on-demand"),
            },
            (("nvidia.com/gpu", "true", "NoSchedule"), ("dedicated", "", "NoExecute")),
        )
    ]


def test_karpenter_pool_shape_auto_mode_and_autonamed() -> None:
    pool = res(
        NODEPOOL,
        "auto",
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "eks.amazonaws.com", "name": "default"}}}}},
        provider=K8S,
    )
    assert sched._karpenter_pool(pool) == [
        sched.NodeShape(
            pool.urn,
            {
                "karpenter.sh/nodepool": fs(kubernetes_name(None, "auto")),
                "node.kubernetes.io/instance-type": ANY,
                "kubernetes.io/arch": ANY,
                "karpenter.sh/capacity-type": fs("on-demand"),
                "eks.amazonaws.com/compute-type": fs("auto"),
            },
        )
    ]
    bare = res(NODEPOOL, "bare", {"metadata": {"name": "b"}}, provider=K8S)
    assert sched._karpenter_pool(bare) == [
        sched.NodeShape(
            bare.urn,
            {
                "karpenter.sh/nodepool": fs("b"),
                "node.kubernetes.io/instance-type": ANY,
                "kubernetes.io/arch": ANY,
                "karpenter.sh/capacity-type": fs("on-demand"),
            },
        )
    ]


# EKS AMI types (botocore eks service-2.json AMITypes): the architecture is in the name.
@pytest.mark.parametrize(
    ("ami_type", "arch"),
    [
        ("AL2023_x86_64_NVIDIA", fs("amd64")),
        ("AL2023_x86_64_STANDARD", fs("amd64")),
        ("AL2_x86_64_GPU", fs("amd64")),
        ("BOTTLEROCKET_x86_64_NVIDIA", fs("amd64")),
        ("WINDOWS_CORE_2019_x86_64", fs("amd64")),
        ("AL2023_ARM_64_STANDARD", fs("arm64")),
        ("AL2023_ARM_64_NVIDIA", fs("arm64")),
        ("BOTTLEROCKET_ARM_64_NVIDIA", fs("arm64")),
        ("AL2_ARM_64", fs("arm64")),
        ("CUSTOM", ANY),
        ("", ANY),
    ],
)
def test_ami_arch(ami_type: str, arch: frozenset[str]) -> None:
    assert sched._ami_arch(ami_type) == arch


# EKS managed node groups label their nodes `eks.amazonaws.com/nodegroup` and `eks.amazonaws.com/capacityType`
# (ON_DEMAND / SPOT) (EKS user guide, managed node groups); taint effects are NO_SCHEDULE / NO_EXECUTE /
# PREFER_NO_SCHEDULE in the EKS API (botocore TaintEffect), NoSchedule / ... on the node.
def test_managed_node_group_shape() -> None:
    group = res(
        MNG,
        "mng",
        {
            "nodeGroupName": "gpu",
            "labels": {"role": "gpu", "n": 2, "eks.amazonaws.com/nodegroup": "spoofed"},
            "capacityType": "SPOT",
            "instanceTypes": ["g6.xlarge", "g6.2xlarge"],
            "amiType": "AL2023_x86_64_NVIDIA",
            "taints": [
                {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
                {"key": "k", "effect": "NO_EXECUTE"},
                {"key": "p", "value": "v", "effect": "PREFER_NO_SCHEDULE"},
            ],
        },
    )
    assert sched._managed_node_group(group) == [
        sched.NodeShape(
            group.urn,
            {
                "role": fs("gpu"),
                "n": fs("2"),
                "eks.amazonaws.com/nodegroup": fs("gpu"),
                "eks.amazonaws.com/capacityType": fs("SPOT"),
                "node.kubernetes.io/instance-type": fs("g6.xlarge", "g6.2xlarge"),
                "kubernetes.io/arch": fs("amd64"),
            },
            (("nvidia.com/gpu", "true", "NoSchedule"), ("k", "", "NoExecute"), ("p", "v", "PreferNoSchedule")),
        )
    ]


@pytest.mark.parametrize("instance_types", [None, []])
def test_managed_node_group_shape_defaults(instance_types: list[str] | None) -> None:
    inputs: dict[str, Any] = {"nodeGroupNamePrefix": "gpu-", "amiType": "AL2023_ARM_64_STANDARD"}
    if instance_types is not None:
        inputs["instanceTypes"] = instance_types
    group = res(NODE_GROUP, "ng", inputs)
    assert sched._managed_node_group(group) == [
        sched.NodeShape(
            group.urn,
            {
                "eks.amazonaws.com/nodegroup": ANY,  # completed by the provider at create
                "eks.amazonaws.com/capacityType": fs("ON_DEMAND"),
                "node.kubernetes.io/instance-type": ANY,
                "kubernetes.io/arch": fs("arm64"),
            },
        )
    ]


# GKE GPU node labels (GKE docs, "About GPUs in GKE" / GPU sharing / "Install NVIDIA GPU drivers"):
# `cloud.google.com/gke-accelerator=<type>`, `gke-gpu-sharing-strategy=time-sharing|mps`,
# `gke-max-shared-clients-per-gpu`, `gke-gpu-partition-size` (MIG), `gke-gpu-driver-version=default|latest`.
ACC = "cloud.google.com/gke-accelerator"


@pytest.mark.parametrize(
    ("accelerators", "expected"),
    [
        ([], {}),
        ([{"type": "nvidia-l4", "count": 1}], {ACC: "nvidia-l4"}),
        (
            [
                {
                    "type": "nvidia-l4",
                    "gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
                }
            ],
            {
                ACC: "nvidia-l4",
                "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
                "cloud.google.com/gke-max-shared-clients-per-gpu": "4",
            },
        ),
        (
            [{"type": "nvidia-l4", "gpuSharingConfig": {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 2}}],
            {
                ACC: "nvidia-l4",
                "cloud.google.com/gke-gpu-sharing-strategy": "mps",
                "cloud.google.com/gke-max-shared-clients-per-gpu": "2",
            },
        ),
        (
            [{"type": "nvidia-a100-80gb", "gpuPartitionSize": "1g.10gb"}],
            {ACC: "nvidia-a100-80gb", "cloud.google.com/gke-gpu-partition-size": "1g.10gb"},
        ),
        (
            [{"type": "nvidia-l4", "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"}}],
            {ACC: "nvidia-l4", "cloud.google.com/gke-gpu-driver-version": "default"},
        ),
        (
            [{"type": "nvidia-l4", "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}],
            {ACC: "nvidia-l4", "cloud.google.com/gke-gpu-driver-version": "latest"},
        ),
        (
            [{"type": "nvidia-l4", "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"}}],
            {ACC: "nvidia-l4"},
        ),
        ([{"type": "nvidia-l4", "gpuDriverInstallationConfig": {}}], {ACC: "nvidia-l4"}),
        ([{"type": "nvidia-l4", "gpuSharingConfig": {}, "gpuPartitionSize": ""}], {ACC: "nvidia-l4"}),
        ([{"type": "nvidia-l4"}, {"type": "nvidia-tesla-t4"}], {ACC: "nvidia-l4"}),  # the first config
    ],
)
def test_gke_accelerator_labels(accelerators: list[dict[str, Any]], expected: dict[str, str]) -> None:
    assert sched.gke_accelerator_labels(accelerators) == expected


# GKE node pools label nodes `cloud.google.com/gke-nodepool=<pool>`, spot nodes `cloud.google.com/gke-spot=true`
# (GKE docs, Spot VMs); taint effects NO_SCHEDULE / ... in the API; Arm machine series (C4A, T2A) are arm64.
def test_gke_node_pool_shape() -> None:
    pool = res(
        POOL,
        "np",
        {
            "name": "gpu-pool",
            "nodeConfig": {
                "machineType": "g2-standard-8",
                "labels": {"role": "gpu", "n": 1},
                "guestAccelerators": [
                    {"type": "nvidia-l4", "count": 1, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
                ],
                "spot": True,
                "taints": [
                    {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
                    {"key": "k", "effect": "NO_EXECUTE"},
                    {"key": "p", "value": "v", "effect": "PREFER_NO_SCHEDULE"},
                ],
            },
        },
    )
    assert sched._gke_node_pool(pool) == [
        sched.NodeShape(
            pool.urn,
            {
                "role": fs("gpu"),
                "n": fs("1"),
                "cloud.google.com/gke-nodepool": fs("gpu-pool"),
                "node.kubernetes.io/instance-type": fs("g2-standard-8"),
                "kubernetes.io/arch": fs("amd64"),
                ACC: fs("nvidia-l4"),
                "cloud.google.com/gke-gpu-driver-version": fs("latest"),
                "cloud.google.com/gke-spot": fs("true"),
            },
            (("nvidia.com/gpu", "present", "NoSchedule"), ("k", "", "NoExecute"), ("p", "v", "PreferNoSchedule")),
        )
    ]


@pytest.mark.parametrize(
    ("inputs", "labels"),
    [
        (
            {},
            {
                "cloud.google.com/gke-nodepool": fs("np"),
                "node.kubernetes.io/instance-type": ANY,
                "kubernetes.io/arch": fs("amd64"),
            },
        ),
        (
            {"nodeConfig": {"machineType": "c4a-standard-8", "spot": False}},
            {
                "cloud.google.com/gke-nodepool": fs("np"),
                "node.kubernetes.io/instance-type": fs("c4a-standard-8"),
                "kubernetes.io/arch": fs("arm64"),
            },
        ),
        (
            {"name": "arm", "nodeConfig": {"machineType": "t2a-standard-4", "labels": {"kubernetes.io/arch": "x"}}},
            {
                "cloud.google.com/gke-nodepool": fs("arm"),
                "node.kubernetes.io/instance-type": fs("t2a-standard-4"),
                "kubernetes.io/arch": fs("arm64"),
            },
        ),
    ],
)
def test_gke_node_pool_shape_defaults(inputs: dict[str, Any], labels: dict[str, frozenset[str]]) -> None:
    pool = res(POOL, "np", inputs)
    assert sched._gke_node_pool(pool) == [sched.NodeShape(pool.urn, labels)]


# --- DaemonSets: the DaemonSet controller creates a pod only on nodes whose NoSchedule / NoExecute taints the
# pod tolerates (Kubernetes docs, DaemonSet "Taints and tolerations"); PreferNoSchedule does not keep it off. ---

DS = "kubernetes:apps/v1:DaemonSet"


def test_daemonsets_cover_their_nodes() -> None:
    cluster = res(GKE_TYPE, "gke", {"name": "c", "project": "p", "location": "l"})
    taints = [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "dedicated", "effect": "NO_EXECUTE"},
        {"key": "soft", "value": "x", "effect": "PREFER_NO_SCHEDULE"},
    ]

    def pool(name: str, pool_taints: list[dict[str, str]]) -> PlannedResource:
        return res(POOL, name, {"name": name, "cluster": "c", "nodeConfig": {"taints": pool_taints}})

    def ds(name: str, selector: dict[str, str], tolerations: list[dict[str, str]]) -> PlannedResource:
        spec = {"nodeSelector": selector, "tolerations": tolerations}
        return res(DS, name, {"spec": {"template": {"spec": spec}}}, provider=K8S)

    gpu = {"cloud.google.com/gke-nodepool": "gpu"}
    g = graph(
        cluster,
        res("pulumi:providers:kubernetes", "k8s", deps=(cluster.urn,)),
        pool("gpu", taints),
        pool("cpu", []),
        ds("exporter", gpu, []),
        ds("half", gpu, [{"key": "nvidia.com/gpu", "operator": "Exists"}]),
        ds("all", gpu, [{"operator": "Exists"}]),
        ds("cpu-only", {"cloud.google.com/gke-nodepool": "cpu"}, []),
        ds("everywhere", {}, [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]),
    )
    fix = "tolerate every taint of the nodes the DaemonSet selects (or stop selecting them)"

    def v(name: str, missing: str) -> Violation:
        return Violation(
            "daemonset-covers-its-nodes",
            urn(DS, name),
            f"{name} selects gpu but does not tolerate its taints {missing}: those nodes get no pod",
            fix,
        )

    assert list(check_daemonsets(g)) == [
        v("exporter", "nvidia.com/gpu=present:NoSchedule, dedicated=:NoExecute"),
        v("half", "dedicated=:NoExecute"),
        v("everywhere", "nvidia.com/gpu=present:NoSchedule"),
    ]


def test_daemonset_on_eks_auto_mode_system_pool() -> None:
    """EKS Auto Mode's built-in `system` NodePool is tainted CriticalAddonsOnly:NoSchedule (EKS user guide,
    "Built-in NodePools"); the shape has no URN, so the message names the pool by its description."""
    cluster = res(EKS_TYPE, "eks", {"name": "c", "autoMode": {"enabled": True}}, custom=False)
    spec = {"nodeSelector": {"karpenter.sh/nodepool": "system"}}
    g = graph(
        cluster,
        res("pulumi:providers:kubernetes", "k8s", deps=(cluster.urn,)),
        res(DS, "agent", {"spec": {"template": {"spec": spec}}}, provider=K8S),
    )
    assert list(check_daemonsets(g)) == [
        Violation(
            "daemonset-covers-its-nodes",
            urn(DS, "agent"),
            "agent selects EKS Auto Mode built-in NodePool system but does not tolerate its taints "
            "CriticalAddonsOnly=:NoSchedule: those nodes get no pod",
            "tolerate every taint of the nodes the DaemonSet selects (or stop selecting them)",
        )
    ]


# --- Defects these examples found (fixed): cluster-scoped names, mixed-source rules, capacity type. ---


def test_kubernetes_names_of_cluster_scoped_kinds_ignore_namespace() -> None:
    # The API server clears metadata.namespace of a cluster-scoped object on create (k8s.io/apiserver
    # pkg/registry/rest/create.go BeforeCreate), so both are the one ClusterRole `x`.
    role = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
    g = graph(
        res(role, "a", {"metadata": {"name": "x", "namespace": "ns"}}, provider=K8S),
        res(role, "b", {"metadata": {"name": "x"}}, provider=K8S),
    )
    assert [v.rule for v in check_kubernetes_names(g)] == ["kubernetes-name-unique"]


@pytest.mark.parametrize(
    "rule",
    [
        {**SELF, "ipv6CidrBlocks": ["::/0"]},
        {**SELF, "securityGroups": ["sg-0123456789abcdef0"]},
        {**SELF, "prefixListIds": ["pl-0123456789abcdef0"]},
    ],
)
def test_security_group_with_other_sources_is_not_self_only(rule: dict[str, Any]) -> None:
    # EC2 ingress/egress rules: `self`, cidrBlocks, ipv6CidrBlocks, prefixListIds and securityGroups each add
    # sources (terraform-provider-aws aws_security_group ingress/egress blocks)
    assert security_group_kinds(graph(sg("g", [rule], [rule]))) == {}


def test_karpenter_nodes_carry_capacity_type() -> None:
    # karpenter.sh docs, Well-Known Labels: every node Karpenter launches carries karpenter.sh/capacity-type
    pool = res(NODEPOOL, "p", {"metadata": {"name": "p"}}, provider=K8S)
    assert "karpenter.sh/capacity-type" in sched._karpenter_pool(pool)[0].labels
