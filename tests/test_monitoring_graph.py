"""Monitors, rules and dashboards agree with the exporter the same stack creates, for every integration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from gpuplane.catalog import PLATFORMS
from gpuplane.catalog.platforms import Source
from gpuplane.plan import Plan

from .conftest import SINGLE as STACKS
from .conftest import load_stack_config, stack_with
from .graph import RELEASE, exporter_facts, kube_objects, selects


def platform_of(stack: str) -> Any:
    return PLATFORMS[load_stack_config(stack)["gpuplane:platform"]]


# Stacks whose exporter gpuplane installs (Autopilot's metrics come from GKE itself).
CASES = [
    (stack, integration)
    for stack in STACKS
    if platform_of(stack).metrics != Source.PLATFORM
    for integration in platform_of(stack).integrations
]


def objects(plan: Plan, kind: str) -> list[dict[str, Any]]:
    """The GPU monitoring's objects of `kind` (not an autoscaled Deployment's scrape, docs/autoscaling.md)."""
    return [r.inputs for r in kube_objects(plan) if r.inputs["kind"] == kind and "gpuplane:autoscaling:" not in r.urn]


@pytest.mark.parametrize(("stack", "integration"), CASES)
def test_monitors_match_the_exporter(stack: str, integration: str, plan_of: Callable[..., Plan]) -> None:
    monitoring = {**load_stack_config(stack).get("gpuplane:monitoring", {}), "integration": integration}
    plan = plan_of(stack_with(stack, monitoring=monitoring))
    facts = exporter_facts(plan)
    sms, pms = objects(plan, "ServiceMonitor"), objects(plan, "PodMonitoring")
    rules = objects(plan, "PrometheusRule")
    expected = {"scrape-config": (0, 0), "prometheus-operator": (1, 0), "install": (1, 0), "gke-managed": (0, 1)}[
        integration
    ]
    assert (len(sms), len(pms)) == expected
    for sm in sms:
        assert sm["metadata"]["namespace"] == facts["namespace"]
        assert sm["spec"]["namespaceSelector"]["matchNames"] == [facts["namespace"]]
        assert selects(sm["spec"]["selector"]["matchLabels"], facts["service_labels"])
        assert [e["port"] for e in sm["spec"]["endpoints"]] == [facts["service_port"]]
    for pm in pms:
        assert pm["metadata"]["namespace"] == facts["namespace"]
        assert selects(pm["spec"]["selector"]["matchLabels"], facts["pod_labels"])
        assert [e["port"] for e in pm["spec"]["endpoints"]] == [facts["container_port"]]
    assert len(rules) == len(sms)


@pytest.mark.parametrize(("stack", "integration"), [c for c in CASES if c[1] in ("install", "prometheus-operator")])
def test_prometheus_selects_the_monitor_and_rules(stack: str, integration: str, plan_of: Callable[..., Plan]) -> None:
    selector = {"prometheus": "gpu"}
    monitoring = {"integration": integration, "selectorLabels": selector}
    plan = plan_of(stack_with(stack, monitoring=monitoring))
    kps = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "kube-prometheus-stack"]
    if integration == "install":
        (release,) = kps
        # kube-prometheus-stack's Prometheus selects monitors and rules labelled release=<release name>
        # while *SelectorNilUsesHelmValues stays at its default (true).
        spec = release.inputs["values"]["prometheus"]["prometheusSpec"]
        assert "serviceMonitorSelectorNilUsesHelmValues" not in spec and "ruleSelectorNilUsesHelmValues" not in spec
        wanted = {"release": release.inputs["name"]}
    else:
        assert not kps
        wanted = selector
    for kind in ("ServiceMonitor", "PrometheusRule"):
        (obj,) = objects(plan, kind)
        assert obj["metadata"]["labels"] == wanted, kind


@pytest.mark.parametrize("stack", [s for s in STACKS if "install" in platform_of(s).integrations])
def test_dashboard_is_labelled_for_the_grafana_sidecar(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with(stack, monitoring={"integration": "install"}))
    (cm,) = [c for c in objects(plan, "ConfigMap") if "grafana_dashboard" in c["metadata"].get("labels", {})]
    assert cm["metadata"]["labels"] == {"grafana_dashboard": "1"}
    (release,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "kube-prometheus-stack"]
    assert release.inputs["values"]["grafana"]["enabled"] is True
    import json

    (dash,) = [json.loads(v) for v in cm["data"].values()]
    exprs = " ".join(t["expr"] for p in dash["panels"] for t in p["targets"])
    for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP"):
        assert metric in exprs
    assert 'pod!=""' in exprs  # per-pod use and the idle-allocated list


def test_gke_managed_turns_on_managed_collection(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    assert load_stack_config("gcp-standard")["gpuplane:monitoring"]["integration"] == "gke-managed"
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    plan2 = plan_of(stack_with("gcp-standard", monitoring={"integration": "scrape-config"}))
    (cluster2,) = plan2.by_type("gcp:container/cluster:Cluster")
    assert "monitoringConfig" not in cluster2.inputs


def test_rules_output_is_the_prometheus_rule_spec(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("aws-managed", monitoring={"integration": "prometheus-operator"}))
    (rule,) = objects(plan, "PrometheusRule")
    assert yaml.safe_load(plan.outputs["prometheusRules"])["groups"] == rule["spec"]["groups"]
    # It lives beside the ServiceMonitor, in the namespace the stack's monitoring objects use (without one it
    # would land in the provider's default namespace, which a Prometheus may not watch for rules).
    (monitor,) = objects(plan, "ServiceMonitor")
    assert rule["metadata"]["namespace"] == monitor["metadata"]["namespace"]


def test_gke_managed_is_refused_on_eks() -> None:
    from .conftest import config_problems

    raw = {
        "platform": "eks-managed",
        "cluster": {"name": "ml"},
        "aws": {"region": "us-east-1"},
        "gpuPools": [{"name": "p", "gpu": "l4", "maxNodes": 1}],
        "monitoring": {"integration": "gke-managed"},
    }
    assert config_problems(raw)["gpuplane:monitoring.integration"] == (
        "'gke-managed' is not available on this platform (available: scrape-config, prometheus-operator, install)"
    )
