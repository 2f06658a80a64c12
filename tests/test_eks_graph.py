"""The aws-managed graph: node groups, autoscaler discovery, operator values per node image, scrape target."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from gpuplane.catalog import GPUS, NODE_IMAGES
from gpuplane.plan import Plan

from .conftest import ROOT, stack_with
from .graph import RELEASE, kube_objects, tolerates

MNG = "eks:index:ManagedNodeGroup"
EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
CA_PREFIX = "k8s.io/cluster-autoscaler/node-template/"


def stack_pools(stack: str = "aws-managed") -> dict[str, dict[str, Any]]:
    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {p["name"]: p for p in config["gpuplane:gpuPools"]}


def gpu_groups(plan: Plan) -> dict[str, Any]:
    return {
        r.inputs["labels"]["gpuplane.io/pool"]: r for r in plan.by_type(MNG) if "gpuplane.io/pool" in r.inputs["labels"]
    }


def release(plan: Plan, chart: str) -> Any:
    (found,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == chart]
    return found


def asg_tags(plan: Plan) -> dict[str, dict[str, str]]:
    """ASG name -> {tag key: value} from the planned aws.autoscaling.Tag resources."""
    out: dict[str, dict[str, str]] = {}
    for t in plan.by_type("aws:autoscaling/tag:Tag"):
        out.setdefault(t.inputs["autoscalingGroupName"], {})[t.inputs["tag"]["key"]] = t.inputs["tag"]["value"]
    return out


def test_cluster_settings(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    (cluster,) = plan.by_type("eks:index:Cluster")
    i = cluster.inputs
    assert i["skipDefaultNodeGroup"] is True and i["authenticationMode"] == "API" and i["createOidcProvider"] is True
    assert i["version"] == "1.35" and i["name"] == "ml-eks"
    subnets = {s.urn: s for s in plan.by_type("aws:ec2/subnet:Subnet")}
    private = [s for s in subnets.values() if "kubernetes.io/role/internal-elb" in s.inputs["tags"]]
    assert len(private) == 3 and len({s.inputs["cidrBlock"] for s in private}) == 3
    assert len(plan.by_type("aws:ec2/natGateway:NatGateway")) == 1
    entry = i["accessEntries"]["admin-0"]
    assert entry["principalArn"] == "arn:aws:iam::123456789012:role/platform-admins"


def test_every_gpu_node_group_is_tainted_and_sized_from_the_catalog(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    groups = gpu_groups(plan)
    pools = stack_pools()
    assert set(groups) == set(pools)
    for name, want in pools.items():
        g = groups[name].inputs
        gpu = GPUS[want["gpu"]]
        assert gpu.aws is not None
        assert all(gpu.aws.instances[t] == want["gpusPerNode"] for t in g["instanceTypes"])
        assert g["amiType"] == "AL2023_x86_64_NVIDIA"
        assert g["capacityType"] == ("SPOT" if want["spot"] else "ON_DEMAND")
        assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"} in g["taints"]
        assert g["scalingConfig"] == {
            "minSize": want["minNodes"],
            "maxSize": want["maxNodes"],
            "desiredSize": want["minNodes"],
        }
        # the desired size is EKS's current one (a new group: its minimum), never ignored (test_live_size.py)
        assert "ignoreScalingChanges" not in g
        assert (
            g["labels"]["gpuplane.io/gpu"] == gpu.name
            and g["labels"]["k8s.amazonaws.com/accelerator"] == f"nvidia-{gpu.name}"
        )


def test_launch_templates_require_imdsv2_and_encrypt_volumes(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    templates = plan.by_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert len(templates) == len(plan.by_type(MNG))
    pools = stack_pools()
    for t in templates:
        i = t.inputs
        assert i["metadataOptions"]["httpTokens"] == "required"
        (bdm,) = i["blockDeviceMappings"]
        assert bdm["ebs"]["encrypted"] == "true" and bdm["ebs"]["volumeType"] == "gp3"
        pool = i["tags"]["gpuplane.io/pool"]
        if pool in pools:
            assert bdm["ebs"]["volumeSize"] == pools[pool]["diskSizeGb"] >= 100
            assert bdm["deviceName"] == NODE_IMAGES["AL2023_x86_64_NVIDIA"].data_device


def test_gpu_node_groups_can_scale_from_zero(plan_of: Callable[..., Plan]) -> None:
    """cluster-autoscaler discovers the groups and, at zero nodes, sees their labels, taints and GPUs."""
    plan = plan_of("aws-managed")
    tags = asg_tags(plan)
    ca = release(plan, "cluster-autoscaler").inputs["values"]
    assert ca["autoDiscovery"]["clusterName"] == "ml-eks" and ca["cloudProvider"] == "aws"
    for name, group in gpu_groups(plan).items():
        g = group.inputs
        mine = [t for t in tags.values() if t.get(CA_PREFIX + "label/gpuplane.io/pool") == name]
        assert len(mine) == 1, f"pool {name}: expected one tagged ASG"
        asg = mine[0]
        for key, value in g["labels"].items():
            assert asg[CA_PREFIX + f"label/{key}"] == value
        for taint in g["taints"]:
            assert asg[CA_PREFIX + f"taint/{taint['key']}"] == f"{taint['value']}:{EKS_EFFECTS[taint['effect']]}"
        gpus = {GPUS[stack_pools()[name]["gpu"]].aws.instances[t] for t in g["instanceTypes"]}  # type: ignore[union-attr]
        # Time-slicing/MPS replicas multiply what the device plugin advertises per physical GPU.
        replicas = stack_pools()[name].get("sharing", {}).get("replicas", 1)
        assert {int(asg[CA_PREFIX + "resources/nvidia.com/gpu"])} == {n * replicas for n in gpus}


def test_autoscaler_identity_is_scoped_to_this_cluster(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    (cluster,) = plan.by_type("eks:index:Cluster")
    role = next(r for r in plan.by_type("aws:iam/role:Role") if "autoscaler" in r.name)
    trust = json.loads(role.inputs["assumeRolePolicy"])
    (stmt,) = trust["Statement"]
    assert stmt["Action"] == "sts:AssumeRoleWithWebIdentity" and stmt["Principal"]["Federated"].startswith(
        "arn:aws:iam::"
    )
    cond = stmt["Condition"]["StringEquals"]
    assert any(v == "system:serviceaccount:kube-system:cluster-autoscaler" for v in cond.values())
    policy = json.loads(next(r for r in plan.by_type("aws:iam/rolePolicy:RolePolicy")).inputs["policy"])
    actions = [a for s in policy["Statement"] for a in s["Action"]]
    assert "*" not in actions and "eks:DescribeNodegroup" in actions
    scale = next(s for s in policy["Statement"] if "autoscaling:SetDesiredCapacity" in s["Action"])
    assert (
        scale["Condition"]["StringEquals"][f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster.inputs['name']}"]
        == "owned"
    )
    sa = release(plan, "cluster-autoscaler").inputs["values"]["rbac"]["serviceAccount"]
    assert sa["name"] == "cluster-autoscaler"
    assert sa["annotations"]["eks.amazonaws.com/role-arn"].startswith(f"arn:aws:iam::123456789012:role/{role.name}-")


@pytest.mark.parametrize(
    ("ami", "driver", "expected"),
    [
        (
            "AL2023_x86_64_NVIDIA",
            "preinstalled",
            {"driver": False, "toolkit": False, "devicePlugin": True, "migManager": True},
        ),
        (
            "BOTTLEROCKET_x86_64_NVIDIA",
            "preinstalled",
            {"driver": False, "toolkit": False, "devicePlugin": False, "migManager": False},
        ),
        (
            "AL2023_x86_64_STANDARD",
            "operator",
            {"driver": True, "toolkit": True, "devicePlugin": True, "migManager": True},
        ),
    ],
)
def test_operator_values_follow_the_node_image(
    ami: str, driver: str, expected: dict[str, bool], plan_of: Callable[..., Plan]
) -> None:
    pools = [{"name": "g", "gpu": "l4", "maxNodes": 2, "amiType": ami, "driver": driver}]
    plan = plan_of(stack_with("aws-managed", gpuPools=pools))
    values = release(plan, "gpu-operator").inputs["values"]
    assert {k: values[k]["enabled"] for k in expected} == expected
    assert values["dcgmExporter"] == {"enabled": True, "serviceMonitor": {"enabled": False}}
    (group,) = gpu_groups(plan).values()
    assert group.inputs["amiType"] == ami


def test_operator_runs_on_system_nodes_and_tolerates_gpu_pools(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    values = release(plan, "gpu-operator").inputs["values"]
    system = next(g for g in plan.by_type(MNG) if g.inputs["labels"].get("gpuplane.io/role") == "system")
    assert values["operator"]["nodeSelector"].items() <= system.inputs["labels"].items()
    for group in gpu_groups(plan).values():
        for t in group.inputs["taints"]:
            taint = (t["key"], t["value"], EKS_EFFECTS[t["effect"]])
            assert tolerates(values["daemonsets"]["tolerations"], taint)
            assert tolerates(values["node-feature-discovery"]["worker"]["tolerations"], taint)


def test_scrape_config_targets_the_operator_exporter(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    op = release(plan, "gpu-operator")
    (job,) = yaml.safe_load(plan.outputs["scrapeConfig"])
    assert job["kubernetes_sd_configs"][0]["namespaces"]["names"] == [op.inputs["namespace"]]
    keeps = {r["source_labels"][0]: r["regex"] for r in job["relabel_configs"] if r["action"] == "keep"}
    # gpu-operator v26.7.0's dcgm-exporter Service: label app=nvidia-dcgm-exporter, port gpu-metrics.
    assert keeps == {
        "__meta_kubernetes_service_label_app": "nvidia-dcgm-exporter",
        "__meta_kubernetes_endpoint_port_name": "gpu-metrics",
    }
    namespaces = [r.inputs["metadata"]["name"] for r in kube_objects(plan) if r.inputs["kind"] == "Namespace"]
    assert op.inputs["namespace"] in namespaces


def test_outputs(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    assert plan.outputs["kubeconfig"] == "[secret]"
    assert plan.outputs["gpuNodeGroups"] == ["ml-eks-inference", "ml-eks-training"]
    assert plan.outputs["oidcProviderArn"].startswith("arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1")


def test_existing_vpc_is_used_as_is(plan_of: Callable[..., Plan]) -> None:
    aws = {"region": "eu-west-1", "vpcId": "vpc-0abc12345678", "privateSubnetIds": ["subnet-01", "subnet-02"]}
    plan = plan_of(stack_with("aws-managed", aws=aws))
    assert not plan.by_type("aws:ec2/vpc:Vpc") and not plan.by_type("aws:ec2/subnet:Subnet")
    (cluster,) = plan.by_type("eks:index:Cluster")
    assert cluster.inputs["vpcId"] == "vpc-0abc12345678" and cluster.inputs["privateSubnetIds"] == [
        "subnet-01",
        "subnet-02",
    ]
    assert all(g.inputs["subnetIds"] == ["subnet-01", "subnet-02"] for g in plan.by_type(MNG))
