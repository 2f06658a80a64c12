"""Karpenter v1 and EKS Auto Mode graphs: IAM, interruption queue, CRDs, NodePools per GPU class."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from gpuplane.catalog import GPUS, NODE_IMAGES
from gpuplane.plan import Plan

from .conftest import AWS_STACKS, config_problems, load_stack_config, need_reference, stack_with
from .crds import cel_results, crd_schema, schema_errors
from .graph import RELEASE, kube_objects, tolerates

EVENTS = {
    ("aws.health", "AWS Health Event"),
    ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("aws.ec2", "EC2 Instance State-change Notification"),
    ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
}


def crs(plan: Plan, kind: str) -> list[dict[str, Any]]:
    return [r.inputs for r in kube_objects(plan) if r.inputs["kind"] == kind]


def classes(stack: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in load_stack_config(stack)["gpuplane:gpuPools"]}


def statements(doc: dict[str, Any]) -> list[dict[str, Any]]:
    s = doc["Statement"]
    return s if isinstance(s, list) else [s]


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_iam_documents_parse_and_never_allow_every_action(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    docs = [json.loads(r.inputs["policy"]) for r in plan.by_type("aws:iam/rolePolicy:RolePolicy")]
    docs += [json.loads(r.inputs["assumeRolePolicy"]) for r in plan.by_type("aws:iam/role:Role")]
    docs += [json.loads(r.inputs["policy"]) for r in plan.by_type("aws:sqs/queuePolicy:QueuePolicy")]
    for doc in docs:
        for st in statements(doc):
            resources = st.get("Resource", "*")
            for res in resources if isinstance(resources, list) else [resources]:
                assert res == "*" or res.startswith("arn:aws:"), f"{stack}: unresolved Resource {res!r}"
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            assert "*" not in actions and st["Effect"] in ("Allow", "Deny")
            if st["Effect"] == "Allow":
                assert not any(a.endswith(":*") for a in actions), st


def test_karpenter_controller_is_scoped_like_its_cloudformation(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-karpenter")
    policies = {
        r.name.rsplit("controller-", 1)[1]: json.loads(r.inputs["policy"])
        for r in plan.by_type("aws:iam/rolePolicy:RolePolicy")
        if "controller-" in r.name
    }
    assert set(policies) == {
        "node-lifecycle",
        "iam-integration",
        "eks-integration",
        "interruption",
        "resource-discovery",
        "zonal-shift",
    }
    (pass_role,) = [s for s in statements(policies["iam-integration"]) if s["Action"] == "iam:PassRole"]
    # Only the Karpenter node role (not the system node group's role), and only to EC2.
    assert pass_role["Resource"].startswith("arn:aws:iam::123456789012:role/ml-karpenter-karpenter-node-role-")
    assert pass_role["Condition"]["StringEquals"]["iam:PassedToService"][0] == "ec2.amazonaws.com"
    for st in statements(policies["node-lifecycle"]):
        if "ec2:TerminateInstances" in st["Action"] or st["Action"] == "ec2:CreateTags":
            cond = json.dumps(st["Condition"])
            assert "kubernetes.io/cluster/ml-karpenter" in cond and "karpenter.sh/nodepool" in cond
    (queue,) = plan.by_type("aws:sqs/queue:Queue")
    assert queue.inputs["sqsManagedSseEnabled"] is True and queue.inputs["name"] == "ml-karpenter"
    (qp,) = plan.by_type("aws:sqs/queuePolicy:QueuePolicy")
    deny = [s for s in statements(json.loads(qp.inputs["policy"])) if s["Effect"] == "Deny"]
    assert deny and deny[0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    rules = plan.by_type("aws:cloudwatch/eventRule:EventRule")
    assert {
        (json.loads(r.inputs["eventPattern"])["source"][0], json.loads(r.inputs["eventPattern"])["detail-type"][0])
        for r in rules
    } == EVENTS
    assert len(plan.by_type("aws:cloudwatch/eventTarget:EventTarget")) == len(EVENTS)
    (access,) = plan.by_type("aws:eks/accessEntry:AccessEntry")
    assert access.inputs["type"] == "EC2_LINUX"
    (pia,) = [
        r
        for r in plan.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
        if r.name.endswith("-karpenter-pod-identity")
    ]
    assert (pia.inputs["namespace"], pia.inputs["serviceAccount"]) == ("kube-system", "karpenter")


def test_karpenter_chart_and_crds(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-karpenter")
    releases = {r.inputs["name"]: r for r in plan.by_type(RELEASE)}
    ctrl, crd = releases["karpenter"], releases["karpenter-crd"]
    assert ctrl.inputs["chart"] == "oci://public.ecr.aws/karpenter/karpenter" and ctrl.inputs["version"].startswith(
        "1.14."
    )
    assert (
        crd.inputs["chart"] == "oci://public.ecr.aws/karpenter/karpenter-crd"
        and crd.inputs["version"] == ctrl.inputs["version"]
    )
    assert ctrl.inputs["skipCrds"] is True and crd.urn in ctrl.dependencies
    v = ctrl.inputs["values"]
    (queue,) = plan.by_type("aws:sqs/queue:Queue")
    assert v["settings"] == {
        "clusterName": "ml-karpenter",
        "interruptionQueue": queue.inputs["name"],
        # NodeOverlays declare MIG/shared GPU capacity; reservedCapacity lets classes consume ODCRs/Capacity Blocks;
        # nodeRepair replaces nodes the node monitoring agent marks unhealthy (gpuplane:health.repair, on by default)
        "featureGates": {"nodeOverlay": True, "reservedCapacity": True, "nodeRepair": True},
    }
    assert v["serviceAccount"]["name"] == "karpenter"
    for r in plan.resources:
        if r.inputs.get("kind") in ("NodePool", "EC2NodeClass", "NodeOverlay"):
            assert crd.urn in r.dependencies and ctrl.urn in r.dependencies, r.urn
    assert not [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "cluster-autoscaler"]
    assert not [g for g in plan.by_type("eks:index:ManagedNodeGroup") if "gpuplane.io/pool" in g.inputs["labels"]]


def test_one_nodepool_per_gpu_class_and_one_nodeclass_per_image(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-karpenter")
    pools = {p["metadata"]["name"]: p for p in crs(plan, "NodePool")}
    nodeclasses = {n["metadata"]["name"]: n for n in crs(plan, "EC2NodeClass")}
    want = classes("aws-karpenter")
    assert set(pools) == set(want)
    families = {NODE_IMAGES[c.get("amiType", "AL2023_x86_64_NVIDIA")].karpenter_alias for c in want.values()}
    assert {n["spec"]["amiSelectorTerms"][0]["alias"].split("@")[0] for n in nodeclasses.values()} == families
    for name, np in pools.items():
        c, spec = want[name], np["spec"]
        gpu = GPUS[c["gpu"]]
        req = {r["key"]: r["values"] for r in spec["template"]["spec"]["requirements"]}
        assert req["karpenter.sh/capacity-type"] == (["spot", "on-demand"] if c.get("spot") else ["on-demand"])
        assert req["karpenter.k8s.aws/instance-gpu-name"] == [gpu.aws.gpu_name]  # type: ignore[union-attr]
        assert set(req["karpenter.k8s.aws/instance-family"]) <= set(gpu.aws.families)  # type: ignore[union-attr]
        assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in spec["template"]["spec"][
            "taints"
        ]
        assert spec["limits"]["nvidia.com/gpu"] == str(c["maxNodes"] * c.get("gpusPerNode", 1))
        assert spec["limits"]["nodes"] == str(c["maxNodes"])  # caps a MIG class too, whatever the GPU count says
        budgets = spec["disruption"].pop("budgets")
        assert spec["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"}
        # Drift never drains a busy GPU node: no budget lets a Drifted node go, and other reasons keep a budget.
        drift = [b for b in budgets if "Drifted" in b.get("reasons", ["Drifted"])]
        assert drift and min(b["nodes"] for b in drift) == "0"
        assert any("reasons" not in b and b["nodes"] != "0" for b in budgets)
        ref = spec["template"]["spec"]["nodeClassRef"]
        assert ref["group"] == "karpenter.k8s.aws" and ref["kind"] == "EC2NodeClass" and ref["name"] in nodeclasses
        nc = nodeclasses[ref["name"]]["spec"]
        assert nc["metadataOptions"]["httpTokens"] == "required"
        (bdm,) = nc["blockDeviceMappings"]
        assert bdm["ebs"]["encrypted"] is True and int(bdm["ebs"]["volumeSize"].removesuffix("Gi")) >= c["diskSizeGb"]


def test_gpu_operator_stays_on_with_karpenter(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-karpenter")
    (op,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "gpu-operator"]
    v = op.inputs["values"]
    assert v["devicePlugin"]["enabled"] is True and v["driver"]["enabled"] is False
    for np in crs(plan, "NodePool"):
        for t in np["spec"]["template"]["spec"]["taints"]:
            assert tolerates(v["daemonsets"]["tolerations"], (t["key"], t["value"], t["effect"]))


@pytest.mark.parametrize("stack", ["aws-karpenter", "aws-automode"])
def test_karpenter_objects_validate_against_v1_crds(stack: str, plan_of: Callable[..., Plan]) -> None:
    ref = need_reference()
    objs = crs(plan_of(stack), "NodePool") + crs(plan_of(stack), "EC2NodeClass")
    assert objs
    for obj in objs:
        schema = crd_schema(ref, obj["apiVersion"], obj["kind"])
        assert not schema_errors(obj, schema), (obj["metadata"]["name"], schema_errors(obj, schema))
        failures, evaluated = cel_results(obj, schema)
        assert not failures, (obj["metadata"]["name"], failures)
        assert evaluated > 0


def test_auto_mode_pools_use_the_eks_node_class(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-automode")
    (cluster,) = plan.by_type("eks:index:Cluster")
    assert cluster.inputs["autoMode"]["enabled"] is True and cluster.inputs["authenticationMode"] == "API"
    assert not plan.by_type("eks:index:ManagedNodeGroup")
    want = classes("aws-automode")
    pools = {p["metadata"]["name"]: p for p in crs(plan, "NodePool")}
    assert set(pools) == set(want)
    for name, np in pools.items():
        spec = np["spec"]["template"]["spec"]
        assert spec["nodeClassRef"] == {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
        req = {r["key"]: r["values"] for r in spec["requirements"]}
        assert req["eks.amazonaws.com/instance-gpu-name"] == [GPUS[want[name]["gpu"]].aws.gpu_name]  # type: ignore[union-attr]
        assert not any(k.startswith("karpenter.k8s.aws/") for k in req)
        assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in spec["taints"]
    charts = {r.inputs["chart"] for r in plan.by_type(RELEASE)}
    assert charts == {"dcgm-exporter"}, "Auto Mode manages driver and device plugin: no gpu-operator"
    (dcgm,) = plan.by_type(RELEASE)
    assert "extraHostVolumes" not in dcgm.inputs["values"]
    for np in pools.values():
        for t in np["spec"]["template"]["spec"]["taints"]:
            assert tolerates(dcgm.inputs["values"]["tolerations"], (t["key"], t["value"], t["effect"]))


def test_auto_provisioned_classes_have_no_floor() -> None:
    raw = {
        "platform": "eks-karpenter",
        "cluster": {"name": "k"},
        "aws": {"region": "us-east-1"},
        "gpuPools": [{"name": "g", "gpu": "l4", "minNodes": 1, "maxNodes": 2}],
    }
    want = "eks-karpenter GPU classes have no node floor (the auto-provisioner starts at 0)"
    assert config_problems(raw) == {"gpuplane:gpuPools[0].minNodes": want}


def test_karpenter_section_is_validated(plan_of: Callable[..., Plan]) -> None:
    raw = {
        "platform": "eks-karpenter",
        "cluster": {"name": "k"},
        "aws": {"region": "us-east-1"},
        "gpuPools": [{"name": "g", "gpu": "l4", "maxNodes": 2}],
        "karpenter": {"consolidateAfter": "30d", "amiVersion": "newest"},
    }
    problems = config_problems(raw)
    assert set(problems) == {"gpuplane:karpenter.consolidateAfter", "gpuplane:karpenter.amiVersion"}
    plan = plan_of(
        stack_with(
            "aws-karpenter", karpenter={"consolidationPolicy": "WhenEmptyOrUnderutilized", "amiVersion": "v20251120"}
        )
    )
    assert {nc["spec"]["amiSelectorTerms"][0]["alias"] for nc in crs(plan, "EC2NodeClass")} == {"al2023@v20251120"}
    assert {p["spec"]["disruption"]["consolidationPolicy"] for p in crs(plan, "NodePool")} == {
        "WhenEmptyOrUnderutilized"
    }


def test_a_mig_class_is_capped_by_nodes_and_its_slices(plan_of: Any) -> None:
    """With `mig.strategy: mixed` an initialized node reports 0 `nvidia.com/gpu`, so that limit alone lets a
    backlog launch past maxNodes: the NodePool also limits nodes and the MIG resource."""
    mig = [p for p in classes("aws-karpenter").values() if (p.get("sharing") or {}).get("strategy") == "mig"]
    assert mig
    pools = {p["metadata"]["name"]: p["spec"] for p in crs(plan_of("aws-karpenter"), "NodePool")}
    for pool in mig:
        gpu = GPUS[pool["gpu"]]
        slices = gpu.mig_profiles[pool["sharing"]["migProfile"]] * pool.get("gpusPerNode", 1)
        limits = pools[pool["name"]]["limits"]
        assert limits["nodes"] == str(pool["maxNodes"])
        assert limits[f"nvidia.com/mig-{pool['sharing']['migProfile']}"] == str(pool["maxNodes"] * slices)


@pytest.mark.parametrize(("stack", "autoscaled"), [("aws-karpenter", False), ("aws-managed", True)])
def test_the_system_group_promises_only_what_scales_it(stack: str, autoscaled: bool, plan_of: Any) -> None:
    """cluster-autoscaler runs with fixed pools only: elsewhere the system node group is fixed at minNodes."""
    system = load_stack_config(stack)["gpuplane:cluster"].get("systemPool", {})
    (group,) = [g for g in plan_of(stack).by_type("eks:index:ManagedNodeGroup") if g.name.endswith("-system")]
    sc = group.inputs["scalingConfig"]
    assert sc["minSize"] == system.get("minNodes", 1)
    assert sc["maxSize"] == (system.get("maxNodes", 3) if autoscaled else sc["minSize"])
