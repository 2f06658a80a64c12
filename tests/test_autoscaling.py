"""Autoscaling on GPU and serving signals (`gpuplane:autoscaling`, `GpuAutoscaler`, `Keda`, `autoscaled`):

- every object validates against KEDA's and the monitors' CRDs (OpenAPI strict, CEL) where ../shared/reference is
  present, and against the npm @kubernetes-models validators in any clone; the core objects against Kubernetes';
- the component alone in a user's program under mocks, its bad arguments refused before anything registers;
- the stack wiring: KEDA on the system nodes, one ScaledObject per workload with the query, address and scrape of
  the stack's integration, the placement-helper form giving the stack's own objects;
- a real Prometheus scraping fake vLLM pods and a fake dcgm-exporter through each integration's own relabelling
  (GMP's and prometheus-operator's generated jobs rebuilt as in tests/test_prometheus_integrations.py), answering
  the exact query each ScaledObject carries with the value KEDA would act on;
- Hypothesis over the component's arguments: every rendered query names only series and labels the integration
  stores (the deploy simulator's own reading) and every object validates.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import kubernetes_validate
import pulumi
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane import testing
from gpuplane.args.checks import ArgsError
from gpuplane.autoscaling import GpuAutoscaler, Keda, autoscaled
from gpuplane.autoscaling import queries as q
from gpuplane.autoscaling import render as r
from gpuplane.autoscaling.spec import spec_of
from gpuplane.config import ConfigError, parse_flat
from gpuplane.monitoring.labels import BY_INTEGRATION
from gpuplane.plan import Plan, load
from gpuplane.plan.deploy import check
from gpuplane.plan.deploy.autoscaling import gpu_labels, gpu_series
from gpuplane.plan.deploy.graph import DeployGraph
from gpuplane.scheduling.placement import stack_gpu_nodes

from .conftest import ROOT, examples, load_stack_config, need_reference, stack_with
from .crd_models import Validators, node_or_skip
from .engines import checked_prometheus, engine, stop
from .graph import RELEASE, kube_objects
from .test_kubernetes_objects import K8S_VERSION
from .test_prometheus_e2e import query, serve
from .test_prometheus_integrations import _san, gmp_job, operator_job, snake

# pytest-xdist: one worker runs the module, so its real Prometheus starts once.
pytestmark = pytest.mark.xdist_group("autoscaling")

STACKS = {"gke-managed": "gcp-standard", "prometheus-operator": "aws-karpenter"}
"""The shipped stacks that scale an inference Deployment on a serving metric, by their integration."""
VLLM = "vllm:num_requests_waiting"
CRD_KINDS = ("ScaledObject", "TriggerAuthentication", "PodMonitor", "PodMonitoring")


def scaled_objects(plan: Plan) -> list[dict[str, Any]]:
    return [x.inputs for x in plan.by_type("kubernetes:keda.sh/v1alpha1:ScaledObject")]


def objects_of(plan: Plan, *kinds: str) -> list[dict[str, Any]]:
    return [x.inputs for x in kube_objects(plan) if x.inputs["kind"] in kinds]


def with_integration(stack: str, integration: str, **more: Any) -> Any:
    """A shipped stack on another integration (its own cluster name given by `more`, if any)."""
    monitoring = {**load_stack_config(stack).get("gpuplane:monitoring", {}), "integration": integration}
    return stack_with(stack, monitoring=monitoring, **more)


def workload(stack: str, **changes: Any) -> dict[str, Any]:
    """The stack's `gpuplane:autoscaling` with its first workload changed."""
    section = json.loads(json.dumps(load_stack_config(stack)["gpuplane:autoscaling"]))
    section["workloads"][0].update(changes)
    return section


# --- CRDs -------------------------------------------------------------------------------------------------------


def crd_problems(obj: dict[str, Any]) -> list[str]:
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    schema = crd_schema(ref, obj["apiVersion"], obj["kind"])
    return schema_errors(obj, schema) + cel_results(obj, schema)[0]


def rendered_variants() -> list[r.AutoscalerSpec]:
    """Specs over every integration, signal and Deployment kind (created, existing, scaled to zero)."""
    cfg = parse_flat(load("aws-karpenter", ROOT).flat_config())
    (nodes, *_) = stack_gpu_nodes(cfg)
    from gpuplane.scheduling.placement import placement

    out = []
    for integration in ("scrape-config", "prometheus-operator", "gke-managed", "install"):
        for kind in ("serving", "gpu-utilization", "gpu-memory"):
            address = r.server_address(
                integration,
                None if integration in ("install", "gke-managed") else "http://prometheus-operated.monitoring.svc:9090",
                "monitoring",
                "proj",
            )
            out.append(
                r.AutoscalerSpec(
                    deployment="vllm",
                    namespace="inference",
                    cluster="c1",
                    integration=integration,
                    model=BY_INTEGRATION[integration],
                    kind=kind,
                    target=4 if kind == "serving" else 60,
                    max_replicas=4,
                    server_address=address,
                    metric=VLLM if kind == "serving" else "",
                    create=r.Inference("vllm/vllm-openai:v0.12.0", placement(nodes, gpus=1)),
                    serving=r.Serving(r.selector_labels("vllm")) if kind == "serving" else None,
                    monitor_labels={"release": "kube-prometheus-stack"},
                    region="r1",
                )
            )
        out.append(  # an existing Deployment scaled to zero on a router's queue
            r.AutoscalerSpec(
                deployment="llm",
                namespace="serving",
                cluster="c1",
                integration=integration,
                model=BY_INTEGRATION[integration],
                kind="serving",
                target=10,
                max_replicas=8,
                min_replicas=0,
                activation=1,
                server_address="http://prometheus.example:9090",
                metric="router_queue_depth",
                serving=r.Serving({"app": "router"}, "metrics", "/stats"),
            )
        )
    return out


@pytest.mark.parametrize("spec", rendered_variants(), ids=lambda s: f"{s.integration}-{s.kind}-{s.deployment}")
def test_every_object_validates_against_its_crd(spec: r.AutoscalerSpec) -> None:
    objs = r.objects(spec)
    assert [o["kind"] for o in objs][-1] == "ScaledObject"
    for obj in objs:
        if obj["kind"] in CRD_KINDS:
            assert not crd_problems(obj), (obj["kind"], crd_problems(obj))
        else:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def test_the_crd_checks_catch_a_bad_scaled_object() -> None:
    """CEL: minReplicaCount <= maxReplicaCount (keda.sh_scaledobjects.yaml); schema: a trigger needs `metadata`."""
    spec = rendered_variants()[0]
    obj = r.scaled_object(spec)
    obj["spec"]["minReplicaCount"] = 9
    assert any("minReplicaCount must be less than or equal to maxReplicaCount" in p for p in crd_problems(obj))
    del obj["spec"]["triggers"][0]["metadata"]
    assert any("metadata" in p for p in crd_problems(obj))


@pytest.fixture(scope="module")
def validators() -> Iterator[Validators]:
    v = Validators(node_or_skip())
    yield v
    v.close()


def test_every_object_validates_against_the_npm_models(validators: Validators) -> None:
    """@kubernetes-models/keda (ScaledObject, TriggerAuthentication) and /prometheus-operator (PodMonitor), in any
    clone; a bad ScaledObject is caught too."""
    objs = [o for s in rendered_variants() for o in r.objects(s) if o["kind"] in CRD_KINDS[:3]]
    assert {o["kind"] for o in objs} == set(CRD_KINDS[:3])
    assert validators.errors(objs) == [[] for _ in objs]
    bad = r.scaled_object(rendered_variants()[0])
    bad["spec"]["maxReplicaCount"] = "eight"
    assert validators.errors([bad]) != [[]]


# --- the stack wiring --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("integration", sorted(STACKS))
def test_a_shipped_stack_per_cloud_scales_vllm_on_its_queue(integration: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(STACKS[integration])
    (so,) = scaled_objects(plan)
    (trigger,) = so["spec"]["triggers"]
    assert so["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm"}
    assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
    job = "vllm-metrics" if integration == "gke-managed" else "inference/vllm-metrics"
    cluster = load_stack_config(STACKS[integration])["gpuplane:cluster"]["name"]
    selector = f'{VLLM}{{namespace="inference", job="{job}", cluster="{cluster}"}}'
    if integration == "gke-managed":  # no staleness in Monarch: the last sample of the last minute
        selector = f"last_over_time({selector}[1m])"
    assert trigger["metadata"]["query"] == f"sum({selector})"
    (deployment,) = objects_of(plan, "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"].startswith("vllm/vllm-openai:v") and "replicas" not in deployment["spec"]
    scrape = objects_of(plan, "PodMonitoring" if integration == "gke-managed" else "PodMonitor")
    assert [s["metadata"]["name"] for s in scrape if s["metadata"]["namespace"] == "inference"] == ["vllm-metrics"]
    (keda,) = [x for x in plan.by_type(RELEASE) if x.inputs["chart"] == "keda"]
    assert (keda.inputs["version"], keda.inputs["namespace"]) == ("2.20.2", "keda")
    assert keda.inputs["values"]["nodeSelector"] == {"gpuplane.io/role": "system"}
    assert check(plan, rerun=False) == []


def test_gke_managed_queries_gmp_as_the_keda_operators_google_account(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (so,) = scaled_objects(plan)
    meta = so["spec"]["triggers"][0]
    assert meta["metadata"]["serverAddress"] == r.GMP_API.format(project="acme-ml-prod")
    assert meta["authenticationRef"] == {"name": "vllm-gmp", "kind": "TriggerAuthentication"}
    (auth,) = objects_of(plan, "TriggerAuthentication")
    assert auth["spec"] == {"podIdentity": {"provider": "gcp"}}
    (sa,) = [x for x in plan.by_type("gcp:serviceaccount/account:Account") if x.name.endswith("-keda-identity")]
    email = f"{sa.inputs['accountId']}@acme-ml-prod.iam.gserviceaccount.com"
    (keda,) = [x for x in plan.by_type(RELEASE) if x.inputs["chart"] == "keda"]
    assert keda.inputs["values"]["serviceAccount"]["operator"]["annotations"] == {
        "iam.gke.io/gcp-service-account": email
    }
    grants = {
        x.inputs["role"]: x.inputs["member"]
        for x in plan.resources
        if x.name.startswith("ml-gke-keda-") and "role" in x.inputs
    }
    assert grants == {
        "roles/monitoring.viewer": f"serviceAccount:{email}",
        "roles/iam.workloadIdentityUser": "serviceAccount:acme-ml-prod.svc.id.goog[keda/keda-operator]",
    }


def test_each_integration_gets_its_scrape_and_address(plan_of: Callable[..., Plan]) -> None:
    """install: kube-prometheus-stack's Service and a PodMonitor it selects; scrape-config: a job in the stack's
    `autoscaling` output and nothing in the cluster; a GPU signal averages the pods' GPUs, by the stored labels."""
    install = plan_of(with_integration("aws-karpenter", "install", autoscaling=workload("aws-karpenter")))
    (so,) = scaled_objects(install)
    assert so["spec"]["triggers"][0]["metadata"]["serverAddress"] == (
        "http://prometheus-operated.monitoring.svc:9090"  # the stack's own prometheusUrl wins
    )
    given = {k: v for k, v in workload("aws-karpenter").items() if k != "prometheusUrl"}
    (so,) = scaled_objects(plan_of(with_integration("aws-karpenter", "install", autoscaling=given)))
    assert so["spec"]["triggers"][0]["metadata"]["serverAddress"] == (
        "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"
    )
    (pm,) = objects_of(install, "PodMonitor")
    assert pm["metadata"]["labels"] == {"release": "kube-prometheus-stack"}
    plain = plan_of(with_integration("aws-karpenter", "scrape-config"))
    assert not objects_of(plain, "PodMonitor", "PodMonitoring")
    (job,) = yaml.safe_load(plain.outputs["autoscaling"]["vllm"]["scrapeConfig"])
    assert job["job_name"] == "inference/vllm-metrics" and check(plain, rerun=False) == []
    gpu = plan_of(
        stack_with(
            "gcp-standard", autoscaling=workload("gcp-standard", metric={"kind": "gpu-utilization", "target": 60})
        )
    )
    (so,) = scaled_objects(gpu)
    assert so["spec"]["triggers"][0]["metricType"] == "Value"
    assert so["spec"]["triggers"][0]["metadata"]["query"] == (
        'avg(last_over_time(DCGM_FI_DEV_GPU_UTIL{exported_namespace="inference", '
        'pod=~"vllm-[bcdfghjklmnpqrstvwxz2456789]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}", cluster="ml-gke"}[1m]))'
    )
    # a GPU signal's series come from the GPU scrape: no scrape of the serving pods
    assert [o["metadata"]["name"] for o in objects_of(gpu, "PodMonitoring")] == ["gpu-metrics"]
    assert check(gpu, rerun=False) == []


@pytest.mark.parametrize("stack", sorted(STACKS.values()))
def test_the_conformance_checklist_counts_the_scaled_objects(stack: str, plan_of: Callable[..., Plan]) -> None:
    """CNCF AI Conformance `pod_autoscaling` (HPA on custom metrics for GPU pods): met by KEDA and the ScaledObjects."""
    from gpuplane.health.conformance import report

    rows = {x["id"]: x for x in report(parse_flat(load(stack, ROOT).flat_config()), plan_of(stack).resources)}
    row = rows["pod_autoscaling"]
    assert row["status"] == "met" and VLLM in row["how"]
    assert any("ScaledObject" in e for e in row["evidence"]) and any("keda" in e for e in row["evidence"])


def test_without_the_section_nothing_is_installed(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("gcp-standard", autoscaling=None))
    assert not [x for x in plan.by_type(RELEASE) if x.inputs["chart"] == "keda"] and not scaled_objects(plan)
    assert "autoscaling" not in plan.outputs


def test_the_placement_helper_form_gives_the_stacks_own_objects(plan_of: Callable[..., Plan]) -> None:
    cfg = parse_flat(load("aws-karpenter", ROOT).flat_config())
    metric = {"kind": "serving", "name": VLLM, "target": 4}
    objs = autoscaled(
        cfg,
        "inference",
        "vllm",
        metric,
        8,
        namespace="inference",
        args=["--model", "/models/Qwen2.5-1.5B-Instruct"],
        stores={"models": "/models"},
        service_account="vllm",
    )
    kinds = ("Deployment", "Service", "PodMonitor", "ScaledObject")
    planned = {(o["kind"], o["metadata"]["name"]): o for o in objects_of(plan_of("aws-karpenter"), *kinds)}
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("Deployment", "vllm"),
        ("Service", "vllm"),
        ("PodMonitor", "vllm-metrics"),
        ("ScaledObject", "vllm"),
    ]
    for o in objs:
        assert o == planned[(o["kind"], o["metadata"]["name"])], o["kind"]
    # Your own Deployment (placed with placement()): the scrape and the ScaledObject only.
    mine = autoscaled(cfg, "inference", "llm", metric, 4, pod_labels={"app": "llm"})
    assert [o["kind"] for o in mine] == ["PodMonitor", "ScaledObject"]
    assert mine[-1]["metadata"]["annotations"] == {r.SCALE_TARGET: "external"}
    with pytest.raises(ConfigError) as info:
        autoscaled(cfg, "infrence", "vllm", {"kind": "serving", "target": 4}, 0)
    assert {p for p, _ in info.value.problems} == {
        "gpuplane:autoscaling.workloads[0].deployment.pool",
        "gpuplane:autoscaling.workloads[0].metric.name",
        "gpuplane:autoscaling.workloads[0].maxReplicas",
    }


# --- the component in a user's program ---------------------------------------------------------------------------


def gpu_nodes() -> Any:
    return stack_gpu_nodes(parse_flat(load("aws-karpenter", ROOT).flat_config()))[0]


def test_the_components_alone_in_a_users_program() -> None:
    """Keda and a GpuAutoscaler on the user's own provider, the cluster label an Output: the query carries the
    resolved name, and the deploy simulator finds nothing to object to."""
    with testing.offline(project="mine", config={"gcp:project": "p"}) as plan:
        import pulumi_kubernetes as k8s

        provider = k8s.Provider("mine", kubeconfig="{}")
        on = pulumi.ResourceOptions(provider=provider)
        keda = Keda("keda", {"node_selector": {"role": "system"}}, opts=on)
        crds = k8s.helm.v3.Release(
            "crds", chart="prometheus-operator-crds", name="crds", namespace="kube-system", opts=on
        )
        cluster = pulumi.Output.from_input("research")
        scaler = GpuAutoscaler(
            "vllm",
            {
                "deployment": "vllm",
                "cluster": cluster,
                "integration": "prometheus-operator",  # type: ignore[typeddict-item]
                "prometheus_url": "http://prometheus-operated.monitoring:9090",
                "metric": {"kind": "serving", "name": VLLM, "target": 4},  # type: ignore[typeddict-item]
                "max_replicas": 4,
                "create": {"gpu_nodes": gpu_nodes(), "args": ["--model", "m"]},
            },
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[keda, crds]),
        )
        pulumi.export("query", scaler.query)
    (so,) = scaled_objects(plan)
    assert 'cluster="research"' in so["spec"]["triggers"][0]["metadata"]["query"]
    assert plan.outputs["query"] == so["spec"]["triggers"][0]["metadata"]["query"]
    assert {x.type.rsplit(":", 1)[-1] for x in plan.resources if x.parent and x.parent.endswith("::vllm")} == {
        "Deployment",
        "Service",
        "PodMonitor",
        "ScaledObject",
    }
    assert [str(v) for v in testing.check(plan)] == []


def test_bad_arguments_are_named_before_anything_registers() -> None:
    with testing.offline() as plan:
        with pytest.raises(ArgsError) as info:
            GpuAutoscaler(
                "x",
                {
                    "deployment": "Bad_Name",
                    "cluster": "c",
                    "integration": "scrape-config",  # type: ignore[typeddict-item]
                    "metric": {"kind": "serving", "target": 4},  # type: ignore[typeddict-item]
                    "max_replicas": 2,
                    "min_replicas": 0,
                    "create": {"gpu_nodes": gpu_nodes(), "gpus": 2},
                    "replicas": 3,  # type: ignore[typeddict-unknown-key]
                },
            )
    assert [x.type for x in plan.resources] == ["pulumi:pulumi:Stack"]
    problems = dict(info.value.problems)
    assert set(problems) == {"replicas", "create.gpus"}, problems  # shape first
    problems = refused(deployment="Bad_Name", integration="scrape-config", metric={"kind": "serving", "target": 4})
    assert set(problems) == {"deployment", "metric.name", "prometheus_url"}, problems
    assert "DNS label" in problems["deployment"]
    assert "monitoring.integration scrape-config" in problems["prometheus_url"]
    problems = refused(deployment="v", integration="gke-managed", metric={"kind": "gpu-memory", "target": 80})
    assert set(problems) == {"min_replicas", "gcp_project"}, problems


def refused(**args: Any) -> dict[str, str]:
    """The problems `spec_of` names for these arguments (scaled to zero, at most 2 replicas, on cluster `c`)."""
    with pytest.raises(ArgsError) as info:
        spec_of("x", {"cluster": "c", "max_replicas": 2, "min_replicas": 0, **args})  # type: ignore[typeddict-item]
    return dict(info.value.problems)


# --- the deploy simulator on what gpuplane emits ------------------------------------------------------------------


def test_the_simulator_refuses_a_query_the_integration_cannot_answer(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (so,) = plan.by_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    meta = so.inputs["spec"]["triggers"][0]["metadata"]
    meta["query"] = meta["query"].replace('job="vllm-metrics"', 'job="inference/vllm-metrics"')  # the operator's form
    assert {v.rule for v in check(plan, rerun=False)} == {"scaler-query-scraped"}
    meta["query"] = 'avg(DCGM_FI_DEV_GPU_UTIL{namespace="inference", pod=~"vllm-.+", cluster="ml-gke"})'
    (found,) = check(plan, rerun=False)
    assert "['namespace']" in found.message  # GMP keeps the workload's namespace in exported_namespace


# --- a real Prometheus ---------------------------------------------------------------------------------------------

PODS = {"vllm-7d9f8c6b5-x2x4z": 7, "vllm-7d9f8c6b5-fghjk": 5, "vllm-large-6f7c8d9-klmnp": 40}
"""Serving pods in namespace `inference` and their queue: two of the scaled Deployment, one of another (its pods'
names start with the same word)."""
GPUS = {  # (util %, framebuffer used MiB, free MiB) of the GPU each pod holds; None: a free GPU
    "vllm-7d9f8c6b5-x2x4z": (80, 6000, 18000),
    "vllm-7d9f8c6b5-fghjk": (60, 18000, 6000),
    "vllm-large-6f7c8d9-klmnp": (5, 23000, 1000),
    "vllm-warmup-x7k2p": (100, 24000, 0),  # a Job's pod whose name starts with the Deployment's
    None: (0, 0, 24000),
}
EXPECTED = {"serving": 12.0, "gpu-utilization": 70.0, "gpu-memory": 50.0}
"""What the scaler reads: the two `vllm` pods' queues summed, their GPUs' utilisation and memory averaged."""


def dcgm_exposition() -> str:
    lines = []
    for field, index in (("DCGM_FI_DEV_GPU_UTIL", 0), ("DCGM_FI_DEV_FB_USED", 1), ("DCGM_FI_DEV_FB_FREE", 2)):
        lines.append(f"# TYPE {field} gauge")
        for i, (pod, values) in enumerate(GPUS.items()):
            who = f',namespace="inference",pod="{pod}",container="server"' if pod else ""
            lines.append(
                f'{field}{{gpu="{i}",UUID="GPU-{i}",device="nvidia{i}",modelName="NVIDIA L4"{who}}} {values[index]}'
            )
    return "\n".join(lines) + "\n"


def vllm_exposition(waiting: int) -> str:
    return f'# TYPE {VLLM} gauge\n{VLLM}{{engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"}} {waiting}\n'


def podmonitor_job(pm: dict[str, Any]) -> dict[str, Any]:
    """prometheus-operator's scrape config for endpoint 0 of PodMonitor `pm` (role pod), steps as in
    pkg/prometheus/promcfg.go `generatePodMonitorConfig` (v0.93): running pods, the selector, the port by name,
    `namespace`/`container`/`pod`, `job` `<namespace>/<name>`, `endpoint`, then the endpoint's relabelings."""
    meta, (ep,) = pm["metadata"], pm["spec"]["podMetricsEndpoints"]
    keep = [
        {
            "action": "keep",
            "source_labels": [
                f"__meta_kubernetes_pod_label_{_san(k)}",
                f"__meta_kubernetes_pod_labelpresent_{_san(k)}",
            ],
            "regex": f"({v});true",
        }
        for k, v in sorted(pm["spec"]["selector"]["matchLabels"].items())
    ]
    relabels = [
        {"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"},
        {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"},
        *keep,
        {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": ep["port"]},
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        {"target_label": "job", "replacement": f"{meta['namespace']}/{meta['name']}"},
        {"target_label": "endpoint", "replacement": ep["port"]},
        *(snake(x) for x in ep.get("relabelings", [])),
    ]
    return {
        "job_name": f"podMonitor/{meta['namespace']}/{meta['name']}/0",
        "honor_labels": False,
        "metrics_path": ep["path"],
        "relabel_configs": relabels,
    }


def pod_meta(
    labels: dict[str, str],
    namespace: str,
    pod: str,
    port: str,
    address: str,
    kind: str = "ReplicaSet",
    service: dict[str, str] | None = None,
) -> dict[str, str]:
    """What Kubernetes discovery gives a pod's container port (role pod), and a Service's endpoint (role endpoints)."""
    out = {f"__meta_kubernetes_pod_label_{_san(k)}": v for k, v in labels.items()}
    out |= {f"__meta_kubernetes_pod_labelpresent_{_san(k)}": "true" for k in labels}
    for k, v in (service or {}).items():
        out |= {
            f"__meta_kubernetes_service_label_{_san(k)}": v,
            f"__meta_kubernetes_service_labelpresent_{_san(k)}": "true",
        }
    return out | {
        "__meta_kubernetes_namespace": namespace,
        "__meta_kubernetes_pod_name": pod,
        "__meta_kubernetes_pod_container_name": "server" if kind == "ReplicaSet" else "exporter",
        "__meta_kubernetes_pod_container_port_name": port,
        "__meta_kubernetes_endpoint_port_name": port,
        "__meta_kubernetes_endpoint_address_target_kind": "Pod",
        "__meta_kubernetes_endpoint_address_target_name": pod,
        "__meta_kubernetes_service_name": "svc",
        "__meta_kubernetes_pod_node_name": "gpu-node-1",
        "__meta_kubernetes_pod_phase": "Running",
        "__meta_kubernetes_pod_controller_kind": kind,
        "__meta_kubernetes_pod_ip": "127.0.0.1",
        "__address__": address,
    }


@dataclass(frozen=True)
class ScrapePath:
    """One integration's path: the stack variants whose ScaledObjects are queried, and its scrape jobs."""

    integration: str
    plans: dict[str, Plan]
    """Signal -> the plan of the stack variant scaling `vllm` on it."""
    jobs: list[dict[str, Any]]
    exporter: dict[str, Any]
    """The GPU exporter's discovery labels (without the address)."""


def paths(plan_of: Callable[..., Plan]) -> list[ScrapePath]:
    out = []
    variants = {
        "gke-managed": ("gcp-standard", {}),
        "prometheus-operator": ("aws-karpenter", {}),
        "scrape-config": (
            "aws-karpenter",
            {"cluster": {**load_stack_config("aws-karpenter")["gpuplane:cluster"], "name": "ml-scrape"}},
        ),
    }
    for integration, (stack, more) in variants.items():
        plans = {}
        for kind in EXPECTED:
            metric = {"kind": kind, "name": VLLM, "target": 4} if kind == "serving" else {"kind": kind, "target": 60}
            plans[kind] = plan_of(
                with_integration(stack, integration, autoscaling=workload(stack, metric=metric), **more)
            )
        plan = plans["serving"]
        cluster = (more.get("cluster") or load_stack_config(stack)["gpuplane:cluster"])["name"]
        if integration == "gke-managed":
            gpu = next(o for o in objects_of(plan, "PodMonitoring") if o["metadata"]["name"] == "gpu-metrics")
            serving = next(o for o in objects_of(plan, "PodMonitoring") if o["metadata"]["name"] == "vllm-metrics")
            jobs = [gmp_job(gpu, cluster, "us-central1"), gmp_job(serving, cluster, "us-central1")]
            labels = gpu["spec"]["selector"]["matchLabels"]
            exporter = pod_meta(
                labels,
                gpu["metadata"]["namespace"],
                "dcgm-exporter-x7k2p",
                gpu["spec"]["endpoints"][0]["port"],
                "",
                "DaemonSet",
            )
        elif integration == "prometheus-operator":
            (sm,) = objects_of(plan, "ServiceMonitor")
            (pm,) = objects_of(plan, "PodMonitor")
            jobs = [operator_job(sm), podmonitor_job(pm)]
            exporter = pod_meta(
                {},
                sm["metadata"]["namespace"],
                "nvidia-dcgm-exporter-x7k2p",
                sm["spec"]["endpoints"][0]["port"],
                "",
                "DaemonSet",
                service=sm["spec"]["selector"]["matchLabels"],
            )
        else:
            (gpu_job,) = yaml.safe_load(plan.outputs["scrapeConfig"])
            (serving_job,) = yaml.safe_load(plan.outputs["autoscaling"]["vllm"]["scrapeConfig"])
            jobs = [gpu_job, serving_job]
            service = {
                k.removeprefix("__meta_kubernetes_service_label_"): x["regex"].replace("\\", "")
                for x in gpu_job["relabel_configs"]
                if x.get("action") == "keep"
                for k in x["source_labels"]
                if k.startswith("__meta_kubernetes_service_label_")
            }
            port = next(
                x["regex"]
                for x in gpu_job["relabel_configs"]
                if x["source_labels"] == ["__meta_kubernetes_endpoint_port_name"]
            )
            ns = gpu_job["kubernetes_sd_configs"][0]["namespaces"]["names"][0]
            exporter = pod_meta({}, ns, "nvidia-dcgm-exporter-x7k2p", port, "", "DaemonSet", service=service)
        out.append(ScrapePath(integration, plans, jobs, exporter))
    return out


@dataclass
class Server:
    base: str
    paths: list[ScrapePath]


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from .conftest import cached_plan

    engine("prometheus")
    workdir = tmp_path_factory.mktemp("autoscaling")
    found = paths(cached_plan)
    servers = []
    dcgm, dcgm_port = serve(dcgm_exposition())
    servers.append(dcgm)
    targets = []
    for pod, waiting in PODS.items():
        server, port = serve(vllm_exposition(waiting))
        servers.append(server)
        labels = {"app.kubernetes.io/name": pod.rsplit("-", 2)[0], "app.kubernetes.io/managed-by": "gpuplane"}
        targets.append(
            {
                "targets": [f"127.0.0.1:{port}"],
                "labels": pod_meta(labels, "inference", pod, "http", f"127.0.0.1:{port}"),
            }
        )
    for p in found:
        targets.append(
            {"targets": [f"127.0.0.1:{dcgm_port}"], "labels": {**p.exporter, "__address__": f"127.0.0.1:{dcgm_port}"}}
        )
    (workdir / "targets.json").write_text(json.dumps(targets))
    jobs = []
    for p in found:
        for job in p.jobs:
            job = {k: v for k, v in job.items() if k != "kubernetes_sd_configs"}
            job["job_name"] = f"{p.integration}/{job['job_name']}"  # unique across paths; `job` comes from the rules
            if not any(x.get("target_label") == "job" for x in job["relabel_configs"]):
                job["relabel_configs"] = [
                    *job["relabel_configs"],
                    {"target_label": "job", "replacement": job["job_name"].split("/", 1)[1]},
                ]
            jobs.append(
                {
                    **job,
                    "scrape_interval": "1s",
                    "scrape_timeout": "1s",
                    "file_sd_configs": [{"files": [str(workdir / "targets.json")]}],
                }
            )
    proc, listen = checked_prometheus(workdir, jobs)
    server = Server(f"http://127.0.0.1:{listen}", found)
    try:
        deadline = time.monotonic() + 60
        want = {(p.integration, kind) for p in found for kind in EXPECTED}
        answered: set[tuple[str, str]] = set()
        while time.monotonic() < deadline and answered != want:
            time.sleep(0.25)
            for p in found:
                for kind, plan in p.plans.items():
                    try:  # every target scraped: the answer is the whole one (one series, as KEDA reads it)
                        found_ = query(server.base, the_query(plan))
                    except OSError:
                        continue
                    if len(found_) == 1 and float(found_[0]["value"][1]) == pytest.approx(EXPECTED[kind]):
                        answered.add((p.integration, kind))
        assert answered == want, f"no full answer yet for {sorted(want - answered)}"
        yield server
    finally:
        stop(proc)
        for s in servers:
            s.shutdown()


def the_trigger(plan: Plan) -> dict[str, Any]:
    (so,) = scaled_objects(plan)
    (trigger,) = so["spec"]["triggers"]
    return dict(trigger)


def the_query(plan: Plan) -> str:
    return str(the_trigger(plan)["metadata"]["query"])


def desired(trigger: dict[str, Any], value: float, current: int) -> int:
    """The replicas KEDA's HPA asks for (Kubernetes docs, HPA algorithm: AverageValue ceil(value / target); Value
    ceil(current x value / target))."""
    target = float(trigger["metadata"]["threshold"])
    return math.ceil(value / target) if trigger["metricType"] == "AverageValue" else math.ceil(current * value / target)


@pytest.mark.parametrize("integration", ["gke-managed", "prometheus-operator", "scrape-config"])
@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_the_scaled_objects_query_returns_what_keda_acts_on(integration: str, kind: str, prometheus: Server) -> None:
    (path,) = [p for p in prometheus.paths if p.integration == integration]
    trigger = the_trigger(path.plans[kind])
    (sample,) = query(prometheus.base, trigger["metadata"]["query"])  # one series, as KEDA requires
    value = float(sample["value"][1])
    assert value == pytest.approx(EXPECTED[kind])
    assert value > float(trigger["metadata"]["activationThreshold"])  # active
    assert desired(trigger, value, current=2) == {"serving": 3, "gpu-utilization": 3, "gpu-memory": 2}[kind]


def test_the_stored_labels_are_why_the_query_differs(prometheus: Server) -> None:
    """On GKE Managed Prometheus the workload namespace of a GPU series is `exported_namespace`: the same query by
    `namespace` (the exporter's there) is empty, which KEDA would read as 0."""
    (path,) = [p for p in prometheus.paths if p.integration == "gke-managed"]
    text = the_query(path.plans["gpu-utilization"])
    assert "exported_namespace" in text
    assert query(prometheus.base, text.replace("exported_namespace", "namespace")) == []


# --- Hypothesis over the arguments ---------------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9]{0,20}(-[a-z0-9]{1,8})?", fullmatch=True)


@st.composite
def autoscaler_args(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["serving", "gpu-utilization", "gpu-memory"]))
    integration = draw(st.sampled_from(["scrape-config", "prometheus-operator", "gke-managed", "install"]))
    metric: dict[str, Any] = {"kind": kind, "target": draw(st.integers(1, 100))}
    if kind == "serving":
        metric["name"] = draw(st.from_regex(r"[a-z_][a-z0-9_:]{0,30}", fullmatch=True))
    served = kind == "serving" and draw(st.booleans())
    if served:
        metric["served_by"] = {"app": draw(NAMES)}
    low = draw(st.integers(0 if served else 1, 5))
    args: dict[str, Any] = {
        "deployment": draw(NAMES),
        "namespace": draw(NAMES.filter(lambda n: n not in ("kube-system", "kube-public", "kube-node-lease"))),
        "cluster": draw(NAMES),
        "integration": integration,
        "metric": metric,
        "min_replicas": low,
        "max_replicas": draw(st.integers(max(low, 1), 50)),
    }
    if integration in ("scrape-config", "prometheus-operator"):
        args["prometheus_url"] = "http://prometheus.example:9090"
    if integration == "gke-managed":
        args["gcp_project"] = draw(NAMES)
    if draw(st.booleans()):
        args["create"] = {"gpu_nodes": gpu_nodes()}
    elif kind == "serving" and not served:
        args["pod_labels"] = {"app": draw(NAMES)}
    return args


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(args=autoscaler_args())
def test_any_valid_arguments_render_a_query_the_integration_can_answer(args: dict[str, Any]) -> None:
    spec, _ = spec_of("hypothesis", args)  # type: ignore[arg-type]
    objs = r.objects(spec)
    sels, grouping = q.selectors(r.query(spec))
    assert sels and not grouping
    for sel in sels:
        if spec.kind == "serving":
            assert sel.metric == args["metric"]["name"]
            assert dict((k, v) for k, _, v in sel.matchers) == {
                "namespace": spec.namespace,
                "job": spec.job,
                "cluster": spec.cluster,
            }
        else:
            assert sel.metric in gpu_series(spec.model) and sel.labels <= gpu_labels(spec.model)
    (so,) = [o for o in objs if o["kind"] == "ScaledObject"]
    assert so["spec"]["minReplicaCount"] <= so["spec"]["maxReplicaCount"]
    assert re.fullmatch(r"[a-z0-9-]+", so["metadata"]["name"])
    if need_reference_quietly():
        for obj in objs:
            if obj["kind"] in CRD_KINDS:
                assert not crd_problems(obj), crd_problems(obj)


def need_reference_quietly() -> bool:
    from .conftest import reference_dir

    return reference_dir() is not None


def test_the_shipped_stacks_config_is_what_the_docs_show() -> None:
    """docs/autoscaling.md shows the GCP stack's section as shipped."""
    doc = (ROOT / "docs" / "autoscaling.md").read_text()
    stack = (ROOT / "stacks" / "Pulumi.gcp-standard.yaml").read_text()
    section = stack.split("  gpuplane:autoscaling:", 1)[1].split("\n  gpuplane:", 1)[0]
    for line in section.splitlines():
        key = line.split("#", 1)[0].rstrip()
        if key.strip():
            assert key.strip() in doc, key


# --- Review fixes ------------------------------------------------------------------------------------------------

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery pkg/util/rand: the characters of generated names


@pytest.mark.parametrize(
    ("pod", "ours"),
    [
        ("vllm-7d9f8b6c5d-x2x4z", True),  # <deployment>-<pod-template-hash>-<5 characters>
        ("vllm-5c7bd-x2x4z", True),
        ("vllm-large-7d9f8b6c5d-x2x4z", False),  # another Deployment
        ("vllm-warmup-x7k2p", False),  # a Job's pod: one generated part only
        ("vllm-router-0", False),  # a StatefulSet's pod
        ("vllm-abc-x2x4z", False),  # vowels are never generated
    ],
)
def test_the_pod_pattern_matches_only_the_deployments_pods(pod: str, ours: bool) -> None:
    assert all(c in ALPHANUMS for c in "7d9f8b6c5dx2x4z5c7bdx7k2p")
    assert bool(re.fullmatch(q.pod_pattern("vllm"), pod)) is ours


def test_the_service_and_the_deployment_are_not_awaited(plan_of: Callable[..., Plan]) -> None:
    """Endpoints come once a GPU node is up and the model loaded: later than pulumi-kubernetes waits (10 min)."""
    plan = plan_of("aws-karpenter")
    made = [o for o in objects_of(plan, "Service", "Deployment") if o["metadata"]["namespace"] == "inference"]
    assert {o["kind"] for o in made} == {"Service", "Deployment"}
    for o in made:
        assert o["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true", o["kind"]


def test_the_inference_pods_request_cpu_and_memory(plan_of: Callable[..., Plan]) -> None:
    """A GPU pod without CPU and memory requests is BestEffort: evicted first, and the node autoscaler sizes nodes
    without it."""
    (d,) = [o for o in objects_of(plan_of("gcp-standard"), "Deployment") if o["metadata"]["namespace"] == "inference"]
    requests = d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests["cpu"] == "500m" and requests["memory"] == "3Gi"


def test_the_workload_identity_binding_waits_for_the_cluster(plan_of: Callable[..., Plan]) -> None:
    """The project's identity pool exists only once a Workload Identity cluster does (IAM: "Identity Pool does not
    exist"; terraform-google-kubernetes-engine #916)."""
    plan = plan_of("gcp-standard")
    (binding,) = [r for r in plan.resources if r.type == "gcp:serviceaccount/iAMMember:IAMMember"]
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    assert DeployGraph(plan).waits_for(binding.urn, cluster.urn)


def test_gke_managed_queries_read_the_last_sample_of_a_minute(plan_of: Callable[..., Plan]) -> None:
    """GKE Managed Prometheus has no staleness: a gone pod's last sample would count for 5 minutes."""
    (so,) = scaled_objects(plan_of("gcp-standard"))
    query_ = so["spec"]["triggers"][0]["metadata"]["query"]
    assert query_.startswith("sum(last_over_time(vllm:num_requests_waiting{") and query_.endswith("[1m]))")
    (so,) = scaled_objects(plan_of("aws-karpenter"))
    assert "last_over_time" not in so["spec"]["triggers"][0]["metadata"]["query"]


def test_a_workload_in_a_kueue_teams_namespace_is_not_given_a_second_one(plan_of: Callable[..., Plan]) -> None:
    """gcp-dws's team `prod` queues in namespace `serving`: a Deployment there reuses Kueue's namespace."""
    config = load_stack_config("gcp-dws")
    teams = config["gpuplane:queues"]["teams"]
    namespace = next(t.get("namespace") or t["name"] for t in teams)
    pool = config["gpuplane:gpuPools"][0]["name"]
    scaling = {
        "prometheusUrl": "https://monitoring.googleapis.com/v1/projects/p/location/global/prometheus",
        "workloads": [
            {
                "name": "api",
                "namespace": namespace,
                "deployment": {"pool": pool},
                "metric": {"kind": "serving", "name": "vllm:num_requests_waiting", "target": 4},
                "maxReplicas": 2,
            }
        ],
    }
    plan = plan_of(stack_with("gcp-dws", autoscaling=scaling))
    named = [o for o in objects_of(plan, "Namespace") if o["metadata"]["name"] == namespace]
    assert len(named) == 1
    assert check(plan) == []
