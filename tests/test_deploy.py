"""The deploy simulator: each readiness rule rejects a hand-made graph that breaks it and accepts the
same graph once fixed; the plan JSON carries what the engine needs (dependsOn, provider)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from gpuplane.plan import Plan, PlannedResource
from gpuplane.plan.deploy import RULES, Violation, check
from gpuplane.plan.deploy.graph import DeployGraph
from gpuplane.plan.mocks_aws import ec2_id, eks_cluster_security_group, pulumi_eks_cluster_security_group
from gpuplane.plan.render import to_dot, to_json, to_mermaid

from .multikueue_cases import multikueue_cases
from .storage_cases import storage_cases

P = "urn:pulumi:s::p::"
K8S = f"{P}pulumi:providers:kubernetes::k8s"
AWS = f"{P}pulumi:providers:aws::aws"
GCP = f"{P}pulumi:providers:gcp::gcp"


def res(
    type_: str,
    name: str,
    inputs: dict[str, Any] | None = None,
    deps: tuple[str, ...] = (),
    provider: str | None = None,
    parent: str | None = None,
    custom: bool = True,
    timeouts: dict[str, str] | None = None,
) -> PlannedResource:
    return PlannedResource(
        urn=f"{P}{type_}::{name}",
        type=type_,
        name=name,
        parent=parent,
        custom=custom,
        inputs=inputs or {},
        provider=f"{provider}::id" if provider else None,
        dependencies=deps,
        custom_timeouts=timeouts or {},
    )


def urn(type_: str, name: str) -> str:
    return f"{P}{type_}::{name}"


def plan(*resources: PlannedResource) -> Plan:
    return Plan(project="p", stack="s", resources=list(resources))


def rules_of(violations: list[Violation]) -> set[str]:
    return {v.rule for v in violations}


EKS = urn("eks:index:Cluster", "c-eks")
GKE = urn("gcp:container/cluster:Cluster", "c")
CRD_RELEASE = urn("kubernetes:helm.sh/v3:Release", "crds")


def eks_base(provider_deps: tuple[str, ...] = (EKS,)) -> list[PlannedResource]:
    return [
        res("pulumi:providers:aws", "aws", {"region": "us-east-1"}, custom=True),
        res("eks:index:Cluster", "c-eks", {"name": "c"}, custom=False),
        res("pulumi:providers:kubernetes", "k8s", {}, deps=provider_deps),
    ]


def gke_base() -> list[PlannedResource]:
    return [
        res("pulumi:providers:gcp", "gcp", {"project": "p"}),
        res(
            "gcp:container/cluster:Cluster", "c", {"name": "c", "project": "p", "location": "us-central1"}, provider=GCP
        ),
        res("pulumi:providers:kubernetes", "k8s", {}, deps=(GKE,)),
    ]


SYSTEM_GROUP = res(
    "eks:index:ManagedNodeGroup",
    "system",
    {
        "cluster": EKS,
        "nodeGroupName": "c-system",
        "labels": {"gpuplane.io/role": "system"},
        "instanceTypes": ["m7i.large"],
    },
    deps=(EKS,),
)


def crd_plan(cr_deps: tuple[str, ...]) -> Plan:
    return plan(
        *eks_base(),
        SYSTEM_GROUP,
        res(
            "kubernetes:helm.sh/v3:Release",
            "crds",
            {"chart": "prometheus-operator-crds", "name": "crds", "namespace": "monitoring"},
            provider=K8S,
        ),
        res(
            "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
            "sm",
            {"metadata": {"name": "sm", "namespace": "monitoring"}},
            deps=cr_deps,
            provider=K8S,
        ),
    )


def sched_plan(node_selector: dict[str, str], tolerations: list[dict[str, str]] | None = None) -> Plan:
    return plan(
        *eks_base((EKS, urn("eks:index:ManagedNodeGroup", "system"))),
        SYSTEM_GROUP,
        res(
            "eks:index:ManagedNodeGroup",
            "gpu",
            {
                "cluster": EKS,
                "nodeGroupName": "c-gpu",
                "labels": {"gpuplane.io/pool": "gpu"},
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            },
            deps=(EKS,),
        ),
        res(
            "kubernetes:helm.sh/v3:Release",
            "ca",
            {
                "chart": "cluster-autoscaler",
                "name": "ca",
                "namespace": "kube-system",
                "values": {"nodeSelector": node_selector, **({"tolerations": tolerations} if tolerations else {})},
            },
            provider=K8S,
        ),
    )


def names_plan(second_account_id: str) -> Plan:
    def sa(name: str, account: str) -> PlannedResource:
        return res("gcp:serviceaccount/account:Account", name, {"accountId": account, "project": "p"}, provider=GCP)

    return plan(*gke_base(), sa("a-nodes", "research-gpu-platfo-nodes"), sa("b-nodes", second_account_id))


def default_pool_plan(ignore: tuple[str, ...]) -> Plan:
    """A GKE cluster whose `nodeConfig` configures only the default pool it removes after create."""
    node_config = {"serviceAccount": "n@p.iam.gserviceaccount.com", "oauthScopes": ["cloud-platform"]}
    cluster = res(
        "gcp:container/cluster:Cluster",
        "c",
        {
            "name": "c",
            "project": "p",
            "location": "us-central1",
            "removeDefaultNodePool": True,
            "nodeConfig": node_config,
        },
        provider=GCP,
    )
    pool = res(
        "gcp:container/nodePool:NodePool",
        "system",
        {"cluster": "projects/p/locations/us-central1/clusters/c", "nodeConfig": {**node_config, "machineType": "e2"}},
        deps=(GKE,),
        provider=GCP,
    )
    return plan(*gke_base()[:1], dataclasses.replace(cluster, ignore_changes=ignore), pool)


def scaled_group_plan(ignore_scaling: bool) -> Plan:
    """An EKS managed node group whose desired size cluster-autoscaler owns."""
    group = {"cluster": EKS, "nodeGroupName": "c-gpu", "scalingConfig": {"minSize": 0, "desiredSize": 0, "maxSize": 2}}
    autoscaler = {"chart": "cluster-autoscaler", "name": "ca", "namespace": "kube-system"}
    return plan(
        *eks_base(),
        SYSTEM_GROUP,
        res("eks:index:ManagedNodeGroup", "gpu", {**group, "ignoreScalingChanges": ignore_scaling}, deps=(EKS,)),
        res("kubernetes:helm.sh/v3:Release", "ca", autoscaler, provider=K8S),
    )


def efa_template_plan(first_group: str) -> Plan:
    """An EFA launch template naming `first_group` and a security group that only admits itself."""
    efa_sg = res(
        "aws:ec2/securityGroup:SecurityGroup",
        "efa",
        {"ingress": [{"self": True, "protocol": "-1"}], "egress": [{"self": True, "protocol": "-1"}]},
        provider=AWS,
    )
    nics = [{"deviceIndex": 0, "interfaceType": "efa", "securityGroups": [first_group, ec2_id(efa_sg.type, "efa")]}]
    lt = res("aws:ec2/launchTemplate:LaunchTemplate", "lt", {"networkInterfaces": nics}, provider=AWS)
    return plan(*eks_base(), efa_sg, lt)


def exporter_plan(tolerations: list[dict[str, str]]) -> Plan:
    """dcgm-exporter (a DaemonSet) selecting GPU nodes of two groups, one with an extra taint."""
    sched = sched_plan({"gpuplane.io/role": "system"})
    tainted = res(
        "eks:index:ManagedNodeGroup",
        "gpu2",
        {
            "cluster": EKS,
            "nodeGroupName": "c-gpu2",
            "labels": {"gpuplane.io/pool": "gpu2"},
            "taints": [
                {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
                {"key": "team", "value": "research", "effect": "NO_SCHEDULE"},
            ],
        },
        deps=(EKS,),
    )
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpuplane.io/pool", "operator": "Exists"}]}]
            }
        }
    }
    exporter = res(
        "kubernetes:helm.sh/v3:Release",
        "dcgm",
        {
            "chart": "dcgm-exporter",
            "name": "dcgm",
            "namespace": "gpu",
            "values": {"affinity": affinity, "tolerations": tolerations, "serviceMonitor": {"enabled": False}},
        },
        provider=K8S,
    )
    return plan(*sched.resources, tainted, exporter)


GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def claim_plan(gpu_claims: bool, plugin_on_pool: bool) -> Plan:
    """A Job that claims one GPU (`gpu.nvidia.com`, the Kubernetes DRA API) on a GPU group, beside the NVIDIA DRA
    driver chart (GPU claims on or off; its kubelet plugin selecting the group's nodes or not)."""
    sched = sched_plan({"gpuplane.io/role": "system"})
    labels = {"gpuplane.io/pool": "dra", "nvidia.com/gpu.present": "true"}  # the chart's default affinity wants it
    if plugin_on_pool:
        labels["gpuplane.io/dra-plugin"] = "true"
    group = res(
        "eks:index:ManagedNodeGroup",
        "dra",
        {
            "cluster": EKS,
            "nodeGroupName": "c-dra",
            "labels": labels,
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
        },
        deps=(EKS,),
    )
    driver = res(
        "kubernetes:helm.sh/v3:Release",
        "dra",
        {
            "chart": "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
            "name": "dra",
            "namespace": "dra",
            "values": {
                "resources": {"gpus": {"enabled": gpu_claims}, "computeDomains": {"enabled": False}},
                "kubeletPlugin": {"nodeSelector": {"gpuplane.io/dra-plugin": "true"}, "tolerations": [GPU_TOLERATION]},
            },
        },
        provider=K8S,
    )
    request = {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}
    template = res(
        "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
        "claim",
        {"metadata": {"name": "one-gpu", "namespace": "jobs"}, "spec": {"spec": {"devices": {"requests": [request]}}}},
        provider=K8S,
    )
    pod = {
        "nodeSelector": {"gpuplane.io/pool": "dra"},
        "tolerations": [GPU_TOLERATION],
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "one-gpu"}],
        "containers": [{"name": "main", "image": "cuda", "resources": {"claims": [{"name": "gpus"}]}}],
    }
    job = res(
        "kubernetes:batch/v1:Job",
        "job",
        {"metadata": {"name": "job", "namespace": "jobs"}, "spec": {"template": {"spec": pod}}},
        provider=K8S,
    )
    return plan(*sched.resources, group, driver, template, job)


def job_plan(timeouts: dict[str, str]) -> Plan:
    """A validation-style Job that may run an hour, with the given Pulumi customTimeouts."""
    job = res(
        "kubernetes:batch/v1:Job",
        "check",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "check", "namespace": "default"},
            "spec": {"activeDeadlineSeconds": 3600, "template": {"spec": {"containers": []}}},
        },
        provider=K8S,
    )
    return plan(*eks_base(), SYSTEM_GROUP, dataclasses.replace(job, custom_timeouts=timeouts))


KEDA_RELEASE = urn("kubernetes:helm.sh/v3:Release", "keda")
MONITORING = f"{P}gpuplane:monitoring:GpuMonitoring::monitoring"
SYSTEM = {"nodeSelector": {"gpuplane.io/role": "system"}}


def scaler_plan(
    query: str = 'sum(vllm:num_requests_waiting{namespace="inference", job="inference/vllm-metrics", cluster="c"})',
    target: str = "vllm",
    scrape: bool = True,
) -> Plan:
    """A KEDA ScaledObject on a Deployment, its PodMonitor and the cluster's GpuMonitoring (prometheus-operator)."""
    pods = {"metadata": {"labels": {"app.kubernetes.io/name": "vllm"}}, "spec": {"containers": [], **SYSTEM}}
    deployment = {"metadata": {"name": "vllm", "namespace": "inference"}, "spec": {"template": pods}}
    monitor = {
        "metadata": {"name": "vllm-metrics", "namespace": "inference"},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "vllm"}},
            "podMetricsEndpoints": [
                {"port": "http", "relabelings": [{"targetLabel": "cluster", "replacement": "c", "action": "replace"}]}
            ],
        },
    }
    trigger = {"type": "prometheus", "metadata": {"serverAddress": "http://p:9090", "query": query, "threshold": "4"}}
    scaled = {
        "metadata": {"name": "vllm", "namespace": "inference"},
        "spec": {"scaleTargetRef": {"name": target}, "triggers": [trigger]},
    }
    out = plan(
        *eks_base((EKS, urn("eks:index:ManagedNodeGroup", "system"))),
        SYSTEM_GROUP,
        res(
            "kubernetes:helm.sh/v3:Release", "crds", {"chart": "prometheus-operator-crds", "name": "crds"}, provider=K8S
        ),
        res("gpuplane:monitoring:GpuMonitoring", "monitoring", custom=False),
        res(
            "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
            "gpu-metrics",
            {"metadata": {"name": "gpu-metrics", "namespace": "gpu-operator"}},
            deps=(CRD_RELEASE,),
            provider=K8S,
            parent=MONITORING,
        ),
        res("kubernetes:helm.sh/v3:Release", "keda", {"chart": "keda", "name": "keda", "values": SYSTEM}, provider=K8S),
        res("kubernetes:apps/v1:Deployment", "vllm", deployment, provider=K8S),
        *(
            [res("kubernetes:monitoring.coreos.com/v1:PodMonitor", "pm", monitor, deps=(CRD_RELEASE,), provider=K8S)]
            if scrape
            else []
        ),
        res("kubernetes:keda.sh/v1alpha1:ScaledObject", "so", scaled, deps=(KEDA_RELEASE,), provider=K8S),
    )
    out.registered_outputs[MONITORING] = {"integration": "prometheus-operator"}
    return out


GPU_QUERY = 'avg(DCGM_FI_DEV_GPU_UTIL{{{}="inference", pod=~"vllm-[a-z0-9]+-[a-z0-9]+", cluster="c"}})'

CASES: list[tuple[str, Plan, Plan]] = [
    ("scale-target-exists", scaler_plan(target="vllm-old"), scaler_plan()),
    ("scaler-query-scraped", scaler_plan(scrape=False), scaler_plan()),
    (
        "scaler-query-scraped",  # GKE Managed Prometheus' label on the prometheus-operator path
        scaler_plan(GPU_QUERY.format("exported_namespace")),
        scaler_plan(GPU_QUERY.format("namespace")),
    ),
    (
        "daemonset-covers-its-nodes",
        exporter_plan([GPU_TOLERATION]),
        exporter_plan(
            [GPU_TOLERATION, {"key": "team", "operator": "Equal", "value": "research", "effect": "NoSchedule"}]
        ),
    ),
    (
        "nodes-reach-control-plane",
        efa_template_plan(pulumi_eks_cluster_security_group("c")),
        efa_template_plan(eks_cluster_security_group("c")),
    ),
    ("second-up-no-op", default_pool_plan(()), default_pool_plan(("nodeConfig",))),
    ("claim-device-class-exists", claim_plan(False, True), claim_plan(True, True)),
    ("claim-lands-on-dra-pool", claim_plan(True, False), claim_plan(True, True)),
    ("second-up-no-op", scaled_group_plan(False), scaled_group_plan(True)),
    ("job-awaited-to-its-deadline", job_plan({}), job_plan({"create": "65m", "update": "65m"})),
    (
        "cluster-scoped-waits-for-cluster",
        plan(*eks_base(), res("aws:eks/addon:Addon", "agent", {"clusterName": "c"}, provider=AWS)),
        plan(*eks_base(), res("aws:eks/addon:Addon", "agent", {"clusterName": "c"}, deps=(EKS,), provider=AWS)),
    ),
    (
        "cluster-scoped-waits-for-cluster",
        plan(
            *gke_base(),
            res(
                "gcp:container/nodePool:NodePool",
                "gpu",
                {"cluster": "projects/p/locations/us-central1/clusters/c"},
                provider=GCP,
            ),
        ),
        plan(
            *gke_base(),
            res(
                "gcp:container/nodePool:NodePool",
                "gpu",
                {"cluster": "projects/p/locations/us-central1/clusters/c"},
                deps=(GKE,),
                provider=GCP,
            ),
        ),
    ),
    ("custom-resource-waits-for-crd", crd_plan(()), crd_plan((CRD_RELEASE,))),
    ("workload-schedulable", sched_plan({"gpuplane.io/role": "sytem"}), sched_plan({"gpuplane.io/role": "system"})),
    (
        "workload-schedulable",
        sched_plan({"gpuplane.io/pool": "gpu"}),
        sched_plan(
            {"gpuplane.io/pool": "gpu"}, [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        ),
    ),
    ("global-name-unique", names_plan("research-gpu-platfo-nodes"), names_plan("research-gpu-platf2-nodes")),
    ("global-name-valid", names_plan("research-gpu-platform-us-central1-nodes"), names_plan("rgp-us-central1-nodes")),
    (
        "global-name-valid",
        plan(*eks_base(), res("aws:iam/role:Role", "a" * 57, provider=AWS)),
        plan(*eks_base(), res("aws:iam/role:Role", "a" * 56, provider=AWS)),
    ),
    (
        "kubernetes-name-unique",
        plan(
            *eks_base(),
            *(res("kubernetes:core/v1:Namespace", n, {"metadata": {"name": "gpu"}}, provider=K8S) for n in ("a", "b")),
        ),
        plan(
            *eks_base(),
            *(res("kubernetes:core/v1:Namespace", n, {"metadata": {"name": n}}, provider=K8S) for n in ("a", "b")),
        ),
    ),
    (
        "kubernetes-explicit-provider",
        plan(*eks_base(), res("kubernetes:core/v1:Namespace", "ambient", {"metadata": {"name": "gpu"}})),
        plan(*eks_base(), res("kubernetes:core/v1:Namespace", "ambient", {"metadata": {"name": "gpu"}}, provider=K8S)),
    ),
    *storage_cases(res, plan, eks_base, gke_base, SYSTEM_GROUP),
    *multikueue_cases(res, plan, eks_base, gke_base, SYSTEM_GROUP),
]


@pytest.mark.parametrize(("rule", "broken", "fixed"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_rule_rejects_a_graph_that_breaks_it(rule: str, broken: Plan, fixed: Plan) -> None:
    found = check(broken)
    assert rule in rules_of(found), [str(v) for v in found]
    assert all(v.urn and v.message and v.fix for v in found)
    assert check(fixed) == [], [str(v) for v in check(fixed)]


def test_every_rule_has_a_case() -> None:
    assert {c[0] for c in CASES} == set(RULES)


def test_a_stated_crd_group_counts_as_installed() -> None:
    broken = plan(
        *eks_base(),
        res("kubernetes:monitoring.coreos.com/v1:ServiceMonitor", "sm", {"metadata": {"name": "sm"}}, provider=K8S),
    )
    assert rules_of(check(broken)) == {"custom-resource-waits-for-crd"}
    assert check(broken, existing_crds={"monitoring.coreos.com"}) == []


def test_the_platform_installs_crds_when_its_input_says_so() -> None:
    def automode(on: bool) -> Plan:
        return plan(
            res("eks:index:Cluster", "c-eks", {"name": "c", "autoMode": {"enabled": on}}, custom=False),
            res("pulumi:providers:kubernetes", "k8s", {}, deps=(EKS,)),
            res("kubernetes:karpenter.sh/v1:NodePool", "gpu", {"metadata": {"name": "gpu"}, "spec": {}}, provider=K8S),
        )

    assert check(automode(True)) == []
    assert rules_of(check(automode(False))) == {"custom-resource-waits-for-crd"}


def test_a_chart_value_that_needs_a_crd_is_checked() -> None:
    def operator(service_monitor: bool | None) -> Plan:
        values = {} if service_monitor is None else {"dcgmExporter": {"serviceMonitor": {"enabled": service_monitor}}}
        return plan(
            *eks_base(),
            SYSTEM_GROUP,
            res(
                "kubernetes:helm.sh/v3:Release",
                "op",
                {
                    "chart": "gpu-operator",
                    "name": "op",
                    "namespace": "gpu-operator",
                    "values": {"operator": {"nodeSelector": {"gpuplane.io/role": "system"}}, **values},
                },
                provider=K8S,
            ),
        )

    assert rules_of(check(operator(None))) == {"custom-resource-waits-for-crd"}  # the chart default is on
    assert rules_of(check(operator(True))) == {"custom-resource-waits-for-crd"}
    assert check(operator(False)) == []


def test_depending_on_a_component_waits_for_all_its_children() -> None:
    comp = res("gpuplane:x:Comp", "comp", custom=False)
    child = res("aws:iam/role:Role", "role", parent=comp.urn)
    grandchild = res("aws:iam/rolePolicy:RolePolicy", "pol", parent=child.urn)
    user = res("aws:eks/addon:Addon", "user", deps=(comp.urn,))
    g = DeployGraph(plan(comp, child, grandchild, user))
    assert {child.urn, grandchild.urn, comp.urn} <= g.ancestors(user.urn)
    order = g.order()
    assert order.index(grandchild.urn) < order.index(user.urn)


def test_autopilot_takes_any_pod_and_nap_makes_gpu_nodes() -> None:
    autopilot = plan(
        res("gcp:container/cluster:Cluster", "c", {"name": "c", "enableAutopilot": True}),
        res("pulumi:providers:kubernetes", "k8s", {}, deps=(GKE,)),
        res(
            "kubernetes:apps/v1:Deployment",
            "d",
            {"spec": {"template": {"spec": {"nodeSelector": {"x": "y"}}}}},
            provider=K8S,
        ),
    )
    assert check(autopilot) == []

    def nap(accel: str) -> Plan:
        limits = [{"resourceType": "nvidia-l4", "maximum": 8}]
        gpu_pod = {
            "nodeSelector": {"cloud.google.com/gke-accelerator": accel},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        }
        return plan(
            res(
                "gcp:container/cluster:Cluster",
                "c",
                {"name": "c", "clusterAutoscaling": {"enabled": True, "resourceLimits": limits}},
            ),
            res("pulumi:providers:kubernetes", "k8s", {}, deps=(GKE,)),
            res("kubernetes:batch/v1:Job", "j", {"spec": {"template": {"spec": gpu_pod}}}, provider=K8S),
        )

    assert check(nap("nvidia-l4")) == []
    assert rules_of(check(nap("nvidia-h100-80gb"))) == {"workload-schedulable"}


def test_plan_json_carries_dependencies_and_provider(plan_of: Any) -> None:
    p = plan_of("gcp-standard")
    doc = json.loads(to_json(p))
    assert all(
        {"urn", "type", "name", "parent", "custom", "inputs", "dependsOn", "provider"} <= set(r)
        for r in doc["resources"]
    )
    pools = [r for r in doc["resources"] if r["type"] == "gcp:container/nodePool:NodePool"]
    cluster = next(r for r in doc["resources"] if r["type"] == "gcp:container/cluster:Cluster")
    assert pools and all(cluster["urn"] in r["dependsOn"] for r in pools)
    assert all(r["provider"] and "pulumi:providers:gcp" in r["provider"] for r in pools)
    k8s = [r for r in doc["resources"] if r["type"] == "pulumi:providers:kubernetes"]
    assert k8s and all(cluster["urn"] in r["dependsOn"] for r in k8s)
    # the graph outputs draw the same dependencies
    assert to_dot(p).count("style=dashed") == sum(1 for _ in _edges(doc))
    assert to_mermaid(p).count("-.->") == sum(1 for _ in _edges(doc))


def _edges(doc: dict[str, Any]) -> list[tuple[str, str]]:
    urns = {r["urn"] for r in doc["resources"]}
    out = []
    for r in doc["resources"]:
        deps = set(r["dependsOn"]) | ({r["provider"].rsplit("::", 1)[0]} if r["provider"] else set())
        out += [(d, r["urn"]) for d in deps if d in urns and d != r["parent"]]
    return out


# --- Every shipped stack deploys; names hold for any cluster name the config accepts ----------------------

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gpuplane.config import ConfigError, parse_flat  # noqa: E402
from gpuplane.config.base import DNS_LABEL  # noqa: E402
from gpuplane.plan import load  # noqa: E402
from gpuplane.plan.deploy import stated_crds  # noqa: E402

from .conftest import ROOT, STACKS, examples, stack_with  # noqa: E402


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_passes_the_deploy_simulator(stack: str, plan_of: Any) -> None:
    violations = check(plan_of(stack), stated_crds(parse_flat(load(stack, ROOT).flat_config())))
    assert violations == [], "\n".join(str(v) for v in violations)


NAME_RULES = {"global-name-valid", "global-name-unique", "kubernetes-name-unique"}


@settings(max_examples=examples(4), suppress_health_check=list(HealthCheck))
@given(
    stack=st.sampled_from(["aws-fleet", "gcp-fleet", "aws-karpenter", "gcp-nap"]),
    name=st.from_regex(DNS_LABEL, fullmatch=True),
)
@example(stack="aws-fleet", name="research-gpu-platform")
@example(stack="gcp-fleet", name="research-gpu-platform")
@example(stack="aws-karpenter", name="a" * 40)
@example(stack="gcp-standard", name="z" * 40)
@example(stack="gcp-autopilot", name="b1-" + "c" * 37)
@example(stack="aws-automode", name="d" * 40)
@example(stack="aws-managed", name="e" * 40)
def test_global_names_are_valid_and_unique_for_any_cluster_name(stack: str, name: str, plan_of: Any) -> None:
    base = load(stack, ROOT).config["gpuplane:cluster"]
    sf = stack_with(stack, cluster={**base, "name": name})
    try:
        parse_flat(sf.flat_config())
    except ConfigError:
        return  # a name the config rejects (too long for a fleet's regions) never reaches a plan
    violations = [v for v in check(plan_of(sf)) if v.rule in NAME_RULES]
    assert violations == [], "\n".join(str(v) for v in violations)


def test_plan_fails_with_each_violation_and_check_lists_the_rules(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplane import cli
    from gpuplane.plan import deploy

    assert cli.main(["plan", "gcp-standard", "--check"]) == 0
    out = capsys.readouterr().out
    assert all(rule in out for rule in RULES)
    bad = Violation("workload-schedulable", "urn:x", "it would stay Pending", "select a pool's labels")
    monkeypatch.setattr(deploy, "check", lambda plan, existing=(), rerun=True: [bad])
    assert cli.main(["plan", "gcp-standard", "--format", "json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["stack"] == "gcp-standard"  # the plan is still printed
    assert "[workload-schedulable] urn:x" in captured.err and "fix: select a pool's labels" in captured.err
    assert cli.main(["plan", "gcp-standard", "--no-check", "--format", "json"]) == 0
