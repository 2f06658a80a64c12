"""GPU node health: detection and repair per platform, the simulator's model of the EKS node monitoring agent,
the post-deploy checks (`gpuplane:validation`) and `gpuplane validate` on check outputs in their published
formats (`health_samples`), held against upstream facts restated here."""

from __future__ import annotations

import inspect
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore.loaders
import pulumi_aws as aws
import pytest
import yaml

from gpuplane.cli import main as cli_main
from gpuplane.health import results, validation
from gpuplane.plan import Plan, deploy, load, plan_stack

from . import health_samples as sample
from .conftest import ROOT, STACKS, need_reference, stack_with
from .graph import kube_objects

ADDON = "aws:eks/addon:Addon"
MNG = "eks:index:ManagedNodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"

AGENT = "eks-node-monitoring-agent"
"""The add-on's name (EKS user guide, nodes/node-health-nma.adoc)."""
MANAGES_NODES = {"eks-managed", "eks-karpenter"}
"""EKS platforms where gpuplane runs the nodes (Auto Mode brings its own agent: EKS user guide node-health.adoc)."""
CONDITION = {"aws": "AcceleratedHardwareReady"}
"""The node condition repair acts on for GPU faults: the EKS agent's (aws/eks-node-monitoring-agent
pkg/reasons/reasons.yaml). GKE's device plugin's XidCriticalError "will not trigger auto-repair"
(container-engine-accelerators pkg/gpu/nvidia/health_check/health_checker.go): none on GKE."""


def platform(plan: Plan) -> str:
    return str(plan.outputs["gpuHealth"]["platform"])


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_detects_and_repairs_or_says_why(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    health = plan.outputs["gpuHealth"]
    pools = {p["name"] for p in load(stack, ROOT).config["gpuplane:gpuPools"]}
    assert {row["pool"] for row in health["pools"]} == pools
    for row in health["pools"]:
        assert row["detection"] or row["notDetected"], row
        assert row["repair"] or row["notRepaired"], row
        if row["repair"] and row["honoursPodDisruptionBudgets"] is False:
            assert any("PodDisruptionBudgets" in w for w in health["warnings"]), health["warnings"]
    addons = [r for r in plan.by_type(ADDON) if r.inputs["addonName"] == AGENT]
    regions = len(plan.outputs.get("regions") or [None])
    assert len(addons) == (regions if platform(plan) in MANAGES_NODES else 0)


def test_node_groups_get_repair_in_the_eks_api_shape(plan_of: Callable[..., Plan]) -> None:
    members = botocore.loaders.Loader().load_service_model("eks", "service-2")["shapes"]["NodeRepairConfig"]["members"]
    for stack in ("aws-managed", "aws-reserved", "aws-blackwell"):
        groups = plan_of(stack).by_type(MNG)
        assert groups
        for g in groups:  # pulumi-eks's component has no such input: the transform gives it to its node group
            config = g.child_inputs["nodeRepairConfig"]
            assert config["enabled"] is True and set(config) <= set(members), config
    # the library component sets the SDK's own argument, with the same fields
    from gpuplane.config.health import HealthConfig
    from gpuplane.health.repair import node_repair_args

    params = set(inspect.signature(aws.eks.NodeGroupNodeRepairConfigArgs.__init__).parameters) - {"__self__"}
    assert set(node_repair_args(HealthConfig())) <= params


def test_repair_and_detection_follow_the_config(plan_of: Callable[..., Plan]) -> None:
    on = plan_of("aws-managed")
    # no unhealthy threshold unless asked: a percentage would also apply to 2-node groups, where EKS's default
    # (halt above 20% only in groups of more than 5 nodes) keeps repairing
    assert {tuple(g.child_inputs["nodeRepairConfig"]) for g in on.by_type(MNG)} == {
        ("enabled", "maxParallelNodesRepairedCount")
    }
    capped = plan_of(stack_with("aws-managed", health={"maxUnhealthyPercent": 50}))
    assert all(
        g.child_inputs["nodeRepairConfig"]["maxUnhealthyNodeThresholdPercentage"] == 50 for g in capped.by_type(MNG)
    )
    # off says `enabled: false`: the provider keeps a stored node_repair_config the program leaves out (Optional
    # and Computed in terraform-provider-aws eks/node_group.go), so silence would never turn repair off
    off = plan_of(stack_with("aws-managed", health={"repair": False}))
    assert all(g.child_inputs["nodeRepairConfig"] == {"enabled": False} for g in off.by_type(MNG))
    assert all(row["notRepaired"] == "gpuplane:health.repair is off" for row in off.outputs["gpuHealth"]["pools"])
    blind = plan_of(stack_with("aws-karpenter", health={"detection": False, "repair": False}))
    assert all(r.inputs["addonName"] != AGENT for r in blind.by_type(ADDON))
    charts = [r for r in blind.by_type(RELEASE) if r.inputs["chart"].endswith("/karpenter")]
    gates = [r.inputs["values"]["settings"]["featureGates"] for r in charts]
    assert gates == [{"nodeOverlay": True, "reservedCapacity": True, "nodeRepair": False}]
    (values,) = [
        r.inputs["values"]
        for r in plan_of("aws-karpenter").by_type(RELEASE)
        if r.inputs["chart"].endswith("/karpenter")
    ]
    assert values["settings"]["featureGates"]["nodeRepair"] is True


def test_every_catalog_gpu_instance_type_gets_the_agents_dcgm_server() -> None:
    """An x86 GPU node without the add-on's dcgm-server reports DCGMError (fatal), which Karpenter repair would
    answer by replacing healthy nodes: every AWS GPU type gpuplane offers must be on the DaemonSet's list
    (aws/eks-node-monitoring-agent values.yaml `dcgmAgent.affinity`)."""
    from gpuplane.catalog import GPUS
    from gpuplane.catalog.health import NMA_DCGM_INSTANCE_TYPES

    offered = {i for g in GPUS.values() if g.aws for i in g.aws.instances}
    assert offered and offered <= NMA_DCGM_INSTANCE_TYPES, sorted(offered - NMA_DCGM_INSTANCE_TYPES)


def test_karpenter_node_repair_gate_is_the_charts() -> None:
    values = yaml.safe_load((need_reference() / "charts" / "karpenter" / "values.yaml").read_text())
    assert "nodeRepair" in values["settings"]["featureGates"]


def test_the_simulator_knows_the_agent_would_miss_tainted_gpu_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The add-on's dcgm-server tolerates nothing by default: without gpuplane's tolerations it would not run
    on a GPU node, and the agent would mark every healthy GPU node unhealthy (which repair replaces)."""
    import gpuplane.aws.platform as eks_platform

    for stack in ("aws-managed", "aws-karpenter"):
        assert not deploy.check(plan_stack(load(stack, ROOT)), rerun=False)
    monkeypatch.setattr(eks_platform, "agent_configuration", lambda: json.dumps({}))
    for stack, gpu_pools in (("aws-managed", 2), ("aws-karpenter", 3)):
        found = [v for v in deploy.check(plan_stack(load(stack, ROOT)), rerun=False) if "dcgm-server" in str(v)]
        missed = [v for v in found if v.rule == "daemonset-covers-its-nodes"]
        assert len(missed) == gpu_pools and {v.rule for v in found} <= {
            "daemonset-covers-its-nodes",
            "workload-schedulable",
        }, found


def test_arm64_gpu_nodes_say_they_are_not_detected(plan_of: Callable[..., Plan]) -> None:
    """The agent turns NVIDIA monitoring off on arm64 and its dcgm-server is amd64 only (NMA monitor.go,
    values.yaml): the Grace pool is not watched, and the summary says so."""
    rows = {r["pool"]: r for r in plan_of("aws-blackwell").outputs["gpuHealth"]["pools"]}
    assert "arm64" in rows["nvl72"]["notDetected"] and rows["nvl72"]["detection"] is None
    assert rows["b200"]["detection"] and rows["b200"]["condition"] == CONDITION["aws"]


def test_flex_start_and_queued_pools_have_no_repair(plan_of: Callable[..., Plan]) -> None:
    rows = {r["pool"]: r for r in plan_of("gcp-dws").outputs["gpuHealth"]["pools"]}
    pools = {p["name"]: p for p in load("gcp-dws", ROOT).config["gpuplane:gpuPools"]}
    for name, pool in pools.items():
        dws = pool.get("capacity", ["on-demand"])[0] in ("flex-start", "queued")
        assert (rows[name]["repair"] is None) == dws, rows[name]
        if dws:  # the whole reason, not half a sentence
            assert rows[name]["notRepaired"].endswith("a failed node is returned when its run ends"), rows[name]


@pytest.mark.parametrize("stack", ["aws-managed", "gcp-standard", "aws-automode", "gcp-autopilot"])
def test_gpu_fault_alerts_name_the_node_condition(stack: str, plan_of: Callable[..., Plan]) -> None:
    groups = yaml.safe_load(str(plan_of(stack).outputs["prometheusRules"]))["groups"]
    alerts = {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}
    cloud = "aws" if stack.startswith("aws") else "gcp"
    for name in ("GpuXidError", "GpuRowRemapFailure", "GpuUncorrectableRemappedRows"):
        if name in alerts:
            assert alerts[name]["annotations"].get("node_condition") == CONDITION.get(cloud)
    assert "node_condition" not in alerts["GpuMemoryNearlyFull"]["annotations"]


# --- post-deploy checks ------------------------------------------------------------------------------


def by_kind(plan: Plan, kind: str, namespace: str) -> dict[str, dict[str, Any]]:
    out = {}
    for r in kube_objects(plan):
        meta = r.inputs["metadata"]
        if r.inputs["kind"] == kind and meta.get("namespace") == namespace:
            out[meta["name"]] = r.inputs
    return out


@pytest.mark.parametrize("stack", ["aws-multinode", "gcp-multinode"])
def test_multinode_stacks_run_an_nccl_test_across_nodes(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    jobs = by_kind(plan, "Job", validation.NAMESPACE)
    services = by_kind(plan, "Service", validation.NAMESPACE)
    job = jobs["gpu-nccl-training"]
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    # an Indexed Job: one pod per node, the Job done when index 0 (the launcher) succeeds (batch/v1 JobSpec)
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 2
    assert spec["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    # pods reach each other as <job>-<index>.<subdomain>: a headless Service of that name selecting them
    service = services[pod["subdomain"]]["spec"]
    assert service["clusterIP"] == "None"
    assert service["selector"].items() <= job["spec"]["template"]["metadata"]["labels"].items()
    script = pod["containers"][0]["command"][-1]
    assert "gpu-nccl-training-0.gpu-nccl-training" in script and "gpu-nccl-training-1.gpu-nccl-training" in script
    resources = pod["containers"][0]["resources"]
    limits = resources["limits"]
    # no CPU limit: a CFS quota would throttle the MPI ranks and NCCL's proxy threads (neither AWS's nor
    # Google's NCCL test sets one); /dev/shm is memory-backed and bounded
    assert "cpu" not in limits and "memory" not in limits and resources["requests"]["cpu"]
    assert {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}} in pod["volumes"]
    assert limits["nvidia.com/gpu"] == 8  # every GPU of the node: p5.48xlarge and a3-ultragpu-8g carry 8 H100 / H200
    if stack == "aws-multinode":
        assert limits["vpc.amazonaws.com/efa"] == 32  # p5.48xlarge: 32 EFA interfaces (EC2 instance types)
        assert {v["name"] for v in pod["volumes"]} >= {"ssh"} and "gpu-nccl-training" in by_kind(
            plan, "Secret", validation.NAMESPACE
        )
    else:  # GPUDirect RDMA: the pod attaches the node's RDMA NICs, so it waits for those Networks and the installer
        annotations = job["spec"]["template"]["metadata"]["annotations"]
        named = {i["network"] for i in json.loads(annotations["networking.gke.io/interfaces"])} - {"default"}
        (planned,) = [r for r in plan.resources if r.type == "kubernetes:batch/v1:Job" and r.name.endswith("-nccl")]
        networks = {
            r.inputs["metadata"]["name"]: r.urn
            for r in plan.resources
            if r.type.endswith("networking.gke.io/v1:Network")
        }
        assert named and named <= set(networks) and {networks[n] for n in named} <= set(planned.dependencies)
        assert "until [ -f /usr/local/gib/scripts/set_nccl_env.sh ]" in script
    checks = {(c["pool"], c["check"]): c for c in plan.outputs["gpuHealth"]["checks"]}
    assert checks[("training", "nccl")]["minBusBandwidthGBps"] == 300  # aicr's H100/H200 floor (p5, a3-ultra)
    assert checks[("inference", "nccl")]["job"] is None and checks[("inference", "nccl")]["skipped"]


def run_gate(floor: float | None, lines: list[str], tmp_path: Path) -> int:
    """Run the NCCL Job's own pass/fail lines (bash + awk) over an output."""
    (tmp_path / "out").write_text("\n".join(lines) + "\n")
    script = validation.gate(floor).replace("/tmp/nccl.out", str(tmp_path / "out"))
    return subprocess.run(["bash", "-c", f"set -e\n{script}"], check=False).returncode


def test_the_in_cluster_gate_agrees_with_gpuplane_validate(tmp_path: Path) -> None:
    check = validation.Check("training", "nccl", "gpu-nccl-training", floor=300)
    cases = [(sample.nccl(437.79), True), (sample.nccl(250.0), False), (sample.nccl(437.79, wrong=3), False)]
    for lines, ok in cases:
        assert (run_gate(300, lines, tmp_path) == 0) is ok
        assert results.nccl_verdict(check, lines).ok is ok
    assert run_gate(None, sample.nccl(1.0), tmp_path) == 0  # no floor: only wrong values fail


def log(*parts: list[str]) -> str:
    return "\n".join(line for part in parts for line in part) + "\n"


def passing_log() -> str:
    return log(
        sample.prefixed("gpu-smoke-training-x7k2p", "main", sample.gpus(8)),
        sample.prefixed("gpu-smoke-inference-q2w9z", "main", sample.gpus(1)),
        sample.prefixed("gpu-diag-training-abcde", "diag", sample.diag()),
        sample.prefixed("gpu-diag-inference-fghij", "diag", sample.diag()),
        sample.prefixed("gpu-nccl-training-0-k8s9d", "nccl", sample.nccl()),
        sample.prefixed("gpu-nccl-training-1-p0o9i", "nccl", ["Server listening on 0.0.0.0 port 22."]),
    )


def test_validate_passes_a_healthy_stack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ok.log").write_text(passing_log())
    assert cli_main(["validate", "aws-multinode", "--from", str(tmp_path / "ok.log"), "--format", "json"]) == 0
    verdicts = {(v["pool"], v["check"]): v for v in json.loads(capsys.readouterr().out)["checks"]}
    assert verdicts[("training", "gpus")]["detail"] == "8 of 8 GPUs visible"
    assert (
        verdicts[("training", "nccl")]["result"] == "pass" and "437.79 GB/s" in verdicts[("training", "nccl")]["detail"]
    )
    assert verdicts[("inference", "nccl")]["result"] == "skipped"


@pytest.mark.parametrize(
    ("broken", "check", "detail"),
    [
        ({"gpu-smoke-training-x7k2p": sample.gpus(7)}, "gpus", "7 of 8 GPUs visible"),
        ({"gpu-diag-training-abcde": sample.diag("Fail")}, "diag", "failed: software, software (GPU0)"),
        ({"gpu-nccl-training-0-k8s9d": sample.nccl(120.5)}, "nccl", "120.5 GB/s bus bandwidth at 2147483648 B < 300"),
        ({"gpu-nccl-training-0-k8s9d": []}, "nccl", "no all_reduce_perf results in the output"),
        ({"gpu-diag-training-abcde": []}, "diag", "no output of gpu-diag-training's pods"),
    ],
)
def test_validate_fails_a_missing_gpu_a_failed_diagnostic_and_a_slow_fabric(
    broken: dict[str, list[str]], check: str, detail: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = []
    for line in passing_log().splitlines():
        pod = line.split("/")[1]
        if pod in broken:
            continue
        lines.append(line)
    for pod, out in broken.items():
        lines += sample.prefixed(pod, "x", out)
    (tmp_path / "bad.log").write_text("\n".join(lines) + "\n")
    assert cli_main(["validate", "aws-multinode", "--from", str(tmp_path / "bad.log")]) == 1
    table = capsys.readouterr().out
    (row,) = [r for r in table.splitlines() if r.startswith("training") and f" {check} " in r]
    assert detail in row and ("fail" in row or "missing" in row), row


def test_pool_names_that_share_a_prefix_are_told_apart() -> None:
    out = results.split_log(
        sample.prefixed("gpu-diag-a-b-12345", "diag", ["x"]) + sample.prefixed("gpu-diag-a-67890", "diag", ["y"]),
        ["a", "a-b"],
    )
    assert out == {("a-b", "diag"): ["x"], ("a", "diag"): ["y"]}


def test_a_dra_stack_validates_with_claims(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("aws-blackwell", smokeTest=None, validation={"enabled": True}))
    assert not deploy.check(plan, rerun=False)
    diag = by_kind(plan, "Job", validation.NAMESPACE)["gpu-diag-b200"]["spec"]["template"]["spec"]
    (claim,) = diag["resourceClaims"]
    templates = by_kind(plan, "ResourceClaimTemplate", validation.NAMESPACE)
    assert claim["resourceClaimTemplateName"] in templates
    (request,) = templates[claim["resourceClaimTemplateName"]]["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["count"] == 8  # the whole p6-b200.48xlarge node: 8 B200


ADDON_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "global": {"type": "object"},
        "nodeAgent": {"type": "object"},
        "dcgmAgent": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "affinity": {"type": "object"},
                "podAnnotations": {"type": "object"},
                "podLabels": {"type": "object"},
                "nodeSelector": {"type": "object"},
                "priorityClassName": {"type": "string"},
                "resources": {"type": "object"},
                "resizePolicy": {"type": "array"},
                "tolerations": {"type": "array", "items": {"type": "object"}},
            },
        },
        "extraObjects": {"type": "array"},
    },
}
"""The add-on's configuration schema, restated from aws/eks-node-monitoring-agent @ 51af549
charts/configuration.schema.json (`EKSNodeMonitoringAgent`, `DCGMAgent`, `Tolerations`; both objects
`additionalProperties: false`, so EKS refuses an unknown key)."""


def test_the_agents_configuration_is_in_its_published_schema(plan_of: Callable[..., Plan]) -> None:
    import jsonschema
    import kubernetes_validate

    from .conftest import schema_version

    for stack in ("aws-managed", "aws-karpenter", "aws-multinode"):
        (addon,) = [r for r in plan_of(stack).by_type(ADDON) if r.inputs["addonName"] == AGENT]
        values = json.loads(addon.inputs["configurationValues"])
        jsonschema.validate(values, ADDON_SCHEMA)
        # each toleration is a core/v1 Toleration (the chart renders them into the DaemonSet's pod spec)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "dcgm-server"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": values["dcgmAgent"]["tolerations"]},
        }
        kubernetes_validate.validate(pod, schema_version(stack), strict=True)
