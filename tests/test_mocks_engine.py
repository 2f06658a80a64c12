"""The mocks fill in what the engine and the providers would (engine-made names, provider project and
location), and refuse a plan that rests on a value they invented (`None` formatted into a name or ID)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane import DcgmExporter, EksGpuNodeGroups, ExporterHost, GkeGpuNodePools, GpuType, kubernetes_provider
from gpuplane.config import ConfigError
from gpuplane.plan.deploy import check
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.mocks_engine import engine_name, invented
from gpuplane.plan.runner import install, recorded
from gpuplane.plan.stackfile import StackFile


def plan(program: Callable[[], Any], **config: str) -> Any:
    stack = StackFile(project="mine", stack="dev", config=config)
    monitor = install(stack, PlanMocks())
    _sync_await(run_pulumi_func(program))
    return recorded(stack, monitor)


def inputs(p: Any, typ: str) -> list[dict[str, Any]]:
    return [r.inputs for r in p.resources if r.type == typ]


def test_an_eks_cluster_without_a_name_gets_the_engines_name() -> None:
    def program() -> None:
        cluster = eks.Cluster("ml", skip_default_node_group=True)
        role = aws.iam.Role("nodes", assume_role_policy=json.dumps({"Version": "2012-10-17", "Statement": []}))
        EksGpuNodeGroups(
            "gpu",
            {
                "cluster_name": cluster.eks_cluster.name,
                "node_role_arn": role.arn,
                "subnet_ids": ["subnet-1"],
                "gpu_pools": [{"name": "a10g", "gpu": GpuType.A10G, "max_nodes": 2}],
            },
        )

    p = plan(program, **{"aws:region": "us-west-2"})
    (group,) = inputs(p, "aws:eks/nodeGroup:NodeGroup")
    # pulumi-eks names its aws.eks.Cluster `<name>-eksCluster`, which the engine auto-names
    assert group["clusterName"] == engine_name("ml-eksCluster") and "None" not in json.dumps(p.to_json())
    assert check(p) == []


def test_a_gke_cluster_takes_its_project_and_location_from_provider_config() -> None:
    def program() -> None:
        sa = gcp.serviceaccount.Account("nodes", account_id="research-nodes")
        cluster = gcp.container.Cluster("research", remove_default_node_pool=True, initial_node_count=1)
        GkeGpuNodePools(
            "gpu",
            {
                "cluster": cluster.id,
                "location": cluster.location,
                "node_service_account": sa.email,
                "project": cluster.project,
                "gpu_pools": [{"name": "l4", "gpu": GpuType.L4, "spot": True, "max_nodes": 4}],
            },
        )

    p = plan(program, **{"gcp:project": "my-proj", "gcp:zone": "us-central1-a"})
    (pool,) = inputs(p, "gcp:container/nodePool:NodePool")
    assert pool["cluster"] == f"projects/my-proj/locations/us-central1-a/clusters/{engine_name('research')}"
    assert pool["project"] == "my-proj" and pool["location"] == "us-central1-a"
    assert pool["nodeConfig"]["serviceAccount"] == "research-nodes@my-proj.iam.gserviceaccount.com"
    assert check(p) == []


def test_the_simulator_finds_a_cluster_by_its_engine_made_name_and_provider_project() -> None:
    """Pools, and the exporter's pods on them, belong to the cluster though its name, project and location
    come from the engine and the provider (no false Pending pods)."""

    def program() -> None:
        sa = gcp.serviceaccount.Account("nodes", account_id="research-nodes")
        cluster = gcp.container.Cluster("research", remove_default_node_pool=True, initial_node_count=1)
        pools = GkeGpuNodePools(
            "gpu",
            {
                "cluster": cluster.id,
                "location": cluster.location,
                "node_service_account": sa.email,
                "gpu_pools": [{"name": "l4", "gpu": GpuType.L4, "spot": True, "max_nodes": 4}],
            },
        )
        provider = kubernetes_provider("research-k8s", cluster)
        sys_pool = gcp.container.NodePool(
            "system", cluster=cluster.id, node_count=1, node_config={"labels": {"gpuplane.io/role": "system"}}
        )
        DcgmExporter(
            "dcgm",
            {"host": ExporterHost.GKE, "gpu_nodes": pools.gpu_nodes},
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[pools, sys_pool]),
        )

    p = plan(program, **{"gcp:project": "my-proj", "gcp:zone": "europe-west4-a"})
    assert check(p) == [], [str(v) for v in check(p)]


def test_a_gke_cluster_without_location_or_provider_zone_is_refused() -> None:
    """terraform-provider-google GetLocation never falls back to the provider's region."""
    with pytest.raises(ConfigError) as info:
        plan(lambda: gcp.container.Cluster("c", initial_node_count=1), **{"gcp:project": "p", "gcp:region": "r"})
    assert [k for k, _ in info.value.problems] == ["gcp:zone"]


def test_a_gcp_providers_own_project_wins_over_stack_config() -> None:
    def program() -> None:
        other = gcp.Provider("other", project="other-proj", region="europe-west4")
        net = gcp.compute.Network("vpc", opts=pulumi.ResourceOptions(provider=other))
        pulumi.export("link", net.self_link)

    p = plan(program, **{"gcp:project": "my-proj"})
    assert "/projects/other-proj/" in p.outputs["link"]


def test_a_gcp_resource_without_any_project_is_refused_as_the_provider_does() -> None:
    with pytest.raises(ConfigError) as info:
        plan(lambda: gcp.compute.Network("vpc"))
    assert [k for k, _ in info.value.problems] == ["gcp:project"]
    assert "has no project" in str(info.value)


def test_a_value_the_mocks_invented_fails_the_plan() -> None:
    def program() -> None:
        k8s.core.v1.ConfigMap("cfg", data={"target": "projects/None/clusters/x"})

    with pytest.raises(ConfigError, match="holds the text 'None'"):
        plan(program)


@pytest.mark.parametrize(
    ("value", "made_up"),
    [
        ({"clusterName": "None"}, ["clusterName"]),
        ({"id": "projects/None/locations/x"}, ["id"]),
        ({"yaml": "replacement: None\n"}, ["yaml"]),
        ({"spec": {"clusterIP": "None"}}, []),  # a headless Service
        ({"name": "NoneSuch", "text": "Nonetheless"}, []),
    ],
)
def test_invented_finds_none_as_a_word_only(value: dict[str, Any], made_up: list[str]) -> None:
    assert [p.rsplit(".", 1)[-1] for p in invented(value)] == made_up


def test_a_kubernetes_object_without_a_name_gets_pulumi_kubernetes_autoname() -> None:
    """`<name>-<8 hex>` with the `pulumi.com/autonamed` annotation, so an unnamed object of yours never
    collides with gpuplane's object of the same logical name (the simulator used to take the logical name)."""

    def program() -> None:
        cluster = gcp.container.Cluster("c", location="us-central1", initial_node_count=1)
        provider = kubernetes_provider("c-k8s", cluster)
        k8s.core.v1.Namespace("gpu-monitoring", opts=pulumi.ResourceOptions(provider=provider))
        DcgmExporter("dcgm", {"host": ExporterHost.GKE}, opts=pulumi.ResourceOptions(provider=provider))

    p = plan(program, **{"gcp:project": "my-proj"})
    (mine,) = [r for r in p.resources if r.name == "gpu-monitoring"]
    assert "metadata" not in mine.inputs  # the program gave no name: the provider makes one at check time
    assert not [v for v in check(p) if v.rule == "kubernetes-name-unique"]


def test_a_node_pool_takes_its_location_from_the_cluster_id() -> None:
    def program() -> None:
        cluster = gcp.container.Cluster("c", location="europe-west4", initial_node_count=1)
        gcp.container.NodePool("pool", cluster=cluster.id, node_count=1)

    p = plan(program, **{"gcp:project": "my-proj"})
    (pool,) = [r for r in p.resources if r.type == "gcp:container/nodePool:NodePool"]
    assert pool.filled.get("location") == "europe-west4"  # terraform-provider-google parses it from the ID


def test_a_node_pools_instance_groups_are_in_its_zones() -> None:
    def program() -> None:
        cluster = gcp.container.Cluster("c", location="europe-west4-a", initial_node_count=1)
        gcp.container.NodePool("zonal", cluster=cluster.id, node_count=1)
        gcp.container.NodePool(
            "spread", cluster=cluster.id, node_count=1, node_locations=["europe-west4-b", "europe-west4-c"]
        )

    monitor = install(StackFile(project="mine", stack="dev", config={"gcp:project": "my-proj"}), PlanMocks())
    _sync_await(run_pulumi_func(program))
    urls = {
        r.urn.rsplit("::", 1)[-1]: [u.split("/zones/")[1].split("/")[0] for u in r.state["instanceGroupUrls"]]
        for r in monitor.resources.values()
        if r.urn.endswith(("::zonal", "::spread"))
    }
    assert urls == {"zonal": ["europe-west4-a"], "spread": ["europe-west4-b", "europe-west4-c"]}


def test_an_unnamed_helm_release_gets_its_autoname_and_collides_with_nothing() -> None:
    def program() -> None:
        cluster = gcp.container.Cluster("c", location="us-central1", initial_node_count=1)
        provider = kubernetes_provider("c-k8s", cluster)
        on = pulumi.ResourceOptions(provider=provider)
        k8s.helm.v3.Release("a", name="monitoring", chart="x", namespace="m", opts=on)
        k8s.helm.v3.Release("monitoring", chart="y", namespace="m", opts=on)

    p = plan(program, **{"gcp:project": "my-proj"})
    assert not [v for v in check(p) if v.rule == "kubernetes-name-unique"]
