"""gpuplane as a library: typed components that take Outputs, chain through their outputs, and refuse
bad arguments with one error naming the argument path (before registering anything)."""

from __future__ import annotations

import json
import pydoc
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

import gpuplane
from gpuplane import ConfigError
from gpuplane.args.checks import ArgsError
from gpuplane.args.inputs import AmiType, ExporterHost, GpuType, SharingStrategy
from gpuplane.aws.karpenter_pools import KarpenterGpuNodePools
from gpuplane.aws.node_groups import EksGpuNodeGroups
from gpuplane.config import parse_config
from gpuplane.gcp.pools import GkeGpuNodePools
from gpuplane.nvidia.dcgm import DcgmExporter
from gpuplane.nvidia.operator import GpuOperator
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.runner import install
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT


def run(program: Callable[[], Any]) -> list[Any]:
    # A user's stack names the GCP provider's project (GCP resources without one are refused, as by the provider).
    monitor = install(StackFile(project="lib", stack="test", config={"gcp:project": "lib-project"}), PlanMocks())
    _sync_await(run_pulumi_func(program))
    return list(monitor.registrations)


def of_type(regs: list[Any], typ: str) -> list[Any]:
    return [r for r in regs if r.type == typ]


def test_gke_pools_take_the_clusters_outputs() -> None:
    def program() -> None:
        cluster = gcp.container.Cluster("mine", name="mine", project="p", location="us-central1", initial_node_count=1)
        sa = gcp.serviceaccount.Account("nodes", account_id="mine-gpu-nodes", project="p")
        GkeGpuNodePools(
            "gpu",
            {
                "cluster": cluster.id,
                "location": cluster.location,
                "node_service_account": sa.email,
                "gpu_pools": [{"name": "l4", "gpu": GpuType.L4, "max_nodes": 2, "spot": True}],
            },
        )

    regs = run(program)
    (pool,) = of_type(regs, "gcp:container/nodePool:NodePool")
    assert pool.inputs["cluster"].endswith("/clusters/mine")  # the cluster's id, an Output
    assert pool.inputs["location"] == "us-central1"
    assert pool.inputs["nodeConfig"]["serviceAccount"].startswith("mine-gpu-nodes@")
    assert pool.inputs["nodeConfig"]["labels"]["gpuplane.io/pool"] == "l4"
    # The location was an Output: the pool follows the cluster's node locations.
    assert "nodeLocations" not in pool.inputs


def test_eks_node_groups_take_the_clusters_outputs() -> None:
    def program() -> None:
        role = aws.iam.Role("nodes", assume_role_policy="{}")
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        subnets = [aws.ec2.Subnet(f"private-{i}", vpc_id=vpc.id, cidr_block=f"10.0.{i}.0/24") for i in range(2)]
        vpc_config = {"subnet_ids": [s.id for s in subnets]}
        control = aws.eks.Cluster("mine", name="mine", role_arn=role.arn, vpc_config=vpc_config)
        EksGpuNodeGroups(
            "gpu",
            {
                "cluster_name": control.name,
                "node_role_arn": role.arn,
                "subnet_ids": pulumi.Output.all(*[s.id for s in subnets]),
                "gpu_pools": [{"name": "a10g", "gpu": GpuType.A10G, "max_nodes": 3}],
                "cluster_label": "mine",
            },
        )

    regs = run(program)
    (group,) = of_type(regs, "aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["clusterName"] == "mine"
    assert group.inputs["nodeRoleArn"].startswith("arn:aws:iam::") and ":role/nodes" in group.inputs["nodeRoleArn"]
    assert len(group.inputs["subnetIds"]) == 2 and all(s.startswith("subnet-") for s in group.inputs["subnetIds"])
    assert group.inputs["taints"][0] == {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
    tags = of_type(regs, "aws:autoscaling/tag:Tag")
    assert tags and all(t.inputs["autoscalingGroupName"].startswith("eks-mine-a10g") for t in tags)


def test_karpenter_pools_take_a_role_output() -> None:
    def program() -> None:
        role = aws.iam.Role("karpenter-nodes", name="KarpenterNodeRole-mine", assume_role_policy="{}")
        KarpenterGpuNodePools(
            "gpu",
            {
                "cluster_name": "mine",
                "node_role": role.name,
                "gpu_pools": [{"name": "l4", "gpu": GpuType.L4, "max_nodes": 4, "spot": True}],
            },
        )

    regs = run(program)
    (node_class,) = of_type(regs, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert node_class.inputs["spec"]["role"] == "KarpenterNodeRole-mine"
    assert node_class.inputs["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "mine"}}]
    (node_pool,) = of_type(regs, "kubernetes:karpenter.sh/v1:NodePool")
    assert node_pool.inputs["spec"]["template"]["metadata"]["labels"]["gpuplane.io/cluster"] == "mine"


def karpenter_pools(gpu_pools: list[Any]) -> KarpenterGpuNodePools:
    """Karpenter pools `gpu` on a cluster of one's own (`mine`)."""
    return KarpenterGpuNodePools(
        "gpu", {"cluster_name": "mine", "node_role": "KarpenterNodeRole-mine", "gpu_pools": gpu_pools}
    )


def test_software_chains_on_a_pool_components_outputs() -> None:
    """The exporter and the operator tolerate exactly what the pools' outputs say; placement() reads them."""
    seen: dict[str, Any] = {}

    def program() -> None:
        pools = karpenter_pools(
            [
                {"name": "l4", "gpu": GpuType.L4, "max_nodes": 4},
                {
                    "name": "shared",
                    "gpu": GpuType.L4,
                    "max_nodes": 2,
                    "taints": [{"key": "team", "value": "ml"}],
                    "sharing": {"strategy": SharingStrategy.TIME_SLICING, "replicas": 4},
                },
            ]
        )
        GpuOperator("op", {"node_image": AmiType.AL2023_X86_64_NVIDIA, "gpu_nodes": pools.gpu_nodes})
        nodes = pulumi.Output.from_input(pools.gpu_nodes)
        DcgmExporter("dcgm", {"host": ExporterHost.EKS_AUTOMODE, "gpu_nodes": nodes})
        seen["fragment"] = gpuplane.placement(pools.gpu_nodes[1], gpus=1)

    regs = run(program)
    releases = {r.inputs["chart"]: r.inputs["values"] for r in of_type(regs, "kubernetes:helm.sh/v3:Release")}
    team = {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
    assert team in releases["gpu-operator"]["daemonsets"]["tolerations"]
    assert team in releases["dcgm-exporter"]["tolerations"]  # from an Output of the pools' outputs
    (cm,) = of_type(regs, "kubernetes:core/v1:ConfigMap")
    assert set(cm.inputs["data"]) == {"default", "shared"}
    fragment = seen["fragment"]
    assert fragment["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["shared"]} in fragment["affinity"][
        "nodeAffinity"
    ]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert team in fragment["tolerations"]


def test_pool_outputs_place_pods_as_the_stack_config_does() -> None:
    holder: dict[str, Any] = {}

    def program() -> None:
        holder["pools"] = GkeGpuNodePools(
            "gpu",
            {
                "cluster": "research",
                "location": "us-central1",
                "node_service_account": "n@p.iam.gserviceaccount.com",
                "gpu_pools": [{"name": "l4", "gpu": GpuType.L4, "max_nodes": 2, "spot": True, "gpus_per_node": 2}],
            },
        )

    run(program)
    cfg = parse_config(
        {
            "platform": "gke-standard",
            "cluster": {"name": "research"},
            "gcp": {"project": "acme-research", "region": "us-central1"},
            "gpuPools": [{"name": "l4", "gpu": "l4", "maxNodes": 2, "spot": True, "gpusPerNode": 2}],
        }
    )
    nodes = holder["pools"].gpu_nodes[0]
    assert gpuplane.placement(nodes, gpus=2) == gpuplane.placement(cfg, "l4", gpus=2)
    assert nodes["labels"]["gpuplane.io/cluster"] == "research" and nodes["resource"] == "nvidia.com/gpu"


BAD = [
    (
        GkeGpuNodePools,
        {
            "cluster": "c",
            "location": "us-central1",
            "node_service_account": "n@p.iam.gserviceaccount.com",
            "gpu_pools": [{"name": "l4", "gpu": "a1000", "max_nodes": 1}, {"name": "x", "gpu": "l4", "max_nodes": 0}],
        },
        ["gpu_pools[0].gpu", "gpu_pools[1].max_nodes"],
    ),
    (
        EksGpuNodeGroups,
        {
            "cluster_name": "c",
            "node_role_arn": "arn",
            "subnet_ids": [],
            "gpu_pools": [{"name": "a", "gpu": "a10g", "max_nodes": 1, "machine_type": "g5.xlarge", "gpus_per_nod": 1}],
        },
        ["gpu_pools[0].machine_type", "gpu_pools[0].gpus_per_nod"],
    ),
    (
        KarpenterGpuNodePools,
        {
            "cluster_name": "c",
            "node_role": "r",
            "gpu_pools": [{"name": "a", "gpu": "l4", "max_nodes": 1}],
            "settings": {"consolidate_after": "soon"},
        },
        ["settings.consolidate_after"],
    ),
    (GkeGpuNodePools, {"cluster": "c"}, ["location", "node_service_account", "gpu_pools"]),
    # Misspelt top-level arguments are named with the rest, never ignored (issue 24's three, and the others).
    (
        GkeGpuNodePools,
        {
            "cluster": "c",
            "location": "us-central1",
            "node_service_account": "n@p.iam.gserviceaccount.com",
            "cluster_lable": "ml",
            "gpu_pools": [{"name": "l4", "gpu": "a1000", "max_nodes": 1}],
        },
        ["cluster_lable", "gpu_pools[0].gpu"],
    ),
    (
        GkeGpuNodePools,
        {"cluster": "c", "cluster_lable": "ml"},
        ["cluster_lable", "location", "node_service_account", "gpu_pools"],
    ),
    (gpuplane.GpuOperator, {"gpu_node": [], "node_image": "AL1"}, ["gpu_node", "node_image"]),
    (gpuplane.DcgmExporter, {"host": "gce", "namepsace": "m"}, ["namepsace", "host"]),
    (
        KarpenterGpuNodePools,
        {
            "cluster_name": "c",
            "node_role": "r",
            "gpu_pools": [{"name": "a", "gpu": "l4", "max_nodes": 1}],
            "setings": {},
        },
        ["setings"],
    ),
    (gpuplane.GpuMonitoring, {"cluster": "c", "exporter_namspace": "m"}, ["exporter_namspace"]),
    (gpuplane.KueueQueues, {"teams": [{"name": "a", "quota": {}, "cohortt": "x"}]}, ["teams[0].cohortt"]),
]


@pytest.mark.parametrize("component,args,paths", BAD, ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(BAD)])
def test_bad_args_name_every_argument_path_before_registering(component: Any, args: Any, paths: list[str]) -> None:
    errors: list[ArgsError] = []

    def program() -> None:
        try:
            component("bad", args)
        except ArgsError as exc:
            errors.append(exc)

    regs = run(program)
    assert [r.type for r in regs] == ["pulumi:pulumi:Stack"]  # nothing registered, not even the component
    (err,) = errors
    assert isinstance(err, ConfigError)
    assert [p for p, _ in err.problems] == paths, err
    assert f"invalid arguments of {component.__name__} 'bad'" in str(err)
    assert "gpusPerNode" not in str(err)  # argument spelling, not the stack's


def test_unknown_arg_suggests_the_argument_spelling() -> None:
    with pytest.raises(ArgsError) as info:
        run(
            lambda: EksGpuNodeGroups(
                "bad",
                {
                    "cluster_name": "c",
                    "node_role_arn": "arn",
                    "subnet_ids": [],
                    "gpu_pools": [{"name": "a", "gpu": "a10g", "max_nodes": 1, "gpus_per_nod": 1}],  # type: ignore[typeddict-unknown-key]
                },
            )
        )
    assert "did you mean 'gpus_per_node'?" in str(info.value)


def test_placement_is_the_function_and_platform_help_is_gpuplanes() -> None:
    import gpuplane.scheduling.placement  # noqa: F401  (importing the module must not shadow the function)
    from gpuplane import placement

    assert callable(placement) and placement.__module__ == "gpuplane.scheduling.placement"
    assert gpuplane.placement is placement
    for cls in (gpuplane.GkeGpuPlatform, gpuplane.GkeAutopilotPlatform, gpuplane.EksGpuPlatform):
        text = pydoc.render_doc(cls.__init__)
        assert "validated stack config" in text and "ComponentResource" not in text
    for cls in (gpuplane.GkeGpuNodePools, gpuplane.EksGpuNodeGroups, gpuplane.KarpenterGpuNodePools):
        assert "ArgsError" in (cls.__init__.__doc__ or "")


def test_monitoring_takes_the_exporters_namespace_as_an_output() -> None:
    """Components chain: `GpuMonitoring(exporter_namespace=dcgm.namespace)` renders its scrape config with
    the exporter's namespace once known (it used to fail rendering an Output into YAML)."""
    outputs: dict[str, Any] = {}

    def program() -> None:
        dcgm = DcgmExporter("dcgm", {"host": ExporterHost.GKE, "namespace": "gpu-metrics-here"})
        mon = gpuplane.GpuMonitoring(
            "mon",
            {
                "cluster": "research",
                "exporter_namespace": dcgm.namespace,
                "monitoring": {"integration": "scrape-config"},
            },
        )
        outputs["scrape"] = mon.scrape_config

    regs = run(program)
    assert "gpuplane-arg-" not in json.dumps([r.inputs for r in regs])
    scrape = _sync_await(outputs["scrape"].future())
    assert "gpu-metrics-here" in scrape and "gpuplane-arg-" not in scrape


def test_kubeconfig_helpers_for_your_own_clusters() -> None:
    """A public way to reach one's own GKE or EKS cluster: a secret kubeconfig with the cloud's auth plugin
    and a provider on it (the examples use no private module for this)."""
    import pulumi_eks as eks
    import yaml as yamllib

    got: dict[str, Any] = {}

    def program() -> None:
        gke = gcp.container.Cluster("g", name="g", location="europe-west4", initial_node_count=1)
        role = aws.iam.Role("r", assume_role_policy="{}")
        plain = aws.eks.Cluster("e", name="e", role_arn=role.arn, vpc_config={"subnet_ids": ["subnet-1"]})
        peks = eks.Cluster("p", name="p", skip_default_node_group=True)
        got.update(gke=gpuplane.gke_kubeconfig(gke), eks=gpuplane.eks_kubeconfig(plain))
        got["peks"] = gpuplane.eks_kubeconfig(peks)
        gpuplane.kubernetes_provider("g-k8s", gke)
        with pytest.raises(TypeError, match="not a cluster gpuplane knows"):
            gpuplane.kubernetes_provider("x", role)

    regs = run(program)
    assert _sync_await(got["gke"].is_secret())
    gke = yamllib.safe_load(_sync_await(got["gke"].future()))
    assert gke["current-context"] == "gke_lib-project_europe-west4_g"
    assert gke["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    for key, name in (("eks", "e"), ("peks", "p")):
        doc = yamllib.safe_load(_sync_await(got[key].future()))
        args = doc["users"][0]["user"]["exec"]["args"]
        assert args[:4] == ["eks", "get-token", "--cluster-name", name] and "--region" in args, doc
        assert doc["clusters"][0]["cluster"]["server"].startswith("https://")
    (provider,) = [r for r in regs if r.type == "pulumi:providers:kubernetes"]
    assert provider.inputs["kubeconfig"] == "[secret]" and provider.inputs["enableServerSideApply"] == "true"


def test_the_examples_use_only_gpuplanes_public_api() -> None:
    import re

    for main in (ROOT / "examples").glob("*/__main__.py"):
        private = re.findall(r"^\s*(?:from|import) (gpuplane\.[\w.]+)", main.read_text(), re.M)
        assert [m for m in private if m != "gpuplane.testing"] == [], main


def test_errors_speak_the_callers_language() -> None:
    """A label taken from `cluster_name` is reported there (with how to set it), and a region typo's advice is
    an argument the component takes, not a stack key."""
    with pytest.raises(ArgsError) as info:
        run(
            lambda: EksGpuNodeGroups(
                "e",
                {
                    "cluster_name": "projects/p/locations/us-central1/clusters/" + "c" * 30,
                    "node_role_arn": "arn",
                    "subnet_ids": [],
                    "gpu_pools": [{"name": "a", "gpu": "a10g", "max_nodes": 1}],
                },
            )
        )
    ((path, reason),) = info.value.problems
    assert path == "cluster_name" and "pass `cluster_label`" in reason
    pools = {"node_service_account": "a@b", "gpu_pools": [{"name": "l4", "gpu": "l4", "max_nodes": 1}]}
    with pytest.raises(ArgsError) as info:
        run(lambda: GkeGpuNodePools("g", {"cluster": "c", "location": "us-centrall1", **pools}))
    ((path, reason),) = info.value.problems
    assert path == "location" and "did you mean 'us-central1'?" in reason
    assert "allow_unlisted_regions: True" in reason and "gpuplane:" not in reason
    # ... and the argument exists: a region newer than the catalog plans.
    regs = run(
        lambda: GkeGpuNodePools("g", {"cluster": "c", "location": "us-east9", "allow_unlisted_regions": True, **pools})
    )
    assert of_type(regs, "gcp:container/nodePool:NodePool")


def test_pool_outputs_carry_their_ceiling_for_kueue_and_the_exporter() -> None:
    """`gpu_nodes` say how far each pool reaches, so `KueueQueues` refuses a quota past it and
    `DcgmExporter` sizes its pod quota without ceilings or max_gpu_nodes given by hand."""
    errors: list[ArgsError] = []
    quotas: list[Any] = []

    def program() -> None:
        pools = GkeGpuNodePools(
            "gpu",
            {
                "cluster": "c",
                "location": "us-central1",
                "node_service_account": "n@p.iam.gserviceaccount.com",
                "gpu_pools": [{"name": "l4", "gpu": GpuType.L4, "max_nodes": 80}],
            },
        )
        (l4,) = pools.gpu_nodes
        assert l4["nodes"] == 80 and l4["ceiling"] == 80
        DcgmExporter("dcgm", {"host": ExporterHost.GKE, "gpu_nodes": pools.gpu_nodes})
        try:
            gpuplane.KueueQueues("q", {"gpu_nodes": pools.gpu_nodes, "teams": [{"name": "a", "quota": {"l4": 81}}]})
        except ArgsError as exc:
            errors.append(exc)

    regs = run(program)
    (err,) = errors
    assert "l4: 81 > 80" in str(err)
    quotas = [r.inputs for r in regs if r.type == "kubernetes:core/v1:ResourceQuota"]
    assert quotas and quotas[0]["spec"]["hard"]["pods"] == "160"


def test_the_operators_own_nodes_are_an_argument() -> None:
    def values(args: dict[str, Any]) -> Any:
        regs = run(lambda: GpuOperator("op", args))
        (release,) = [r for r in regs if r.type == "kubernetes:helm.sh/v3:Release"]
        return (
            json.loads(release.inputs["values"])
            if isinstance(release.inputs["values"], str)
            else release.inputs["values"]
        )

    assert values({})["operator"]["nodeSelector"] == {"gpuplane.io/role": "system"}
    assert values({"system_node_selector": {"pool": "infra"}})["operator"]["nodeSelector"] == {"pool": "infra"}
    assert values({"system_node_selector": {}})["operator"]["nodeSelector"] == {}


def test_platforms_expose_their_provider_and_gpu_nodes() -> None:
    """What a user needs next: the platform's Kubernetes provider for their own resources and each pool's
    `gpu_nodes` for placement, no stack config rebuilt."""
    from .conftest import load

    got: dict[str, Any] = {}

    def program() -> None:
        from gpuplane.config import parse_flat

        cfg = parse_flat(load("gcp-standard", ROOT).flat_config())
        platform = gpuplane.GkeGpuPlatform.from_config("ml", cfg)
        got["names"] = [n["pool"] for n in platform.gpu_nodes]
        got["pod"] = gpuplane.placement(platform.gpu_nodes[0], gpus=1)
        import pulumi_kubernetes as k8s

        k8s.core.v1.ConfigMap("mine", data={"a": "b"}, opts=pulumi.ResourceOptions(provider=platform.k8s_provider))

    regs = run(program)
    assert got["names"] == ["inference", "training"] and got["pod"]["resources"]["limits"]
    (mine,) = [r for r in regs if r.type == "kubernetes:core/v1:ConfigMap" and r.name == "mine"]
    assert mine.provider and "pulumi:providers:kubernetes::ml-k8s" in mine.provider


def test_the_exporters_pod_quota_follows_gpu_nodes_given_as_an_output() -> None:
    """Through the multi-language package every dependent input is an Output: the quota still sizes itself."""

    def program() -> None:
        nodes = [{"pool": "l4", "labels": {}, "taints": [], "resource": "nvidia.com/gpu", "nodes": 70}]
        DcgmExporter("dcgm", {"host": ExporterHost.GKE, "gpu_nodes": pulumi.Output.from_input(nodes)})

    (quota,) = [r.inputs for r in run(program) if r.type == "kubernetes:core/v1:ResourceQuota"]
    assert quota["spec"]["hard"]["pods"] == "140"


@pytest.mark.parametrize("region", ["europe-west4", "asia-northeast1", "us-east5"])
def test_an_output_location_is_unknown_to_the_rules_not_a_stand_in_region(region: str) -> None:
    # The region is an Output: no rule may judge the pool's zones or reservation against some other region.
    zone = {"europe-west4": "europe-west4-b", "asia-northeast1": "asia-northeast1-b", "us-east5": "us-east5-a"}[region]

    def program() -> None:
        cluster = gcp.container.Cluster("mine", name="mine", project="p", location=region, initial_node_count=1)
        pool = {"name": "h100", "gpu": GpuType.H100, "gpus_per_node": 8, "max_nodes": 2, "zones": [zone]}
        reserved = {**pool, "name": "held", "capacity": ["reserved"], "reservation": {"names": ["r1"], "zone": zone}}
        GkeGpuNodePools(
            "gpu",
            {
                "cluster": cluster.id,
                "location": cluster.location,
                "node_service_account": "nodes@p.iam.gserviceaccount.com",
                "gpu_pools": [pool, reserved],  # type: ignore[list-item]
            },
        )

    pools = of_type(run(program), "gcp:container/nodePool:NodePool")
    assert [p.inputs["nodeLocations"] for p in pools] == [[zone], [zone]]  # the pool's own zones are kept
    assert all(p.inputs["location"] == region for p in pools)


@pytest.mark.parametrize("component", ["node-groups", "karpenter"])
def test_eks_components_judge_no_zone_against_a_region_they_were_not_given(component: str) -> None:
    # Neither component takes a region (it is the provider's): a reservation in eu-west-1 must plan.
    pool = {
        "name": "h100",
        "gpu": GpuType.H100,
        "max_nodes": 2,
        "capacity": ["reserved"],
        "reservation": {"ids": ["cr-0123456789abcdef0"], "zone": "eu-west-1a"},
    }

    def program() -> None:
        if component == "node-groups":
            EksGpuNodeGroups(
                "gpu",
                {
                    "cluster_name": "mine",
                    "node_role_arn": "arn:aws:iam::111122223333:role/nodes",
                    "subnet_ids": ["subnet-0a"],
                    "gpu_pools": [pool],  # type: ignore[list-item]
                },
            )
        else:
            KarpenterGpuNodePools(
                "gpu",
                {"cluster_name": "mine", "node_role": "KarpenterNodeRole-mine", "gpu_pools": [pool]},  # type: ignore[list-item]
            )

    regs = run(program)
    assert of_type(regs, "aws:eks/nodeGroup:NodeGroup") or of_type(regs, "kubernetes:karpenter.sh/v1:NodePool")
