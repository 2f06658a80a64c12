"""Components take the cluster object a user already has (`cluster=`), as pulumi-eks's
`ManagedNodeGroup(cluster=...)` does: a `pulumi_eks.Cluster`, an `aws.eks.Cluster` or a
`gcp.container.Cluster`. They read its name, version, subnets, ID, location and project from its outputs,
and put their Kubernetes resources on a provider for it, never on the ambient kubeconfig."""

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
from pulumi.runtime.sync_await import _sync_await

from gpuplane import (
    ArgsError,
    DcgmExporter,
    EksGpuNodeGroups,
    ExporterHost,
    GkeGpuNodePools,
    GpuMonitoring,
    GpuOperator,
    GpuType,
    KarpenterGpuNodePools,
    KueueQueues,
)
from gpuplane.plan.deploy import check
from gpuplane.plan.mocks_engine import engine_name

from .test_mocks_engine import plan

POLICY = json.dumps({"Version": "2012-10-17", "Statement": []})


A10G = {"name": "a10g", "gpu": "a10g", "max_nodes": 2}
GPUDIRECT = {"name": "big", "gpu": "h200", "gpus_per_node": 8, "network": "gpudirect", "spot": True, "max_nodes": 2}
ELSEWHERE = {
    "name": "held",
    "gpu": "l4",
    "max_nodes": 2,
    "zones": ["us-central1-a"],
    "capacity": ["reserved", "on-demand"],
    "reservation": {"zone": "us-central1-b"},
}


def eks_cluster(name: str = "ml") -> Any:
    return eks.Cluster(name, skip_default_node_group=True, vpc_id="vpc-1", private_subnet_ids=["subnet-a"])


def of(p: Any, typ: str) -> list[Any]:
    return [r for r in p.resources if r.type == typ]


def kube_resources(p: Any) -> list[Any]:
    return [r for r in p.resources if r.type.startswith("kubernetes:") and r.type != "pulumi:providers:kubernetes"]


def test_a_pulumi_eks_cluster_gives_node_groups_software_and_monitoring_what_they_need() -> None:
    scrape: dict[str, Any] = {}

    def program() -> None:
        cluster = eks.Cluster(
            "ml", skip_default_node_group=True, vpc_id="vpc-1", private_subnet_ids=["subnet-a", "subnet-b"]
        )
        role = aws.iam.Role("nodes", assume_role_policy=POLICY)
        system = eks.ManagedNodeGroup(
            "system", cluster=cluster, node_role_arn=role.arn, labels={"gpuplane.io/role": "system"}
        )
        pools = EksGpuNodeGroups(
            "gpu",
            {
                "cluster": cluster,
                "node_role_arn": role.arn,
                "gpu_pools": [{"name": "a10g", "gpu": GpuType.A10G, "max_nodes": 2}],
            },
        )
        operator = GpuOperator(
            "operator",
            {"cluster": cluster, "gpu_nodes": pools.gpu_nodes},
            opts=pulumi.ResourceOptions(depends_on=[system]),
        )
        mon = GpuMonitoring(
            "metrics",
            {"cluster": cluster, "exporter": "gpu-operator", "exporter_namespace": operator.namespace},
            opts=pulumi.ResourceOptions(depends_on=[operator]),
        )
        scrape["job"] = mon.scrape_config

    p = plan(program, **{"aws:region": "us-west-2"})
    (group,) = of(p, "aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["clusterName"] == engine_name("ml-eksCluster")  # the engine-made name, read from it
    assert group.inputs["subnetIds"] == ["subnet-a", "subnet-b"]  # its private subnets
    assert group.inputs["version"]  # the nodes follow the control plane's version
    assert group.inputs["labels"]["gpuplane.io/cluster"] == "ml"  # the label defaults to its resource name
    providers = {r.name: r for r in of(p, "pulumi:providers:kubernetes")}
    assert set(providers) == {"operator-k8s", "metrics-k8s"}
    # each provider's kubeconfig is the cluster's (`eks_kubeconfig`, tested in test_library), a secret
    assert all(pr.inputs["kubeconfig"] == "[secret]" for pr in providers.values())
    assert all(r.provider for r in kube_resources(p)), [r.name for r in kube_resources(p) if not r.provider]
    job = _sync_await(scrape["job"].future())
    assert engine_name("ml-eksCluster") in job and "us-west-2" in job  # its name and region label the series
    assert check(p) == [], [str(v) for v in check(p)]


def test_an_aws_eks_cluster_gives_karpenter_its_name_and_provider() -> None:
    def program() -> None:
        role = aws.iam.Role("control", assume_role_policy=POLICY)
        cluster = aws.eks.Cluster("research", role_arn=role.arn, vpc_config={"subnet_ids": ["subnet-a"]})
        KarpenterGpuNodePools(
            "gpu",
            {
                "cluster": cluster,
                "node_role": "KarpenterNodeRole-research",
                "gpu_pools": [{"name": "l4", "gpu": "l4", "max_nodes": 2}],
            },
        )

    p = plan(program, **{"aws:region": "eu-west-1"})
    (node_class,) = of(p, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    name = engine_name("research")
    assert node_class.inputs["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": name}}]
    assert node_class.provider and "gpu-k8s" in node_class.provider
    (pool,) = of(p, "kubernetes:karpenter.sh/v1:NodePool")
    assert pool.inputs["spec"]["template"]["metadata"]["labels"]["gpuplane.io/cluster"] == "research"


def test_a_gke_cluster_with_its_project_from_provider_config_gives_pools_exporter_and_queues_all() -> None:
    made: dict[str, Any] = {}

    def program() -> None:
        sa = gcp.serviceaccount.Account("nodes", account_id="research-nodes")
        cluster = gcp.container.Cluster("research", remove_default_node_pool=True, initial_node_count=1)
        system = gcp.container.NodePool(
            "system", cluster=cluster.id, node_count=1, node_config={"labels": {"gpuplane.io/role": "system"}}
        )
        pools = GkeGpuNodePools(
            "gpu",
            {
                "cluster": cluster,
                "node_service_account": sa.email,
                "gpu_pools": [{"name": "l4", "gpu": "l4", "max_nodes": 4}],
            },
        )
        after = pulumi.ResourceOptions(depends_on=[pools, system])
        dcgm = DcgmExporter(
            "dcgm", {"cluster": cluster, "host": ExporterHost.GKE, "gpu_nodes": pools.gpu_nodes}, opts=after
        )
        made["queues"] = KueueQueues(
            "queues",
            {"cluster": cluster, "gpu_nodes": pools.gpu_nodes, "teams": [{"name": "vision", "quota": {"l4": 4}}]},
            opts=after,
        )
        GpuMonitoring(
            "metrics",
            {"cluster": cluster, "exporter_namespace": dcgm.namespace},
            opts=pulumi.ResourceOptions(depends_on=[dcgm]),
        )

    p = plan(program, **{"gcp:project": "my-proj", "gcp:zone": "europe-west4-a"})
    # No topology here: the pool's flavor is named after the pool, and the output says so.
    assert made["queues"].flavors == {"l4": "l4"}
    (pool,) = [r for r in of(p, "gcp:container/nodePool:NodePool") if r.name == "gpu-l4"]
    assert pool.inputs["cluster"] == f"projects/my-proj/locations/europe-west4-a/clusters/{engine_name('research')}"
    assert pool.inputs["project"] == "my-proj" and pool.inputs["location"] == "europe-west4-a"
    providers = [r.name for r in of(p, "pulumi:providers:kubernetes")]
    assert sorted(providers) == ["dcgm-k8s", "metrics-k8s", "queues-k8s"]
    assert all(r.provider for r in kube_resources(p))
    assert "None" not in json.dumps(p.to_json())
    assert check(p) == [], [str(v) for v in check(p)]


def test_a_provider_given_in_opts_wins_over_one_made_for_the_cluster() -> None:
    def program() -> None:
        cluster = gcp.container.Cluster("c", location="us-central1", initial_node_count=1)
        mine = k8s.Provider("mine", kubeconfig="{}")
        DcgmExporter("dcgm", {"cluster": cluster, "host": ExporterHost.GKE}, opts=pulumi.ResourceOptions(provider=mine))

    p = plan(program, **{"gcp:project": "my-proj"})
    assert [r.name for r in of(p, "pulumi:providers:kubernetes")] == ["mine"]
    assert all("::mine::" in r.provider for r in kube_resources(p))


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda c: EksGpuNodeGroups("g", {"cluster": c.id, "node_role_arn": "r", "gpu_pools": []}), "cluster"),
        (lambda c: KarpenterGpuNodePools("g", {"cluster": c, "node_role": "r", "gpu_pools": []}), "cluster"),
        (lambda c: EksGpuNodeGroups("g", {"node_role_arn": "r", "gpu_pools": []}), "cluster_name"),
        (lambda c: GpuOperator("o", {"cluster": "my-cluster"}), "cluster"),
        (lambda c: GkeGpuNodePools("g", {"cluster": c.id, "node_service_account": "s", "gpu_pools": []}), "location"),
        (
            lambda c: GkeGpuNodePools("g", {"cluster": eks_cluster(), "node_service_account": "s", "gpu_pools": []}),
            "cluster",
        ),
        (
            lambda c: EksGpuNodeGroups(
                "g", {"cluster": eks_cluster("ML_Cluster"), "node_role_arn": "r", "gpu_pools": [A10G]}
            ),
            "cluster",
        ),
        (
            lambda c: GkeGpuNodePools(
                "g", {"cluster": c, "node_service_account": "s", "project": "BAD", "gpu_pools": []}
            ),
            "project",
        ),
        (
            lambda c: GkeGpuNodePools(
                "g", {"cluster": c, "node_service_account": "s", "zones": ["mars-west1-a"], "gpu_pools": []}
            ),
            "zones",
        ),
        (
            lambda c: GkeGpuNodePools("g", {"cluster": c, "node_service_account": "s", "gpu_pools": [GPUDIRECT]}),
            "gpu_pools[0].network",
        ),
        (
            lambda c: GkeGpuNodePools("g", {"cluster": c, "node_service_account": "s", "gpu_pools": [ELSEWHERE]}),
            "gpu_pools[0].reservation.zone",
        ),
    ],
    ids=[
        "output-for-object",
        "gke-cluster-to-eks",
        "no-cluster",
        "name-for-object",
        "id-without-location",
        "eks-cluster-to-gke",
        "label-from-the-object",
        "bad-project-with-unknown-location",
        "region-from-zones",
        "gpudirect-without-its-networks",
        "reservation-outside-the-pools-zones",
    ],
)
def test_a_wrong_or_missing_cluster_is_one_clear_error(make: Callable[[Any], Any], problem: str) -> None:
    errors: list[ArgsError] = []

    def program() -> None:
        cluster = gcp.container.Cluster("c", location="us-central1", initial_node_count=1)
        try:
            make(cluster)
        except ArgsError as exc:
            errors.append(exc)

    p = plan(program, **{"gcp:project": "my-proj", "aws:region": "us-east-1"})
    (error,) = errors
    assert problem in [path for path, _ in error.problems], error.problems
    assert len({path for path, _ in error.problems}) == len(error.problems)  # each path explained once
    assert [r.type for r in p.resources if r.type.startswith("gpuplane:")] == []  # nothing registered


def test_an_aws_eks_cluster_gives_node_groups_its_subnets() -> None:
    def program() -> None:
        role = aws.iam.Role("control", assume_role_policy=POLICY)
        cluster = aws.eks.Cluster("research", role_arn=role.arn, vpc_config={"subnet_ids": ["subnet-a", "subnet-b"]})
        EksGpuNodeGroups("gpu", {"cluster": cluster, "node_role_arn": role.arn, "gpu_pools": [A10G]})

    p = plan(program, **{"aws:region": "eu-west-1"})
    (group,) = of(p, "aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["subnetIds"] == ["subnet-a", "subnet-b"]
    assert group.inputs["clusterName"] == engine_name("research")


def test_a_provider_a_parent_passes_down_wins_too() -> None:
    class Mine(pulumi.ComponentResource):
        def __init__(self, cluster: Any) -> None:
            provider = k8s.Provider("theirs", kubeconfig="{}")
            super().__init__("acme:index:Mine", "mine", None, pulumi.ResourceOptions(providers=[provider]))
            DcgmExporter(
                "dcgm", {"cluster": cluster, "host": ExporterHost.GKE}, opts=pulumi.ResourceOptions(parent=self)
            )

    def program() -> None:
        Mine(gcp.container.Cluster("c", location="us-central1", initial_node_count=1))

    p = plan(program, **{"gcp:project": "my-proj"})
    assert [r.name for r in of(p, "pulumi:providers:kubernetes")] == ["theirs"]
