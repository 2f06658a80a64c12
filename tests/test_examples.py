"""Every example program under examples/ runs under the plan's mocks, so the examples can't rot."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.plan import load
from gpuplane.plan.deploy import check
from gpuplane.plan.mocks import PlanMocks
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


STACK_OUTPUTS = {
    "acme/eks-platform/prod": {
        "clusterName": "platform",
        "kubeconfig": "apiVersion: v1\nkind: Config\n",
        "karpenterNodeRole": "platform-karpenter-node-role",
    }
}
"""Outputs of the stacks the examples reference (`pulumi.StackReference`)."""


class ExampleMocks(PlanMocks):
    """The plan's mocks, answering stack references with `STACK_OUTPUTS`."""

    def new_resource(self, args: Any) -> tuple[str, dict[str, Any]]:
        if args.typ == "pulumi:pulumi:StackReference":
            outputs = STACK_OUTPUTS[str(args.inputs["name"])]
            return str(args.inputs["name"]), {**args.inputs, "outputs": outputs, "secretOutputNames": ["kubeconfig"]}
        return super().new_resource(args)


def test_every_example_is_listed() -> None:
    assert set(EXAMPLES) == set(EXPECTED)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_under_mocks(example: str) -> None:
    folder = ROOT / "examples" / example
    stack = load(str(folder / "Pulumi.example.yaml"))
    project = str(__import__("yaml").safe_load((folder / "Pulumi.yaml").read_text())["name"])
    monitor = install(type(stack)(project=project, stack="example", config=stack.config), ExampleMocks())
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
    violations = check(Plan(project, "example", tree_order(monitor.registrations)), STATED_CRDS.get(example, ()))
    assert violations == [], "\n".join(str(v) for v in violations)


STATED_CRDS = {
    "gke-your-cluster": {"monitoring.coreos.com"},
    "eks-karpenter-stack-reference": {"karpenter.sh", "karpenter.k8s.aws"},
}
"""API groups an example states its cluster has (gke-your-cluster: Prometheus Operator, so
`prometheus_operator_crds="existing"`; eks-karpenter-stack-reference: a cluster that runs Karpenter)."""


def test_stated_crds_match_the_examples_config() -> None:
    source = (ROOT / "examples" / "gke-your-cluster" / "__main__.py").read_text()
    assert 'prometheus_operator_crds="existing"' in source
    source = (ROOT / "examples" / "eks-karpenter-stack-reference" / "__main__.py").read_text()
    assert "StackReference" in source and "Karpenter installed" in source


def test_no_example_builds_a_stack_config() -> None:
    for example in EXAMPLES:
        source = (ROOT / "examples" / example / "__main__.py").read_text()
        assert "parse_config" not in source and "us-east-1" not in source, example
