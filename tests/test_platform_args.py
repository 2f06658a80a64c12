"""The whole platforms and `GpuMonitoring` take typed args: every shipped stack's config is expressible as
platform args and validates to the same `StackConfig` (one validation), a typed platform plans exactly the
stack's graph, bad args raise one `ArgsError` naming every argument path before anything registers, and
Outputs reach the inputs where a platform allows them (and are refused where they would shape the graph)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.args.checks import ArgsError, snake
from gpuplane.args.platform import VERBATIM, MonitoredExporter, MonitoringIntegration, platform_config
from gpuplane.aws.platform import EksGpuPlatform, EksGpuPlatformArgs
from gpuplane.config import parse_config
from gpuplane.config.load import namespace_of
from gpuplane.gcp.autopilot import GkeAutopilotPlatform, GkeAutopilotPlatformArgs
from gpuplane.gcp.platform import GkeGpuPlatform, GkeGpuPlatformArgs
from gpuplane.monitoring.stack import GpuMonitoring
from gpuplane.plan import load
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.runner import install
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT

CLASSES: dict[str, Any] = {
    "gke-standard": GkeGpuPlatform,
    "gke-nap": GkeGpuPlatform,
    "gke-autopilot": GkeAutopilotPlatform,
    "eks-managed": EksGpuPlatform,
    "eks-karpenter": EksGpuPlatform,
    "eks-automode": EksGpuPlatform,
}
STACKS = sorted(p.name.split(".")[1] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
NOT_PLATFORM_ARGS = ("fleet", "prices")
"""Stack sections that are not one platform's: a fleet lays several platforms out; prices feed the summary."""


def args_of(section: Any, key: str = "") -> Any:
    """A stack-config document as platform args (snake_case keys; `sharing.migProfile` is `profile`)."""
    if isinstance(section, dict):
        if snake(key) in VERBATIM:
            return dict(section)
        return {("profile" if k == "migProfile" else snake(k)): args_of(v, k) for k, v in section.items()}
    if isinstance(section, list):
        return [args_of(v) for v in section]  # a list's entries are sections of their own (`storage.stores[]`)
    return section


def stack_args(stack: str) -> tuple[dict[str, Any], dict[str, Any]]:
    raw = namespace_of(load(stack).config)
    doc = {k: v for k, v in raw.items() if k not in NOT_PLATFORM_ARGS}
    args = args_of({k: v for k, v in doc.items() if k != "platform"})
    if raw["platform"] != "gke-autopilot":
        args["kind"] = raw["platform"]
    return doc, args


def run(program: Callable[[], Any]) -> list[Any]:
    # A user's stack names the GCP provider's project (GCP resources without one are refused, as by the provider).
    monitor = install(StackFile(project="lib", stack="test", config={"gcp:project": "lib-project"}), PlanMocks())
    _sync_await(run_pulumi_func(program))
    return list(monitor.registrations)


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_config_is_expressible_as_platform_args(stack: str) -> None:
    doc, args = stack_args(stack)
    kinds = [doc["platform"]]
    args_type = {GkeGpuPlatform: GkeGpuPlatformArgs, GkeAutopilotPlatform: GkeAutopilotPlatformArgs}
    cls = args_type.get(CLASSES[doc["platform"]], EksGpuPlatformArgs)
    cfg, deferred = platform_config("test", kinds, args, cls)  # every key a declared argument
    assert cfg == parse_config(doc) and not deferred


@pytest.mark.parametrize("stack", ["gcp-standard", "gcp-autopilot", "aws-karpenter"])
def test_typed_platform_plans_the_stacks_graph(stack: str) -> None:
    """Same URNs, inputs, providers and dependencies as the platform built from the parsed stack config."""
    doc, args = stack_args(stack)
    cls = CLASSES[doc["platform"]]
    name = doc["cluster"]["name"]

    def view(regs: list[Any]) -> list[tuple[Any, ...]]:
        return sorted(((r.urn, r.inputs, r.provider, tuple(sorted(r.dependencies))) for r in regs), key=str)

    from_config = view(run(lambda: cls.from_config(name, parse_config(doc))))
    typed = view(run(lambda: cls(name, args)))
    assert len(typed) > 5 and typed == from_config


GKE = {
    "cluster": {"name": "research"},
    "gcp": {"project": "acme-research", "region": "us-central1"},
    "gpu_pools": [{"name": "l4", "gpu": "l4", "max_nodes": 2}],
}


def _bad(cls: Any, args: Any) -> ArgsError:
    errors: list[ArgsError] = []

    def program() -> None:
        try:
            cls("bad", args)
        except ArgsError as exc:
            errors.append(exc)

    regs = run(program)
    assert [r.type for r in regs] == ["pulumi:pulumi:Stack"]  # nothing registered, not even the component
    (err,) = errors
    assert f"invalid arguments of {cls.__name__} 'bad'" in str(err)
    return err


def test_bad_platform_args_name_every_argument_path() -> None:
    args = {
        "kind": "gke-nap",
        "cluster": {"name": "Research", "release_chanel": "RAPID"},
        "gcp": {"project": "acme-research", "region": "us-central1", "zones": ["us-east1-b"]},
        "gpu_pools": [{"name": "l4", "gpu": "l4", "max_nodes": 2, "min_nodes": 1}],
        "karpenter": {},
        "monitoring": {"integration": "grafana", "scrape_timeout": "1m"},
        "auto_provisioning": {"cpu_max": 0},
    }
    err = _bad(GkeGpuPlatform, args)
    paths = [p for p, _ in err.problems]
    assert set(paths) == {
        "cluster.name",
        "cluster.release_chanel",
        "gcp.zones",
        "gpu_pools[0].min_nodes",
        "karpenter",
        "monitoring.integration",
        "auto_provisioning.cpu_max",
        "monitoring.scrape_timeout",
    }, err
    assert "did you mean 'release_channel'?" in str(err) and "releaseChannel" not in str(err)


def test_platform_kind_and_graph_shaping_args_must_be_plain() -> None:
    """Outputs where they would decide which resources exist (pools, region, cluster name) are refused with
    the kind and every other problem, in one error."""
    err = _bad(
        EksGpuPlatform,
        {
            "kind": "gke-standard",
            "cluster": {"name": pulumi.Output.from_input("inference")},
            "aws": {"region": pulumi.Output.from_input("us-east-1"), "admins": pulumi.Output.from_input([])},
            "gpu_pools": [{"name": "a10g", "gpu": "a10g", "max_nodes": pulumi.Output.from_input(2)}],
        },
    )
    problems = dict(err.problems)
    assert set(problems) == {"kind", "cluster.name", "aws.region", "aws.admins", "gpu_pools[0].max_nodes"}, err
    assert "plain value" in problems["aws.region"] and "eks-managed" in problems["kind"]


def test_gke_platform_takes_the_project_and_network_as_outputs() -> None:
    def program() -> None:
        project = gcp.organizations.get_project_output().project_id
        net = gcp.compute.Network("vpc", name="research-vpc", auto_create_subnetworks=False)
        GkeGpuPlatform("research", {**GKE, "gcp": {**GKE["gcp"], "project": project, "network": net.self_link}})

    regs = run(program)
    by_type = {r.type: r for r in regs}
    cluster = by_type["gcp:container/cluster:Cluster"]
    assert cluster.inputs["project"] not in ("", None) and "gpuplane-arg" not in str(cluster.inputs)
    assert cluster.inputs["network"].endswith("/networks/research-vpc")
    assert cluster.inputs["workloadIdentityConfig"]["workloadPool"] == f"{cluster.inputs['project']}.svc.id.goog"
    for typ in ("pulumi:providers:gcp", "gcp:container/nodePool:NodePool", "gcp:compute/router:Router"):
        assert by_type[typ].inputs["project"] == cluster.inputs["project"], typ
    assert not [r.urn for r in regs if "gpuplane-arg" in str(r.inputs)]


def test_eks_platform_takes_a_vpc_stacks_outputs() -> None:
    def program() -> None:
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        subnets = [aws.ec2.Subnet(f"private-{i}", vpc_id=vpc.id, cidr_block=f"10.0.{i}.0/24") for i in range(3)]
        admin = aws.iam.Role("admin", assume_role_policy="{}")
        EksGpuPlatform(
            "inference",
            {
                "cluster": {"name": "inference"},
                "aws": {
                    "region": "us-west-2",
                    "vpc_id": vpc.id,
                    "private_subnet_ids": pulumi.Output.all(*[s.id for s in subnets]),
                    "admins": [admin.arn],
                },
                "gpu_pools": [{"name": "a10g", "gpu": "a10g", "max_nodes": 2}],
            },
        )

    regs = run(program)
    (cluster,) = [r for r in regs if r.type == "eks:index:Cluster"]
    assert cluster.inputs["vpcId"].startswith("vpc-") and "aaaaaaa" not in cluster.inputs["vpcId"]
    assert len(cluster.inputs["privateSubnetIds"]) == 3  # the Output list, not the two stand-ins
    entry = cluster.inputs["accessEntries"]["admin-0"]
    assert entry["principalArn"].startswith("arn:aws:iam::") and ":role/admin" in entry["principalArn"]
    groups = [r for r in regs if r.type == "eks:index:ManagedNodeGroup" and "a10g" in r.name]
    assert groups and groups[0].inputs["subnetIds"] == cluster.inputs["privateSubnetIds"]
    assert not [r.urn for r in regs if "gpuplane-arg" in str(r.inputs) or "gpuplanearg" in str(r.inputs)]


def test_gpu_monitoring_takes_typed_args_and_output_labels() -> None:
    holder: dict[str, Any] = {}

    def program() -> None:
        cluster = gcp.container.Cluster("mine", name="mine", location="europe-west4", initial_node_count=1)
        holder["m"] = GpuMonitoring(
            "monitoring",
            {
                "cluster": cluster.name,
                "region": cluster.location,
                "exporter": MonitoredExporter.GPU_OPERATOR,
                "monitoring": {"integration": MonitoringIntegration.INSTALL, "temperature_celsius": 80},
            },
        )
        holder["m"].scrape_config.apply(lambda text: holder.setdefault("scrape", text))

    regs = run(program)
    (kps,) = [
        r for r in regs if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs["chart"] == "kube-prometheus-stack"
    ]
    assert kps.inputs["values"]["prometheus"]["prometheusSpec"]["externalLabels"] == {
        "cluster": "mine",
        "region": "europe-west4",
    }
    (monitor,) = [r for r in regs if r.type == "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"]
    assert monitor.inputs["spec"]["namespaceSelector"] == {"matchNames": ["gpu-operator"]}
    relabels = monitor.inputs["spec"]["endpoints"][0]["relabelings"]
    assert {"targetLabel": "cluster", "replacement": "mine", "action": "replace"} in relabels
    (rule,) = [r for r in regs if r.type == "kubernetes:monitoring.coreos.com/v1:PrometheusRule"]
    assert "> 80" in str(rule.inputs["spec"])
    assert "replacement: mine" in holder["scrape"] and "gpuplane-arg" not in holder["scrape"]


def test_bad_monitoring_args_name_every_argument_path() -> None:
    err = _bad(
        GpuMonitoring,
        {"cluster": "Mine", "exporter": "nvidia", "monitoring": {"idle_percent": 0, "selector_labels": {"a b": "c"}}},
    )
    assert [p for p, _ in err.problems] == [
        "exporter",
        "cluster",
        "monitoring.selector_labels",
        "monitoring.idle_percent",
    ], err


def test_yaml_platform_example_validates_and_interpolates_only_output_args() -> None:
    """examples/yaml-gke-platform's platform properties pass the platform's validation, with every `${...}`
    interpolation (an Output at run time) in an arg that may be an Output."""
    import yaml

    program = yaml.safe_load((ROOT / "examples" / "yaml-gke-platform" / "Pulumi.yaml").read_text())
    props = program["resources"]["platform"]["properties"]

    def outputs(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: outputs(v) for k, v in value.items()}
        if isinstance(value, list):
            return [outputs(v) for v in value]
        return pulumi.Output.from_input("acme-research") if str(value).startswith("${") else value

    seen: list[Any] = []
    run(lambda: seen.append(platform_config("yaml", ["gke-standard"], outputs(args_of(props)))))
    ((cfg, deferred),) = seen
    assert cfg.platform == "gke-standard" and [p.name for p in cfg.gpuPools] == ["l4", "a100"]
    assert len(deferred.tokens) == 3  # project, network, subnetwork


def test_library_docs_platform_example_runs_under_mocks() -> None:
    """docs/library.md's whole-platform snippet is a real program."""
    text = (ROOT / "docs" / "library.md").read_text()
    (code,) = [b.split("```")[0] for b in text.split("```python")[1:] if "GkeGpuPlatform(" in b.split("```")[0]]
    types = {r.type for r in run(lambda: exec(code, {"__name__": "docs"}))}
    assert {
        "gpuplane:gcp:GkeGpuPlatform",
        "gcp:container/nodePool:NodePool",
        "kubernetes:monitoring.googleapis.com/v1:PodMonitoring",
    } <= types


def test_monitoring_args_helper_still_builds_gpu_monitoring_args() -> None:
    from gpuplane.monitoring.standalone import monitoring_args, scrape_config

    args = monitoring_args("mine", "gpu-operator", region="us-west-2", integration="prometheus-operator")
    assert args["exporter"] == "gpu-operator" and args["monitoring"] == {"integration": "prometheus-operator"}
    text = scrape_config(args)
    assert "gpu-operator" in text and "replacement: us-west-2" in text
    with pytest.raises(ArgsError, match="exporter"):
        monitoring_args("mine", "nvidia")


def test_a_platform_key_cannot_override_the_kind() -> None:
    with pytest.raises(ArgsError) as info:
        run(lambda: GkeGpuPlatform("research", {**GKE, "kind": "gke-standard", "platform": "gke-nap"}))
    assert [p for p, _ in info.value.problems] == ["platform"] and "as `kind`" in str(info.value)


def test_a_platforms_undeclared_args_are_named_with_its_own_arguments() -> None:
    """Not the stack config's keys: Autopilot has no `aws`, `karpenter` or `fleet` argument to suggest."""
    err = _bad(
        GkeAutopilotPlatform,
        {"cluster": {"name": "research", "nmae": "x"}, "gcp": {**GKE["gcp"], "zonez": []}, "gpu_pols": []},
    )
    reasons = dict(err.problems)
    assert set(reasons) == {"cluster.nmae", "gcp.zonez", "gpu_pols"}
    assert "did you mean 'gpu_pools'" in reasons["gpu_pols"]
    assert reasons["gpu_pols"].endswith(
        "(known: cluster, gcp, gpu_pools, monitoring, smoke_test, health, validation, queues, storage, "
        "allow_unlisted_regions)"
    )


def test_monitoring_settings_misspelt_are_named_with_the_closest_setting() -> None:
    err = _bad(GpuMonitoring, {"cluster": "c", "monitoring": {"integraton": "install", "idle_percent": 5}})
    assert [(p, r.split(" (known")[0]) for p, r in err.problems] == [
        ("monitoring.integraton", "unknown argument (did you mean 'integration'?)")
    ]


def test_a_typed_platform_takes_queues_as_the_stack_does() -> None:
    queues = {"teams": [{"name": "vision", "quota": {"l4": 2}}], "create_namespaces": False}
    regs = run(lambda: GkeGpuPlatform("research", {**GKE, "queues": queues}))  # type: ignore[typeddict-item]
    assert any(r.type == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue" for r in regs), sorted({r.type for r in regs})


def test_autopilot_takes_its_own_kind_and_refuses_another() -> None:
    args = {"cluster": GKE["cluster"], "gcp": GKE["gcp"]}
    regs = run(lambda: GkeAutopilotPlatform("research", {**args, "kind": "gke-autopilot"}))  # type: ignore[typeddict-unknown-key]
    assert any(r.type == "gcp:container/cluster:Cluster" for r in regs)
    err = _bad(GkeAutopilotPlatform, {**args, "kind": "gke-standard"})
    assert [p for p, _ in err.problems] == ["kind"]


def test_bad_health_and_validation_args_name_their_argument_paths() -> None:
    from gpuplane import EksGpuPlatform

    args = {
        "kind": "eks-managed",
        "cluster": {"name": "research"},
        "aws": {"region": "us-east-1"},
        "gpu_pools": [{"name": "train", "gpu": "h100", "gpus_per_node": 8, "max_nodes": 2}],
        "health": {"repair": "often", "max_parallel_repair": 2},
        "validation": {"enabled": True, "nccl_nodes": 1},
    }
    err = _bad(EksGpuPlatform, args)
    problems = dict(err.problems)
    assert set(problems) == {"health.repair", "health.max_parallel_repair", "validation.nccl_nodes"}, err
    assert "did you mean 'max_parallel_repairs'?" in problems["health.max_parallel_repair"]
    assert "maxParallelRepairs" not in str(err)
    # a floor for a pool that does not exist (checked once the section's own fields are valid)
    args = {**args, "health": {}, "validation": {"enabled": True, "nccl_min_bus_bandwidth": {"trian": 300}}}
    err = _bad(EksGpuPlatform, args)
    assert [p for p, _ in err.problems] == ["validation.nccl_min_bus_bandwidth.trian"], err
    assert "did you mean 'train'?" in str(err) and "ncclMinBusBandwidth" not in str(err)
