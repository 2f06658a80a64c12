"""Monitoring deploys on a real cluster: custom resources wait for their CRDs, and the pods gpuplane places
(kube-prometheus-stack's) land on nodes that exist.

- ServiceMonitor and PrometheusRule need the monitoring.coreos.com CRDs. With `prometheus-operator` the
  `prometheus-operator-crds` chart installs them, with `install` kube-prometheus-stack does, never both
  (two Helm owners of one CRD conflict); with `prometheusOperatorCrds: existing` gpuplane installs none.
- EKS Auto Mode has no gpuplane system node group: its nodes come from the built-in NodePools below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gpuplane.plan import Plan, PlannedResource
from gpuplane.plan.deploy.scheduling import AUTO_MODE_BUILTIN

from .conftest import SINGLE, load_stack_config, stack_with
from .graph import RELEASE, tolerates
from .test_monitoring_graph import CASES

CRD_USERS = {"ServiceMonitor", "PrometheusRule"}


def releases(plan: Plan, chart: str) -> list[PlannedResource]:
    return [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == chart]


def crd_users(plan: Plan) -> list[PlannedResource]:
    return [r for r in plan.resources if r.type.startswith("kubernetes:monitoring.coreos.com/") and r.custom]


@pytest.mark.parametrize(("stack", "integration"), [c for c in CASES if c[1] in ("prometheus-operator", "install")])
def test_monitors_wait_for_whatever_installs_their_crds(
    stack: str, integration: str, plan_of: Callable[..., Plan]
) -> None:
    monitoring = {**load_stack_config(stack).get("gpuplane:monitoring", {}), "integration": integration}
    plan = plan_of(stack_with(stack, monitoring=monitoring))
    crds, kps = releases(plan, "prometheus-operator-crds"), releases(plan, "kube-prometheus-stack")
    # Exactly one installer of the CRDs: the CRD chart, or kube-prometheus-stack with its `crds` subchart on.
    installer = {"prometheus-operator": crds, "install": kps}[integration]
    assert len(crds) + len(kps) == 1 and len(installer) == 1
    assert all(r.inputs["values"].get("crds", {}).get("enabled", True) for r in kps)
    users = crd_users(plan)  # the GPU monitors, and an autoscaled Deployment's PodMonitor (docs/autoscaling.md)
    assert {r.inputs["kind"] for r in users if "gpuplane:monitoring:GpuMonitoring" in r.urn} == CRD_USERS
    for r in users:
        assert installer[0].urn in r.dependencies, f"{r.urn} does not wait for {installer[0].urn}"


def test_crd_release_survives_its_removal_and_adopts_unowned_crds(plan_of: Callable[..., Plan]) -> None:
    """Removing the release must not delete the CRDs (and with them every ServiceMonitor in the cluster);
    CRDs left by kube-prometheus-stack (Helm never owns a chart's crds/ folder) are adopted, not refused."""
    (crds,) = releases(plan_of("aws-karpenter"), "prometheus-operator-crds")
    assert crds.inputs["values"] == {"crds": {"annotations": {"helm.sh/resource-policy": "keep"}}}
    assert crds.inputs["takeOwnership"] is True
    assert crds.inputs["version"] == "31.0.1"
    assert crds.inputs["repositoryOpts"]["repo"] == "https://prometheus-community.github.io/helm-charts"
    assert crds.dependencies == ()  # first: nothing to wait for


def test_crd_chart_carries_the_operator_version_of_kube_prometheus_stack() -> None:
    """Switching between `prometheus-operator` and `install` must never downgrade a CRD."""
    from gpuplane.pins import CHARTS

    assert CHARTS["prometheus-operator-crds"].app_version == CHARTS["kube-prometheus-stack"].app_version


@pytest.mark.parametrize("integration", ["prometheus-operator", "install"])
def test_existing_crds_are_not_installed(integration: str, plan_of: Callable[..., Plan]) -> None:
    monitoring = {"integration": integration, "prometheusOperatorCrds": "existing"}
    plan = plan_of(stack_with("aws-managed", monitoring=monitoring))
    assert not releases(plan, "prometheus-operator-crds")
    assert all(r.inputs["values"]["crds"] == {"enabled": False} for r in releases(plan, "kube-prometheus-stack"))
    assert {r.inputs["kind"] for r in crd_users(plan)} == CRD_USERS


@pytest.mark.parametrize(("stack", "integration"), CASES)
def test_exporter_charts_never_create_a_servicemonitor(
    stack: str, integration: str, plan_of: Callable[..., Plan]
) -> None:
    """gpu-operator v26.7.0 turns `dcgmExporter.serviceMonitor.enabled` on by default (needs the CRD); gpuplane
    creates its own ServiceMonitor, so the charts' would be a second one scraping the same exporter."""
    plan = plan_of(stack_with(stack, monitoring={"integration": integration}))
    for r in releases(plan, "gpu-operator"):
        assert r.inputs["values"]["dcgmExporter"]["serviceMonitor"] == {"enabled": False}
    for r in releases(plan, "dcgm-exporter"):
        assert r.inputs["values"]["serviceMonitor"] == {"enabled": False}


# --- where kube-prometheus-stack's pods go ---------------------------------------------------------

AUTO_MODE_NODEPOOLS: dict[str, dict[str, Any]] = {
    "general-purpose": {
        "labels": {
            "karpenter.sh/nodepool": "general-purpose",
            "karpenter.sh/capacity-type": "on-demand",
            "eks.amazonaws.com/compute-type": "auto",
            "kubernetes.io/arch": "amd64",
        },
        "taints": [],
    },
    "system": {
        "labels": {
            "karpenter.sh/nodepool": "system",
            "karpenter.sh/capacity-type": "on-demand",
            "eks.amazonaws.com/compute-type": "auto",
        },
        "taints": [("CriticalAddonsOnly", "", "NoSchedule")],
    },
}
"""EKS Auto Mode's built-in NodePools, written from the EKS user guide ("Built-in NodePools",
set-builtin-node-pools): `general-purpose` (on-demand, amd64, no taints) and `system` (amd64 and arm64, so
no single arch label; tainted `CriticalAddonsOnly:NoSchedule`: the docs give the key only, and
critical-workload.adoc tolerates it with `operator: Exists`); both on by default (pulumi-eks
ClusterComputeConfig.nodePools). test_the_simulators_auto_mode_pools_are_the_documented_ones holds the deploy
simulator's model (`scheduling.AUTO_MODE_BUILTIN`) to it."""


def test_the_simulators_auto_mode_pools_are_the_documented_ones() -> None:
    modelled = {
        next(iter(shape.labels["karpenter.sh/nodepool"])): {
            "labels": {k: next(iter(v)) for k, v in shape.labels.items() if len(v) == 1},
            "taints": list(shape.taints),
        }
        for shape in AUTO_MODE_BUILTIN
    }
    assert modelled == AUTO_MODE_NODEPOOLS


KPS_POD_TEMPLATES = (
    ("prometheusOperator",),
    ("prometheusOperator", "admissionWebhooks", "patch"),
    ("prometheus", "prometheusSpec"),
    ("alertmanager", "alertmanagerSpec"),
    ("grafana",),
    ("kube-state-metrics",),
)
"""Values paths of kube-prometheus-stack 88.5.3's enabled pod templates that take `nodeSelector` and
`tolerations` (node-exporter, a DaemonSet that tolerates every NoSchedule taint by default, excepted)."""


def lands_on(spec: dict[str, Any], pools: dict[str, dict[str, Any]]) -> list[str]:
    """The pools whose nodes a pod with this nodeSelector and these tolerations can run on."""
    selector, tolerations = spec.get("nodeSelector", {}), spec.get("tolerations", [])
    return [
        name
        for name, pool in pools.items()
        if all(pool["labels"].get(k) == v for k, v in selector.items())
        and all(tolerates(tolerations, t) for t in pool["taints"])
    ]


def kps_pod_specs(plan: Plan) -> dict[str, dict[str, Any]]:
    (kps,) = releases(plan, "kube-prometheus-stack")
    out = {}
    for path in KPS_POD_TEMPLATES:
        spec: Any = kps.inputs["values"]
        for key in path:
            spec = spec.get(key, {})
        out[".".join(path)] = spec
    return out


def test_auto_mode_monitoring_pods_land_on_a_built_in_nodepool(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("aws-automode", monitoring={"integration": "install"}))
    for path, spec in kps_pod_specs(plan).items():
        assert lands_on(spec, AUTO_MODE_NODEPOOLS), f"{path}: no Auto Mode node takes {spec}"
        assert lands_on(spec, AUTO_MODE_NODEPOOLS) == ["system"], path  # isolated from workloads


def test_the_landing_check_rejects_gpuplanes_own_system_label() -> None:
    assert lands_on({"nodeSelector": {"gpuplane.io/role": "system"}}, AUTO_MODE_NODEPOOLS) == []
    assert lands_on({"nodeSelector": {"karpenter.sh/nodepool": "system"}}, AUTO_MODE_NODEPOOLS) == []
    assert lands_on({}, AUTO_MODE_NODEPOOLS) == ["general-purpose"]


SYSTEM_NODES = {
    "aws:eks/nodeGroup:NodeGroup": lambda i: i.get("labels") or {},
    "eks:index:ManagedNodeGroup": lambda i: i.get("labels") or {},
    "gcp:container/nodePool:NodePool": lambda i: (i.get("nodeConfig") or {}).get("labels") or {},
}
"""Where the stack's own node groups/pools carry their Kubernetes labels."""


@pytest.mark.parametrize("stack", [s for s in SINGLE if s != "aws-automode" and (s, "install") in CASES])
def test_monitoring_pods_select_a_pool_the_stack_creates(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with(stack, monitoring={"integration": "install"}))
    pools = {
        r.urn: {"labels": labels(r.inputs), "taints": []}
        for t, labels in SYSTEM_NODES.items()
        for r in plan.by_type(t)
        if not r.inputs.get("taints") and not (r.inputs.get("nodeConfig") or {}).get("taints")
    }
    for path, spec in kps_pod_specs(plan).items():
        assert spec.get("nodeSelector") and lands_on(spec, pools), f"{stack} {path}: {spec}"
