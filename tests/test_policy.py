"""The CrossGuard policy pack in policy/: every rule over every stack's planned graph (as `pulumi preview`
would hand it to the pack), one negative test per rule and message on a mutated real resource, and a raw
program that gpuplane did not build.

Resources reach the rules exactly as the analyzer server passes them: inputs through a protobuf `Struct`
(numbers become floats), `deserialize_properties` and the SDK's unknown-checking proxies, wrapped in the
SDK's own `ResourceValidationArgs`. `PolicyPack(...)` is never built here: it starts a gRPC server and
never returns; policy/__main__.py is only parsed.
"""

from __future__ import annotations

import ast
import copy
import importlib
import importlib.metadata
import sys
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import yaml
from google.protobuf import json_format, struct_pb2
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from gpuplane.plan import Plan, PlannedResource

from .conftest import ROOT, STACKS, parse_python, stack_with, with_checks
from .graph import gpu_node_pools, node_models
from .summary import record

POLICY = ROOT / "policy"
if str(POLICY) not in sys.path:
    sys.path.insert(0, str(POLICY))
pack = importlib.import_module("gpuplane_policy")

MANDATORY, ADVISORY = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY
LEVELS = {
    "gpu-node-pool-tainted": MANDATORY,
    "gpu-node-pool-scales-to-zero": MANDATORY,
    "gpu-autoscaling-bounded": MANDATORY,
    "imdsv2-required": MANDATORY,
    "gpu-pod-declares-limits": MANDATORY,
    "gpu-pod-tolerates-gpu-taint": MANDATORY,
    "gpu-nodes-only-for-gpu-pods": ADVISORY,
}
IMDS_TYPES = {
    "aws:ec2/launchTemplate:LaunchTemplate",
    "aws:ec2/instance:Instance",
    "aws:eks/nodeGroup:NodeGroup",
    "eks:index:ManagedNodeGroup",
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
}
GKE_POOL, NODE_GROUP = "gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup"
MNG = "eks:index:ManagedNodeGroup"
KARPENTER_POOL, NODE_CLASS = "kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
LAUNCH_TEMPLATE, JOB = "aws:ec2/launchTemplate:LaunchTemplate", "kubernetes:batch/v1:Job"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


# --- Feeding resources to the pack as the engine does ----------------------------------------------


def engine_props(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    """Props as the analyzer server builds them from the engine's `Struct`."""
    struct = struct_pb2.Struct()
    struct.update(inputs)
    return unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(struct)))


def validation_args(
    type_: str, inputs: Mapping[str, Any], config: Mapping[str, Any] | None = None, urn: str = "urn:t", name: str = "r"
) -> ResourceValidationArgs:
    options = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
    return ResourceValidationArgs(type_, engine_props(inputs), urn, name, options, None, config)


def violations(
    type_: str, inputs: Mapping[str, Any], config: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, list[str]]:
    """{policy name: messages} for one resource, through every policy's own validate function."""
    found: dict[str, list[str]] = {}
    for policy in pack.POLICIES:

        def report(message: str, urn: str | None = None, name: str = policy.name) -> None:
            found.setdefault(name, []).append(message)

        assert policy.validate(validation_args(type_, inputs, (config or {}).get(policy.name)), report) is None
    return found


def examine(resources: list[PlannedResource]) -> tuple[Counter[str], list[tuple[str, str, str, str]]]:
    """(resources each rule examined, violations as (level, policy, resource, message)) over a graph."""
    examined: Counter[str] = Counter()
    found: list[tuple[str, str, str, str]] = []
    for r in resources:
        args = validation_args(r.type, r.inputs, urn=r.urn, name=r.name)
        for rule in pack.RULES:
            examined[rule.name] += rule.applies(r.type, args.props)
        for policy in pack.POLICIES:

            def report(
                message: str, urn: str | None = None, p: ResourceValidationPolicy = policy, at: str = r.name
            ) -> None:
                found.append((p.enforcement_level.value, p.name, at, message))

            policy.validate(args, report)
    return examined, found


def one(plan: Plan, type_: str, pred: Callable[[dict[str, Any]], bool] = lambda i: True) -> dict[str, Any]:
    """A deep copy of the inputs of the first planned resource of `type_` that `pred` accepts."""
    for r in plan.by_type(type_):
        if pred(r.inputs):
            return copy.deepcopy(r.inputs)
    raise AssertionError(f"no {type_} in {plan.stack}")


def gpu_pool_of(plan: Plan) -> dict[str, Any]:
    return one(plan, GKE_POOL, lambda i: bool(i["nodeConfig"].get("guestAccelerators")))


def gpu_group_of(plan: Plan) -> dict[str, Any]:
    return one(plan, MNG, lambda i: "gpuplane.io/pool" in i.get("labels", {}))


def as_node_group(mng: dict[str, Any]) -> dict[str, Any]:
    """A pulumi-eks ManagedNodeGroup's inputs as the `aws:eks/nodeGroup:NodeGroup` child it creates."""
    raw = {k: v for k, v in mng.items() if k not in ("cluster", "ignoreScalingChanges")}
    return {**raw, "clusterName": "ml-eks"}


def smoke_job(plan_of: Callable[..., Plan], stack: str = "gcp-standard") -> dict[str, Any]:
    return one(plan_of(stack_with(stack, smokeTest={"enabled": True})), JOB)


def pod_of(job: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = job["spec"]["template"]["spec"]
    return spec


# --- The pack's shape ------------------------------------------------------------------------------


def test_policies_and_enforcement_levels() -> None:
    assert all(isinstance(p, ResourceValidationPolicy) for p in pack.POLICIES)
    assert {p.name: p.enforcement_level for p in pack.POLICIES} == LEVELS
    assert [r.name for r in pack.RULES] == [p.name for p in pack.POLICIES]
    (bounded,) = [p for p in pack.POLICIES if p.config_schema is not None]
    assert bounded.name == "gpu-autoscaling-bounded"
    assert bounded.config_schema.properties == {
        "maxGpuNodesPerPool": {
            "type": "integer",
            "minimum": 1,
            "description": "Most nodes one GPU node pool or node group may reach (GKE: across its zones).",
        }
    }


def test_main_only_builds_the_pack_and_the_pack_imports_no_gpuplane_code() -> None:
    tree = parse_python((POLICY / "__main__.py").read_text())
    calls = [n for n in tree.body if isinstance(n, ast.Expr)][1:]  # after the docstring
    assert len(calls) == 1 and isinstance(calls[0].value, ast.Call)
    call = calls[0].value
    assert isinstance(call.func, ast.Name) and call.func.id == "PolicyPack"
    kwargs = {k.arg: k.value for k in call.keywords}
    assert set(kwargs) == {"name", "enforcement_level", "policies"}
    assert ast.literal_eval(kwargs["name"]) == "gpuplane-guardrails"
    assert isinstance(kwargs["policies"], ast.Name) and kwargs["policies"].id == "POLICIES"
    third_party: set[str] = set()
    for path in [POLICY / "__main__.py", *(POLICY / "gpuplane_policy").rglob("*.py")]:  # not policy/venv
        for node in ast.walk(parse_python(path.read_text())):
            if isinstance(node, ast.Import):
                third_party |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                third_party.add(node.module.split(".")[0])
    assert third_party - set(sys.stdlib_module_names) - {"__future__", "gpuplane_policy"} == {"pulumi_policy"}


def test_pack_metadata_and_pins() -> None:
    meta = yaml.safe_load((POLICY / "PulumiPolicy.yaml").read_text())
    assert meta["runtime"]["name"] == "python" and meta["runtime"]["options"]["virtualenv"] == "venv"
    assert meta["description"] and meta["version"]
    reqs = [line.strip() for line in (POLICY / "requirements.txt").read_text().splitlines()]
    assert "pulumi-policy==1.21.0" in reqs
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert "pulumi-policy==1.21.0" in extras, "the tests run the pack's own pin"
    assert importlib.metadata.version("pulumi-policy") == "1.21.0"


# --- Every shipped stack passes, and every rule examined what it should ---------------------------


def expected_counts(plan: Plan) -> dict[str, int]:
    """What each rule must examine, counted with the test suite's own graph readers."""
    pools = node_models(plan)  # GKE GPU node pools, gpuplane's GPU node groups, Karpenter NodePools
    fixed = len(gpu_node_pools(plan)) + sum("gpuplane.io/pool" in r.inputs.get("labels", {}) for r in plan.by_type(MNG))
    nap = sum(
        bool(r.inputs.get("clusterAutoscaling", {}).get("enabled")) and not r.inputs.get("enableAutopilot")
        for r in plan.by_type("gcp:container/cluster:Cluster")
    )
    return {
        "gpu-node-pool-tainted": len(pools),
        "gpu-node-pool-scales-to-zero": fixed,
        "gpu-autoscaling-bounded": len(pools) + nap,
        "imdsv2-required": sum(r.type in IMDS_TYPES for r in plan.resources),
    }


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stack_passes_every_policy(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    examined, found = examine(plan.resources)
    assert not [v for v in found if v[0] == "mandatory"], found
    assert not found, f"shipped stacks follow the advisory policies too: {found}"
    want = expected_counts(plan)
    assert {name: examined[name] for name in want} == want
    # Nothing silently matched nothing: every stack has GPU capacity the rules examined ...
    autopilot = [r for r in plan.by_type("gcp:container/cluster:Cluster") if r.inputs.get("enableAutopilot")]
    if autopilot:
        # ... except Autopilot, which the pack leaves to Google (no node pools, no resource limits).
        assert examined["gpu-autoscaling-bounded"] == 0 and examined["gpu-node-pool-tainted"] == 0
    else:
        assert examined["gpu-autoscaling-bounded"] > 0
    eks = plan.by_type("eks:index:Cluster")
    if eks and not any(c.inputs.get("autoMode") for c in eks):  # Auto Mode has no launch templates
        assert plan.by_type(LAUNCH_TEMPLATE) and examined["imdsv2-required"] > len(plan.by_type(LAUNCH_TEMPLATE))
    counts = ", ".join(f"{n} {c}" for n, c in sorted(examined.items()) if c)
    record("policy pack", f"{stack}: {counts or 'no GPU node pools (Autopilot)'}")


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stack_pods_pass_every_policy(stack: str, plan_of: Callable[..., Plan]) -> None:
    """Shipped stacks create no pods but their autoscaled inference Deployments (`gpuplane:autoscaling`); with the
    smoke test on, each GPU pool gets an `nvidia-smi` Job."""
    plan = plan_of(with_checks(stack))
    jobs = plan.by_type(JOB)
    examined, found = examine(plan.resources)
    assert not found, found
    # a Job on a DRA pool claims its GPU (resourceClaims) rather than counting it: the GPU-limit rules skip it
    counting = [j for j in jobs if not j.inputs["spec"]["template"]["spec"].get("resourceClaims")]
    served = [d for d in plan.by_type("kubernetes:apps/v1:Deployment") if "gpuplane:autoscaling" in d.urn]
    counting += served
    assert jobs and examined["gpu-pod-declares-limits"] == examined["gpu-pod-tolerates-gpu-taint"] == len(counting)
    # Jobs pinned by GPU labels (GKE's accelerator label, Karpenter's GPU requirements) are examined by the
    # pinned-pod rule too; pinning by a pool name alone says nothing about GPUs.
    assert examined["gpu-nodes-only-for-gpu-pods"] <= len(jobs) + len(served)


def test_every_rule_examines_some_shipped_resource(plan_of: Callable[..., Plan]) -> None:
    total: Counter[str] = Counter()
    for stack in STACKS:
        total += examine(plan_of(with_checks(stack)).resources)[0]
    assert set(total) == set(LEVELS) and min(total.values()) > 0, total


# --- GPU node pools are tainted --------------------------------------------------------------------

TAINT = "{} has GPUs but no `nvidia.com/gpu` taint with effect NoSchedule: pods that request no GPU can land on its \
nodes and keep them from scaling down"


def test_untainted_gke_gpu_pool(plan_of: Callable[..., Plan]) -> None:
    pool = gpu_pool_of(plan_of("gcp-standard"))
    assert not violations(GKE_POOL, pool)
    pool["nodeConfig"]["taints"] = [t for t in pool["nodeConfig"]["taints"] if t["key"] != "nvidia.com/gpu"]
    assert violations(GKE_POOL, pool) == {"gpu-node-pool-tainted": [TAINT.format("GKE node pool")]}
    pool["nodeConfig"]["taints"].append({**GPU_TAINT, "effect": "PREFER_NO_SCHEDULE"})
    assert violations(GKE_POOL, pool) == {"gpu-node-pool-tainted": [TAINT.format("GKE node pool")]}
    pool["nodeConfig"]["taints"][-1]["effect"] = "NO_EXECUTE"
    assert not violations(GKE_POOL, pool)


def test_untainted_eks_gpu_node_group(plan_of: Callable[..., Plan]) -> None:
    group = gpu_group_of(plan_of("aws-managed"))
    del group["taints"]
    want = {"gpu-node-pool-tainted": [TAINT.format("EKS node group")]}
    assert violations(MNG, group) == want
    assert violations(NODE_GROUP, as_node_group(group)) == want


@pytest.mark.parametrize("stack", ["aws-karpenter", "aws-automode"])
def test_untainted_karpenter_gpu_nodepool(stack: str, plan_of: Callable[..., Plan]) -> None:
    nodepool = one(plan_of(stack), KARPENTER_POOL)
    nodepool["spec"]["template"]["spec"]["taints"] = []
    assert violations(KARPENTER_POOL, nodepool) == {"gpu-node-pool-tainted": [TAINT.format("Karpenter NodePool")]}


# --- GPU node pools can scale to zero (mandatory) --------------------------------------------------


def test_gke_gpu_pool_that_cannot_scale_to_zero(plan_of: Callable[..., Plan]) -> None:
    pool = gpu_pool_of(plan_of("gcp-standard"))
    pool["autoscaling"]["totalMinNodeCount"] = 1
    assert violations(GKE_POOL, pool) == {
        "gpu-node-pool-scales-to-zero": [
            "GPU node pool autoscaling keeps at least 1 node(s) (totalMinNodeCount): cannot scale to zero"
        ]
    }
    del pool["autoscaling"]
    pool["nodeCount"] = 2
    assert violations(GKE_POOL, pool) == {
        "gpu-node-pool-scales-to-zero": [
            "GPU node pool has no autoscaling and keeps 2 node(s) per zone: it cannot scale to zero; "
            "set autoscaling with totalMinNodeCount 0"
        ]
    }
    del pool["nodeCount"], pool["initialNodeCount"]
    assert violations(GKE_POOL, pool)["gpu-node-pool-scales-to-zero"] == [
        "GPU node pool has no autoscaling and keeps the default size: it cannot scale to zero; "
        "set autoscaling with totalMinNodeCount 0"
    ]
    pool["initialNodeCount"] = 0  # a fixed pool of no nodes costs nothing
    assert not violations(GKE_POOL, pool)


def test_eks_gpu_node_group_that_cannot_scale_to_zero(plan_of: Callable[..., Plan]) -> None:
    group = gpu_group_of(plan_of("aws-managed"))
    group["scalingConfig"]["minSize"] = 1
    message = "GPU node group keeps at least 1 node(s) (scalingConfig.minSize): it cannot scale to zero"
    assert violations(MNG, group) == {"gpu-node-pool-scales-to-zero": [message]}
    assert violations(NODE_GROUP, as_node_group(group)) == {"gpu-node-pool-scales-to-zero": [message]}
    del group["scalingConfig"]  # pulumi-eks then uses minSize 1, maxSize 2
    assert violations(MNG, group) == {"gpu-node-pool-scales-to-zero": [message]}
    assert violations(NODE_GROUP, as_node_group(group)) == {
        "gpu-node-pool-scales-to-zero": ["GPU node group sets no scalingConfig.minSize: it cannot scale to zero"],
        "gpu-autoscaling-bounded": ["GPU node group sets no scalingConfig.maxSize: its growth is unbounded"],
    }


# --- GPU autoscaling is bounded --------------------------------------------------------------------


def test_gke_gpu_pool_without_a_maximum(plan_of: Callable[..., Plan]) -> None:
    pool = gpu_pool_of(plan_of("gcp-standard"))
    del pool["autoscaling"]["totalMaxNodeCount"]
    assert violations(GKE_POOL, pool) == {
        "gpu-autoscaling-bounded": [
            "GPU node pool autoscaling sets no totalMaxNodeCount or maxNodeCount: its growth is unbounded"
        ]
    }


def test_max_gpu_nodes_per_pool_config(plan_of: Callable[..., Plan]) -> None:
    pool = gpu_pool_of(plan_of("gcp-standard"))
    assert pool["autoscaling"]["totalMaxNodeCount"] == 8 and len(pool["nodeLocations"]) == 3
    cap = {"gpu-autoscaling-bounded": {"maxGpuNodesPerPool": 4.0}}  # the engine passes config numbers as floats
    msg = "GPU node pool may reach {} nodes, more than maxGpuNodesPerPool (4)"
    assert violations(GKE_POOL, pool, cap) == {"gpu-autoscaling-bounded": [msg.format(8)]}
    assert not violations(GKE_POOL, pool, {"gpu-autoscaling-bounded": {"maxGpuNodesPerPool": 8}})
    pool["autoscaling"] = {"minNodeCount": 0, "maxNodeCount": 3}  # per zone, three zones
    assert violations(GKE_POOL, pool, cap) == {"gpu-autoscaling-bounded": [msg.format(9)]}
    group = gpu_group_of(plan_of("aws-managed"))
    assert group["scalingConfig"]["maxSize"] == 10
    assert violations(MNG, group, {"gpu-autoscaling-bounded": {"maxGpuNodesPerPool": 5}}) == {
        "gpu-autoscaling-bounded": ["GPU node group may reach 10 nodes, more than maxGpuNodesPerPool (5)"]
    }


def test_eks_gpu_node_group_without_a_maximum(plan_of: Callable[..., Plan]) -> None:
    group = as_node_group(gpu_group_of(plan_of("aws-managed")))
    del group["scalingConfig"]["maxSize"]
    assert violations(NODE_GROUP, group) == {
        "gpu-autoscaling-bounded": ["GPU node group sets no scalingConfig.maxSize: its growth is unbounded"]
    }


@pytest.mark.parametrize("stack", ["aws-karpenter", "aws-automode"])
def test_karpenter_gpu_nodepool_without_a_gpu_limit(stack: str, plan_of: Callable[..., Plan]) -> None:
    nodepool = one(plan_of(stack), KARPENTER_POOL)
    del nodepool["spec"]["limits"]["nvidia.com/gpu"]
    assert violations(KARPENTER_POOL, nodepool) == {
        "gpu-autoscaling-bounded": [
            "GPU NodePool has no `nvidia.com/gpu` entry in spec.limits: Karpenter may launch GPU nodes without bound"
        ]
    }


def test_gke_auto_provisioning_without_a_gpu_maximum(plan_of: Callable[..., Plan]) -> None:
    cluster = one(plan_of("gcp-nap"), "gcp:container/cluster:Cluster")
    limits = cluster["clusterAutoscaling"]["resourceLimits"]
    (l4,) = [x for x in limits if x["resourceType"] == "nvidia-l4"]
    del l4["maximum"]
    assert violations("gcp:container/cluster:Cluster", cluster) == {
        "gpu-autoscaling-bounded": [
            "node auto-provisioning limit for nvidia-l4 has no maximum: GPU auto-provisioning is unbounded"
        ]
    }
    # Without any GPU limit, NAP creates no GPU nodes at all: nothing to bound.
    cluster["clusterAutoscaling"]["resourceLimits"] = [x for x in limits if not x["resourceType"].startswith("nvidia")]
    assert not violations("gcp:container/cluster:Cluster", cluster)


def test_autopilot_is_out_of_scope(plan_of: Callable[..., Plan]) -> None:
    cluster = one(plan_of("gcp-autopilot"), "gcp:container/cluster:Cluster")
    cluster["clusterAutoscaling"].update(enabled=True, resourceLimits=[{"resourceType": "nvidia-l4"}])
    bounded = pack.RULES_BY_NAME["gpu-autoscaling-bounded"]
    assert not bounded.applies("gcp:container/cluster:Cluster", engine_props(cluster))
    assert not violations("gcp:container/cluster:Cluster", cluster)


# --- IMDSv2 ----------------------------------------------------------------------------------------


def test_launch_template_without_imdsv2(plan_of: Callable[..., Plan]) -> None:
    lt = one(plan_of("aws-managed"), LAUNCH_TEMPLATE)
    lt["metadataOptions"]["httpTokens"] = "optional"
    assert violations(LAUNCH_TEMPLATE, lt) == {
        "imdsv2-required": [
            'launch template allows IMDSv1 (metadataOptions.httpTokens is "optional"); set it to "required"'
        ]
    }
    del lt["metadataOptions"]
    assert violations(LAUNCH_TEMPLATE, lt) == {
        "imdsv2-required": [
            "launch template does not set metadataOptions.httpTokens: instances take the AMI's or the account's "
            'default, which may allow IMDSv1; set it to "required"'
        ]
    }
    lt["metadataOptions"] = {"httpEndpoint": "disabled", "httpTokens": "optional"}  # no metadata service at all
    assert not violations(LAUNCH_TEMPLATE, lt)


def test_instance_without_imdsv2() -> None:
    instance = {"ami": "ami-0abc", "instanceType": "g5.xlarge", "metadataOptions": {"httpTokens": "optional"}}
    assert violations("aws:ec2/instance:Instance", instance) == {
        "imdsv2-required": ['instance allows IMDSv1 (metadataOptions.httpTokens is "optional"); set it to "required"']
    }
    instance["metadataOptions"]["httpTokens"] = "required"
    assert not violations("aws:ec2/instance:Instance", instance)


def test_node_group_without_a_launch_template(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    system = one(plan, MNG, lambda i: "gpuplane.io/pool" not in i.get("labels", {}))
    del system["launchTemplate"]
    message = (
        "node group has no launch template, so its nodes take the default metadata options, which may allow "
        'IMDSv1; attach a launch template with metadataOptions.httpTokens "required"'
    )
    assert violations(MNG, system) == {"imdsv2-required": [message]}
    assert violations(NODE_GROUP, as_node_group(system)) == {"imdsv2-required": [message]}
    # pulumi-eks makes its own launch template with httpTokens "required" for enableIMDSv2.
    assert not violations(MNG, {**system, "enableIMDSv2": True})
    assert violations(MNG, {**system, "enableIMDSv2": False}) == {
        "imdsv2-required": ["node group sets enableIMDSv2 false: its nodes accept IMDSv1"]
    }


def test_ec2_node_class_allowing_imdsv1(plan_of: Callable[..., Plan]) -> None:
    node_class = one(plan_of("aws-karpenter"), NODE_CLASS)
    node_class["spec"]["metadataOptions"]["httpTokens"] = "optional"
    assert violations(NODE_CLASS, node_class) == {
        "imdsv2-required": [
            'EC2NodeClass allows IMDSv1 (spec.metadataOptions.httpTokens is "optional"); set it to "required"'
        ]
    }
    del node_class["spec"]["metadataOptions"]  # Karpenter's default is "required"
    assert not violations(NODE_CLASS, node_class)


def test_values_unknown_during_preview() -> None:
    """A launch template whose id is not known yet still counts (only its presence is read); a value the
    rule must read raises the SDK's UnknownValueError, which the server reports as "can't run during
    preview" instead of guessing."""
    group = {
        "amiType": "AL2_x86_64",
        "launchTemplate": {"id": UNKNOWN_STRING_VALUE, "version": UNKNOWN_STRING_VALUE},
        "scalingConfig": {"minSize": 1, "maxSize": 2, "desiredSize": 1},
    }
    assert not violations(NODE_GROUP, group)
    assert not violations(NODE_GROUP, {**group, "launchTemplate": UNKNOWN_OBJECT_VALUE})
    imds = pack.RULES_BY_NAME["imdsv2-required"]
    with pytest.raises(UnknownValueError):
        imds.validate(validation_args(LAUNCH_TEMPLATE, {"metadataOptions": UNKNOWN_OBJECT_VALUE}), lambda m, u: None)


# --- GPU pods --------------------------------------------------------------------------------------

LIMITS = "container '{}' requests nvidia.com/gpu but does not set it in resources.limits: extended resources such \
as GPUs must be declared as limits"
TOLERATION = "pod requests {} but has no toleration for the `nvidia.com/gpu` taint (NoSchedule): it stays Pending on \
tainted GPU nodes"


def test_gpu_request_without_a_limit(plan_of: Callable[..., Plan]) -> None:
    job = smoke_job(plan_of)
    main = pod_of(job)["containers"][0]
    main["resources"]["requests"]["nvidia.com/gpu"] = main["resources"]["limits"].pop("nvidia.com/gpu")
    assert violations(JOB, job) == {"gpu-pod-declares-limits": [LIMITS.format("main")]}
    main["resources"]["limits"]["nvidia.com/gpu"] = 2
    assert violations(JOB, job) == {
        "gpu-pod-declares-limits": [
            "container 'main' requests 1 nvidia.com/gpu but limits it to 2: requests and limits of a GPU must be equal"
        ]
    }
    main["resources"]["limits"]["nvidia.com/gpu"] = "1"  # a quantity string equals the number
    assert not violations(JOB, job)
    init = {"name": "warmup", "image": "busybox", "resources": {"requests": {"nvidia.com/gpu": 1}}}
    pod_of(job)["initContainers"] = [init]
    assert violations(JOB, job) == {"gpu-pod-declares-limits": [LIMITS.format("warmup")]}


def test_gpu_pod_without_a_toleration(plan_of: Callable[..., Plan]) -> None:
    job = smoke_job(plan_of, "aws-karpenter")
    spec = pod_of(job)
    spec["tolerations"] = [t for t in spec["tolerations"] if t["key"] != "nvidia.com/gpu"]
    assert violations(JOB, job) == {"gpu-pod-tolerates-gpu-taint": [TOLERATION.format("nvidia.com/gpu")]}
    for covering in (
        {"operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "anything", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "value": "present"},
    ):
        spec["tolerations"] = [covering]
        assert not violations(JOB, job), covering
    spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}]
    assert violations(JOB, job) == {"gpu-pod-tolerates-gpu-taint": [TOLERATION.format("nvidia.com/gpu")]}


def test_mig_slice_pods_are_gpu_pods(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("aws-karpenter", smokeTest={"enabled": True}))
    job = one(plan, JOB, lambda i: "nvidia.com/mig-1g.5gb" in str(i))
    del pod_of(job)["tolerations"]
    assert violations(JOB, job) == {"gpu-pod-tolerates-gpu-taint": [TOLERATION.format("nvidia.com/mig-1g.5gb")]}


def test_a_pod_claiming_gpus_through_dra_is_a_gpu_pod(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-blackwell")
    job = one(plan, JOB, lambda i: "resourceClaims" in str(i))
    assert violations(JOB, job) == {}
    del pod_of(job)["resourceClaims"]  # pinned to the A4 nodes, claiming nothing: it holds them idle
    assert set(violations(JOB, job)) == {"gpu-nodes-only-for-gpu-pods"}


def test_pod_pinned_to_gpu_nodes_without_a_gpu(plan_of: Callable[..., Plan]) -> None:
    job = smoke_job(plan_of)
    del pod_of(job)["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
    message = (
        "pod is pinned to GPU nodes (required node affinity on cloud.google.com/gke-accelerator) but requests no "
        "GPU: it holds a GPU node without using its GPU"
    )
    assert violations(JOB, job) == {"gpu-nodes-only-for-gpu-pods": [message]}
    spec = pod_of(job)
    # The same pod spec in every workload kind; DaemonSets (node agents) are exempt.
    workloads = {
        "kubernetes:core/v1:Pod": {"spec": spec},
        "kubernetes:apps/v1:Deployment": {"spec": {"template": {"spec": spec}}},
        "kubernetes:apps/v1:StatefulSet": {"spec": {"template": {"spec": spec}}},
        "kubernetes:apps/v1:ReplicaSet": {"spec": {"template": {"spec": spec}}},
        "kubernetes:batch/v1:CronJob": {"spec": {"jobTemplate": {"spec": {"template": {"spec": spec}}}}},
    }
    for type_, inputs in workloads.items():
        assert violations(type_, inputs) == {"gpu-nodes-only-for-gpu-pods": [message]}, type_
    assert not violations("kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"spec": spec}}})
    del spec["affinity"]
    spec["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
    assert violations("kubernetes:core/v1:Pod", {"spec": spec}) == {
        "gpu-nodes-only-for-gpu-pods": [
            "pod is pinned to GPU nodes (nodeSelector nvidia.com/gpu.present=true) but requests no GPU: it holds a "
            "GPU node without using its GPU"
        ]
    }


# --- Any program, not only gpuplane's --------------------------------------------------------------


def test_a_raw_program_not_built_by_gpuplane() -> None:
    """Hand-written props, as a raw pulumi-gcp/pulumi-aws/pulumi-kubernetes program registers them."""
    gke_pool = {
        "cluster": "projects/p/locations/us-central1/clusters/c",
        "nodeCount": 2,
        "nodeConfig": {
            "machineType": "a2-highgpu-1g",
            "guestAccelerators": [{"type": "nvidia-tesla-a100", "count": 1}],
        },
    }
    eks_group = {
        "clusterName": "c",
        "nodeRoleArn": "arn:aws:iam::123456789012:role/nodes",
        "subnetIds": ["subnet-1"],
        "instanceTypes": ["p5.48xlarge"],
        "amiType": "AL2023_x86_64_NVIDIA",
        "scalingConfig": {"minSize": 1, "maxSize": 4, "desiredSize": 1},
    }
    nodepool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["g"]}],
                }
            }
        },
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "llm"},
        "spec": {
            "selector": {"matchLabels": {"app": "llm"}},
            "template": {
                "metadata": {"labels": {"app": "llm"}},
                "spec": {"containers": [{"name": "vllm", "resources": {"requests": {"nvidia.com/gpu": 2}}}]},
            },
        },
    }
    assert violations(GKE_POOL, gke_pool) == {
        "gpu-node-pool-tainted": [TAINT.format("GKE node pool")],
        "gpu-node-pool-scales-to-zero": [
            "GPU node pool has no autoscaling and keeps 2 node(s) per zone: it cannot scale to zero; "
            "set autoscaling with totalMinNodeCount 0"
        ],
    }
    assert violations(NODE_GROUP, eks_group) == {
        "gpu-node-pool-tainted": [TAINT.format("EKS node group")],
        "gpu-node-pool-scales-to-zero": [
            "GPU node group keeps at least 1 node(s) (scalingConfig.minSize): it cannot scale to zero"
        ],
        "imdsv2-required": [
            "node group has no launch template, so its nodes take the default metadata options, which may allow "
            'IMDSv1; attach a launch template with metadataOptions.httpTokens "required"'
        ],
    }
    assert violations(KARPENTER_POOL, nodepool) == {
        "gpu-node-pool-tainted": [TAINT.format("Karpenter NodePool")],
        "gpu-autoscaling-bounded": [
            "GPU NodePool has no `nvidia.com/gpu` entry in spec.limits: Karpenter may launch GPU nodes without bound"
        ],
    }
    assert violations("kubernetes:apps/v1:Deployment", deployment) == {
        "gpu-pod-declares-limits": [LIMITS.format("vllm")],
        "gpu-pod-tolerates-gpu-taint": [TOLERATION.format("nvidia.com/gpu")],
    }
    # The same program without GPUs is none of the pack's business.
    cpu_pool = {"cluster": "c", "nodeCount": 3, "nodeConfig": {"machineType": "e2-standard-4"}}
    cpu_group = {**eks_group, "instanceTypes": ["m7i.large"], "amiType": "AL2023_x86_64_STANDARD"}
    cpu_nodepool = copy.deepcopy(nodepool)
    cpu_nodepool["spec"]["template"]["spec"]["requirements"][0]["values"] = ["c", "m", "r"]
    cpu_deployment = copy.deepcopy(deployment)
    cpu_deployment["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    assert not violations(GKE_POOL, cpu_pool)
    imds = violations(NODE_GROUP, eks_group)["imdsv2-required"]
    assert violations(NODE_GROUP, cpu_group) == {"imdsv2-required": imds}
    assert not violations(KARPENTER_POOL, cpu_nodepool)
    assert not violations("kubernetes:apps/v1:Deployment", cpu_deployment)
