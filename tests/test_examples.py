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
from gpuplane.plan.runner import Plan, install, tree_order

from .conftest import ROOT

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/Pulumi.yaml"))
EXPECTED = {
    "gke-existing-cluster": {
        "gpuplane:gcp:GkeGpuNodePools",
        "gcp:container/nodePool:NodePool",
        "gpuplane:nvidia:DcgmExporter",
    },
    "eks-existing-karpenter": {
        "gpuplane:aws:Karpenter",
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
    monitor = install(type(stack)(project=project, stack="example", config=stack.config), PlanMocks())
    _sync_await(run_pulumi_func(lambda: runpy.run_path(str(Path(folder) / "__main__.py"), run_name="__main__")))
    types = {r.type for r in monitor.registrations}
    assert EXPECTED[example] <= types, EXPECTED[example] - types
    if example == "gke-existing-cluster":  # a cluster with Prometheus Operator: its CRDs are not reinstalled
        charts = {r.inputs.get("chart") for r in monitor.registrations if r.type == "kubernetes:helm.sh/v3:Release"}
        assert "prometheus-operator-crds" not in charts
        assert "kubernetes:monitoring.coreos.com/v1:ServiceMonitor" in types
    k8s_providers = [r for r in monitor.registrations if r.type == "pulumi:providers:kubernetes"]
    assert all(p.inputs["kubeconfig"] == "[secret]" for p in k8s_providers)
    # The deploy simulator passes too, given the CRDs the example states its cluster has.
    violations = check(Plan(project, "example", tree_order(monitor.registrations)), STATED_CRDS.get(example, ()))
    assert violations == [], "\n".join(str(v) for v in violations)


STATED_CRDS = {"gke-existing-cluster": {"monitoring.coreos.com"}}
"""API groups an example states its existing cluster has (gke-existing-cluster: `prometheusOperatorCrds`
defaults to `existing` in its program)."""


def test_stated_crds_match_the_examples_config() -> None:
    for example, groups in STATED_CRDS.items():
        source = (ROOT / "examples" / example / "__main__.py").read_text()
        assert '"prometheusOperatorCrds": conf.get("prometheusOperatorCrds") or "existing"' in source
        assert groups == {"monitoring.coreos.com"}
