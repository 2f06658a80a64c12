"""Every example program under examples/ runs under the plan's mocks, so the examples can't rot."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.plan import load
from gpuplane.plan.deploy import check
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.project import existing_crds, stack_references
from gpuplane.plan.runner import Plan, install, tree_order

from .conftest import ROOT

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/__main__.py"))
"""The Python programs (YAML ones are checked against the package schema in test_provider.py)."""
EXPECTED = {
    "gke-your-cluster": {
        "gcp:container/cluster:Cluster",
        "gpuplane:gcp:GkeGpuNodePools",
        "gcp:container/nodePool:NodePool",
        "gpuplane:nvidia:DcgmExporter",
    },
    "eks-your-cluster": {
        "eks:index:Cluster",
        "gpuplane:aws:EksGpuNodeGroups",
        "aws:eks/nodeGroup:NodeGroup",
        "gpuplane:nvidia:GpuOperator",
    },
    "eks-karpenter-stack-reference": {
        "gpuplane:aws:KarpenterGpuNodePools",
        "kubernetes:karpenter.sh/v1:NodePool",
        "gpuplane:nvidia:GpuOperator",
    },
    "nvidia-on-any-cluster": {"gpuplane:nvidia:GpuOperator", "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"},
}


def test_every_example_is_listed() -> None:
    assert set(EXAMPLES) == set(EXPECTED)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_under_mocks(example: str) -> None:
    folder = ROOT / "examples" / example
    stack = load(str(folder / "Pulumi.example.yaml"))
    project = str(__import__("yaml").safe_load((folder / "Pulumi.yaml").read_text())["name"])
    mocks = PlanMocks(stack_references(stack))  # as `gpuplane plan --program` answers StackReference
    monitor = install(type(stack)(project=project, stack="example", config=stack.config), mocks)
    _sync_await(run_pulumi_func(lambda: runpy.run_path(str(Path(folder) / "__main__.py"), run_name="__main__")))
    types = {r.type for r in monitor.registrations}
    assert EXPECTED[example] <= types, EXPECTED[example] - types
    if example == "gke-your-cluster":  # a cluster with Prometheus Operator: its CRDs are not reinstalled
        charts = {r.inputs.get("chart") for r in monitor.registrations if r.type == "kubernetes:helm.sh/v3:Release"}
        assert "prometheus-operator-crds" not in charts
        assert "kubernetes:monitoring.coreos.com/v1:ServiceMonitor" in types
    if example == "eks-karpenter-stack-reference":  # the other stack's outputs reach the NodeClass
        classes = [r for r in monitor.registrations if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]
        assert classes and all(c.inputs["spec"]["role"] == "platform-karpenter-node-role" for c in classes)
        terms = classes[0].inputs["spec"]["securityGroupSelectorTerms"]
        assert terms == [{"tags": {"aws:eks:cluster-name": "platform"}}]
    k8s_providers = [r for r in monitor.registrations if r.type == "pulumi:providers:kubernetes"]
    assert all(p.inputs["kubeconfig"] == "[secret]" for p in k8s_providers)
    # The deploy simulator passes too, given the CRDs the example states its cluster has.
    violations = check(Plan(project, "example", tree_order(monitor.registrations)), existing_crds(stack))
    assert violations == [], "\n".join(str(v) for v in violations)


def test_stated_crds_match_the_examples_programs() -> None:
    """The CRDs an example's stack file states are the ones its program says the cluster has."""
    for example, marker in {
        "gke-your-cluster": "CrdSource.EXISTING",
        "eks-karpenter-stack-reference": "Karpenter installed",
    }.items():
        folder = ROOT / "examples" / example
        assert marker in (folder / "__main__.py").read_text()
        assert existing_crds(load(str(folder / "Pulumi.example.yaml"))), example


def test_no_example_builds_a_stack_config() -> None:
    for example in EXAMPLES:
        source = (ROOT / "examples" / example / "__main__.py").read_text()
        assert "parse_config" not in source and "us-east-1" not in source, example
