"""Multi-node networking (docs/multi-node.md): EFA on EKS (Karpenter and managed node groups), GPUDirect on
GKE, the EFA device plugin only on EFA pools, placement requesting EFA devices and packing by topology, and
one clear error per impossible combination."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from gpuplane.aws import efa
from gpuplane.catalog.network import EFA_INTERFACES, GPUDIRECT, topology_labels
from gpuplane.config import parse_config
from gpuplane.plan import Plan, load
from gpuplane.plan.deploy import check
from gpuplane.plan.deploy.scheduling import fits, node_shapes, pod_templates
from gpuplane.plan.mocks_aws import eks_cluster_security_group
from gpuplane.scheduling.placement import placement

from .conftest import ROOT, config_problems, stack_with
from .graph import kube_objects

EC2_NODE_CLASS = "EC2NodeClass"


def raw(stack: str) -> dict[str, Any]:
    return {k.removeprefix("gpuplane:"): copy.deepcopy(v) for k, v in load(stack, ROOT).config.items()}


def with_pool(stack: str, **pool: Any) -> dict[str, Any]:
    r = raw(stack)
    r["gpuPools"][0].update(pool)
    return r


# --- refused combinations: one error each, on the pool's `network` key ----------------------------------

REFUSED = [
    ("aws-multinode", {"gpu": "l4", "gpusPerNode": 1, "instanceTypes": ["g6.xlarge"]}, "g6.xlarge has no EFA"),
    ("aws-multinode", {"zones": ["us-east-1a", "us-east-1b"]}, "pins a pool to one AWS Availability Zone"),
    ("aws-multinode", {"zones": None}, "set zones to exactly one, not no zones"),
    ("gcp-multinode", {"gpu": "h100", "machineType": "a3-highgpu-8g"}, "a3-highgpu-8g has no GPUDirect networking"),
    ("gcp-multinode", {"sharing": {"strategy": "time-slicing", "replicas": 2}}, "time-slicing would share them"),
    ("aws-multinode", {"network": "gpudirect", "placementGroup": None}, "not offered on AWS; use efa (EKS)"),
    ("gcp-multinode", {"network": "efa"}, "not offered on GCP; use gpudirect (GKE)"),
]


@pytest.mark.parametrize(("stack", "pool", "message"), REFUSED)
def test_impossible_combination_is_one_clear_error(stack: str, pool: dict[str, Any], message: str) -> None:
    problems = config_problems(with_pool(stack, **pool))
    assert list(problems) == ["gpuplane:gpuPools[0].network"], problems
    assert message in problems["gpuplane:gpuPools[0].network"]


@pytest.mark.parametrize(
    ("stack", "zones", "message"),
    [
        ("aws-multinode", ["us-west-2a"], "us-west-2a is not in region us-east-1"),
        ("gcp-multinode", ["us-central1-b", "europe-west4-a"], "europe-west4-a is not in region us-central1"),
    ],
)
def test_pool_zones_outside_the_region_are_refused(stack: str, zones: list[str], message: str) -> None:
    problems = config_problems(with_pool(stack, zones=zones, network=None, placementGroup=None))
    assert list(problems) == ["gpuplane:gpuPools[0].zones"], problems
    assert message in problems["gpuplane:gpuPools[0].zones"]


def test_network_on_an_auto_provisioning_platform_is_refused() -> None:
    r = raw("aws-multinode")
    r["platform"] = "eks-automode"
    r.pop("karpenter")
    problems = config_problems(r)
    assert "eks-automode chooses its own node shapes" in problems["gpuplane:gpuPools[0].network"]


def test_gpudirect_needs_the_cluster_multi_networking_switch() -> None:
    r = raw("gcp-multinode")
    r["gcp"]["multiNetworking"] = False
    assert "need gcp.multiNetworking: true" in config_problems(r)["gpuplane:gpuPools"]


def test_placement_group_needs_efa_and_a_name() -> None:
    assert "is for AWS pools with network: efa" in config_problems(
        with_pool("aws-multinode", network=None, zones=None, placementGroup="ml-training-cluster-pg")
    ).get("gpuplane:gpuPools[0].placementGroup", "")
    bad = config_problems(with_pool("aws-multinode", placementGroup="bad name!"))
    assert "not a placement group name" in bad["gpuplane:gpuPools[0].placementGroup"]


def test_efa_pool_keeps_only_its_efa_types() -> None:
    """An L40S x1 class (g6e.xlarge..16xlarge) with EFA launches only the types that take it, with the
    smallest EFA count among them."""
    cfg = parse_config(with_pool("aws-multinode", gpu="l40s", gpusPerNode=1, instanceTypes=None))
    pool = cfg.gpuPools[0]
    assert efa.pool_types(pool) == ["g6e.8xlarge", "g6e.16xlarge"]
    assert efa.interfaces(pool) == 1


# --- catalog --------------------------------------------------------------------------------------------


def test_catalog_records_efa_counts_and_topology() -> None:
    assert EFA_INTERFACES["p5.48xlarge"] == 32 and EFA_INTERFACES["p4d.24xlarge"] == 4
    assert "g6e.xlarge" not in EFA_INTERFACES
    assert topology_labels("aws", "p5.48xlarge").closest == "topology.k8s.aws/network-node-layer-3"
    assert topology_labels("aws", "g5.xlarge").keys == ()
    assert topology_labels("gcp", "a3-ultragpu-8g").closest == "cloud.google.com/gce-topology-subblock"
    assert GPUDIRECT["a3-megagpu-8g"].additional_networks == 8
    assert GPUDIRECT["a3-ultragpu-8g"].additional_networks == 9


# --- Karpenter ------------------------------------------------------------------------------------------


def test_efa_node_class_validates_against_the_crd_and_its_cel(plan_of: Callable[..., Plan]) -> None:
    from .conftest import need_reference
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    (obj,) = [
        r.inputs
        for r in kube_objects(plan_of("aws-multinode"))
        if r.inputs["kind"] == EC2_NODE_CLASS and "networkInterfaces" in r.inputs["spec"]
    ]
    assert len(obj["spec"]["networkInterfaces"]) == 33  # the primary ENA + 32 EFA-only
    # The stack names no placement group: gpuplane creates one and the class selects it (a named group
    # nothing creates would leave the EC2NodeClass not Ready).
    (pg,) = plan_of("aws-multinode").by_type("aws:ec2/placementGroup:PlacementGroup")
    assert pg.inputs["strategy"] == "cluster"
    assert obj["spec"]["placementGroupSelector"] == {"name": pg.inputs["name"]}
    schema = crd_schema(ref, obj["apiVersion"], obj["kind"])
    assert not schema_errors(obj, schema)
    failures, evaluated = cel_results(obj, schema)
    assert not failures and evaluated > 0
    # The CEL rules do bite: two EFA-only interfaces on one card, or no primary interface, are rejected.
    bad = copy.deepcopy(obj)
    bad["spec"]["networkInterfaces"].append({"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "efa-only"})
    assert cel_results(bad, schema)[0]
    bad = copy.deepcopy(obj)
    bad["spec"]["networkInterfaces"] = bad["spec"]["networkInterfaces"][1:]
    assert cel_results(bad, schema)[0]


def test_efa_class_is_pinned_to_its_zone_and_efa_types(plan_of: Callable[..., Plan]) -> None:
    (pool,) = [
        r.inputs
        for r in kube_objects(plan_of("aws-multinode"))
        if r.inputs["kind"] == "NodePool" and r.inputs["metadata"]["name"] == "training"
    ]
    reqs = {r["key"]: r["values"] for r in pool["spec"]["template"]["spec"]["requirements"]}
    assert reqs["topology.kubernetes.io/zone"] == ["us-east-1a"]
    assert reqs["node.kubernetes.io/instance-type"] == ["p5.48xlarge"]
    assert pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "training-efa"


# --- the EFA device plugin ------------------------------------------------------------------------------


def test_efa_device_plugin_runs_on_efa_pools_only(plan_of: Callable[..., Plan]) -> None:
    """On a cluster with an EFA class and a plain GPU class, the plugin fits the EFA class's nodes only."""
    plan = plan_of("aws-multinode")  # its `inference` class has no EFA
    (template,) = [t for t in pod_templates(plan) if "efa-device-plugin" in t.name]
    shapes = node_shapes(plan)
    landing = [s.source for s in shapes if fits(template.spec, s)]
    assert landing and all(s.endswith("::ml-multinode-karpenter-training") for s in landing), landing
    releases = [x for x in plan.resources if str(x.inputs.get("chart", "")).endswith("aws-efa-k8s-device-plugin")]
    assert [x.inputs["version"] for x in releases] == ["v0.5.30"]


def test_no_efa_pool_no_device_plugin(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-karpenter")
    assert not [x for x in plan.resources if "efa" in str(x.inputs.get("chart", ""))]


def test_device_plugin_values_exist_in_the_chart() -> None:
    import yaml

    from .conftest import need_reference

    ref = need_reference()
    chart = yaml.safe_load((ref / "charts" / "aws-efa-k8s-device-plugin" / "values.yaml").read_text())
    cfg = parse_config(raw("aws-multinode"))
    values = efa.device_plugin_values([], cfg.gpuPools)
    assert set(values) <= set(chart)
    assert set(values["supportedInstanceLabels"]) <= set(chart["supportedInstanceLabels"])
    assert set(values["supportedInstanceLabels"]["values"]) <= set(chart["supportedInstanceLabels"]["values"])


# --- placement ------------------------------------------------------------------------------------------


def test_placement_for_an_efa_pool_requests_the_efa_devices() -> None:
    cfg = parse_config(raw("aws-multinode"))
    whole = placement(cfg, "training", 8)
    assert whole["resources"]["limits"] == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    assert placement(cfg, "training", 4)["resources"]["limits"]["vpc.amazonaws.com/efa"] == 16
    assert "podAffinity" not in whole["affinity"] and "labels" not in whole


def test_placement_with_a_job_packs_by_the_closest_topology_label() -> None:
    for stack, key in (
        ("aws-multinode", "topology.k8s.aws/network-node-layer-3"),
        ("gcp-multinode", "cloud.google.com/gce-topology-subblock"),
    ):
        f = placement(parse_config(raw(stack)), "training", 8, job="llm")
        (term,) = f["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        assert term["podAffinityTerm"]["topologyKey"] == key
        assert term["podAffinityTerm"]["labelSelector"]["matchLabels"] == f["labels"] == {"gpuplane.io/job": "llm"}


def test_no_topology_labels_no_pod_affinity() -> None:
    f = placement(parse_config(raw("aws-karpenter")), "inference", 1, job="x")
    assert "podAffinity" not in f["affinity"]


# --- managed node groups --------------------------------------------------------------------------------


def test_managed_efa_group(plan_of: Callable[..., Plan]) -> None:
    pools = [
        {"name": "training", "gpu": "h100", "gpusPerNode": 8, "maxNodes": 2, "network": "efa"}
        | {"zones": ["us-east-1a"], "diskSizeGb": 500}
    ]
    plan = plan_of(stack_with("aws-managed", gpuPools=pools))
    (lt_res,) = [r for r in plan.by_type("aws:ec2/launchTemplate:LaunchTemplate") if "training" in r.name]
    lt = lt_res.inputs
    nics = lt["networkInterfaces"]
    assert [n["networkCardIndex"] for n in nics] == list(range(32))
    assert [n["interfaceType"] for n in nics] == ["efa"] + ["efa-only"] * 31
    (sg,) = plan.by_type("aws:ec2/securityGroup:SecurityGroup")
    assert sg.urn in lt_res.dependencies and all(len(n["securityGroups"]) == 2 for n in nics)
    assert sg.inputs["ingress"][0]["self"] and sg.inputs["egress"][0]["self"]
    assert sg.inputs["ingress"][0]["protocol"] == "-1"
    (pg,) = plan.by_type("aws:ec2/placementGroup:PlacementGroup")
    assert pg.inputs["strategy"] == "cluster" and lt["placement"] == {"groupName": pg.inputs["name"]}
    assert pg.urn in lt_res.dependencies
    (group,) = [r.inputs for r in plan.by_type("eks:index:ManagedNodeGroup") if "training" in r.name]
    assert len(group["subnetIds"]) == 1 and group["instanceTypes"] == ["p5.48xlarge"]
    # Naming security groups drops the one EKS adds: the interfaces carry EKS's own cluster group (what lets
    # kubelet and the control plane talk), not pulumi-eks's `clusterSecurityGroupId` (NodeCreationFailure).
    assert {n["securityGroups"][0] for n in nics} == {eks_cluster_security_group("ml-eks")}
    assert [v for v in check(plan) if v.rule == "nodes-reach-control-plane"] == []


# --- GKE GPUDirect --------------------------------------------------------------------------------------


def test_gpudirect_pool_cluster_and_networks(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-multinode")
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["enableMultiNetworking"] is True
    assert cluster.inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    (pool,) = [r.inputs for r in plan.by_type("gcp:container/nodePool:NodePool") if r.inputs["name"] == "training"]
    assert pool["placementPolicy"] == {"type": "COMPACT"} and pool["nodeLocations"] == ["us-central1-b"]
    assert pool["nodeConfig"]["gvnic"] == {"enabled": True}
    extra = pool["networkConfig"]["additionalNodeNetworkConfigs"]
    assert len(extra) == GPUDIRECT["a3-ultragpu-8g"].additional_networks == 9
    nets = plan.by_type("gcp:compute/network:Network")
    (roce,) = [n for n in nets if "networkProfile" in n.inputs]
    assert roce.inputs["networkProfile"].endswith("/us-central1-b-vpc-roce") and roce.inputs["mtu"] == 8896
    subnets = plan.by_type("gcp:compute/subnetwork:Subnetwork")
    assert len({s.inputs["ipCidrRange"] for s in subnets}) == len(subnets) == 9


def test_gpudirect_objects_validate_against_googles_schema(plan_of: Callable[..., Plan]) -> None:
    from .crds import crd_schema, schema_errors

    objs = [
        r.inputs for r in kube_objects(plan_of("gcp-multinode")) if r.inputs["apiVersion"] == "networking.gke.io/v1"
    ]
    assert {o["kind"] for o in objs} == {"Network", "GKENetworkParamSet"} and len(objs) == 18
    for o in objs:
        assert not schema_errors(o, crd_schema(ROOT, o["apiVersion"], o["kind"])), o
    modes = sorted(o["spec"]["deviceMode"] for o in objs if o["kind"] == "GKENetworkParamSet")
    assert modes == ["NetDevice"] + ["RDMA"] * 8
    bad = {**objs[0], "spec": {**objs[0]["spec"], "deviceMode": "Magic"}}
    assert schema_errors(bad, crd_schema(ROOT, bad["apiVersion"], bad["kind"]))


def test_nccl_installer_runs_on_the_gpudirect_pool(plan_of: Callable[..., Plan]) -> None:
    from gpuplane.pins import IMAGES

    plan = plan_of("gcp-multinode")
    ds = {r.inputs["metadata"]["name"]: r.inputs for r in kube_objects(plan) if r.inputs["kind"] == "DaemonSet"}
    assert "nccl-rdma-installer" in ds and "nccl-tcpxo-installer" not in ds  # only the kind the pools use
    spec = ds["nccl-rdma-installer"]["spec"]["template"]["spec"]
    assert spec["initContainers"][0]["image"] == IMAGES["nccl-plugin-gib"]
    landing = [s.source for s in node_shapes(plan) if fits(spec, s)]
    assert len(landing) == 1 and landing[0].endswith("ml-multinode-training"), landing


def test_gpudirect_subnets_follow_the_pool_not_its_place(plan_of: Callable[..., Plan]) -> None:
    """Removing or reordering GPUDirect pools leaves every other pool's subnetworks (ForceNew ranges) alone."""
    base = {"gpu": "h200", "gpusPerNode": 8, "machineType": "a3-ultragpu-8g", "maxNodes": 2, "capacity": ["spot"]}
    pools = [{**base, "name": n, "network": "gpudirect", "zones": ["us-central1-b"]} for n in ("pretrain", "training")]

    def ranges(plan: Plan, pool: str) -> dict[str, str]:
        subnets = plan.by_type("gcp:compute/subnetwork:Subnetwork")
        return {s.name: s.inputs["ipCidrRange"] for s in subnets if f"-{pool}-" in s.name}

    both = plan_of(stack_with("gcp-multinode", gpuPools=pools))
    alone = plan_of(stack_with("gcp-multinode", gpuPools=pools[1:]))
    reordered = plan_of(stack_with("gcp-multinode", gpuPools=pools[::-1]))
    kept = ranges(both, "training")
    assert kept and ranges(alone, "training") == kept == ranges(reordered, "training")
    # ... and the two pools' blocks never overlap (pod networks of one cluster must not).
    assert not set(kept.values()) & set(ranges(both, "pretrain").values())


def test_gpudirect_placement_attaches_the_pools_networks(plan_of: Callable[..., Plan]) -> None:
    """A pod on a GPUDirect pool names every extra network of its nodes in `networking.gke.io/interfaces`
    (else it gets eth0 only and NCCL runs over TCP): exactly the pool's Network objects in the plan."""
    import json

    cfg = parse_config(raw("gcp-multinode"))
    f = placement(cfg, "training", 8)
    nics = json.loads(f["annotations"]["networking.gke.io/interfaces"])
    assert nics[0] == {"interfaceName": "eth0", "network": "default"}
    assert f["annotations"]["networking.gke.io/default-interface"] == "eth0"
    assert [n["interfaceName"] for n in nics] == [f"eth{i}" for i in range(len(nics))]
    networks = {
        r.inputs["metadata"]["name"]
        for r in plan_of("gcp-multinode").resources
        if r.inputs.get("kind") == "Network" and r.inputs["metadata"]["name"].startswith("training-")
    }
    assert {n["network"] for n in nics[1:]} == networks and len(networks) == 9
    assert "annotations" not in placement(cfg, "inference", 1)
