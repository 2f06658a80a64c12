"""GKE node auto-provisioning and Autopilot graphs."""

from __future__ import annotations

import json
from collections.abc import Callable

import yaml

from gpuplane.catalog import GPUS
from gpuplane.plan import Plan

from .conftest import config_problems, load_stack_config, stack_with
from .graph import RELEASE, kube_objects, matches, tolerates


def test_nap_limits_carry_every_configured_gpu_type(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-nap")
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    ca = cluster.inputs["clusterAutoscaling"]
    assert ca["enabled"] is True and ca["autoscalingProfile"] == "OPTIMIZE_UTILIZATION"
    limits = {r["resourceType"]: r["maximum"] for r in ca["resourceLimits"]}
    classes = load_stack_config("gcp-nap")["gpuplane:gpuPools"]
    want: dict[str, int] = {}
    for c in classes:
        acc = GPUS[c["gpu"]].gcp.accelerator  # type: ignore[union-attr]
        want[acc] = want.get(acc, 0) + c["maxNodes"] * c.get("gpusPerNode", 1)
    assert {k: v for k, v in limits.items() if k not in ("cpu", "memory")} == want
    assert limits["cpu"] == 1000 and limits["memory"] == 10000
    d = ca["autoProvisioningDefaults"]
    assert d["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert d["shieldedInstanceConfig"] == {"enableIntegrityMonitoring": True, "enableSecureBoot": True}
    assert d["diskSize"] == 200
    assert ca["autoProvisioningLocations"] == ["us-central1-c"]
    gpu_pools = [
        p for p in plan.by_type("gcp:container/nodePool:NodePool") if p.inputs["nodeConfig"].get("guestAccelerators")
    ]
    assert gpu_pools == [], "NAP creates GPU pools itself"


def test_nap_exporter_selects_auto_provisioned_gpu_nodes(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-nap")
    (release,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter"]
    v = release.inputs["values"]
    # A node NAP creates for each class carries the accelerator label and GKE's GPU (and spot) taints.
    for c in load_stack_config("gcp-nap")["gpuplane:gpuPools"]:
        labels = {"cloud.google.com/gke-accelerator": GPUS[c["gpu"]].gcp.accelerator}  # type: ignore[union-attr]
        assert matches(v["affinity"], labels)
        assert tolerates(v["tolerations"], ("nvidia.com/gpu", "present", "NoSchedule"))
        if c.get("spot"):
            assert tolerates(v["tolerations"], ("cloud.google.com/gke-spot", "true", "NoSchedule"))
    assert not matches(v["affinity"], {"gpuplane.io/role": "system"})


def test_nap_without_gpu_classes_fails() -> None:
    raw = {
        "platform": "gke-nap",
        "cluster": {"name": "nap"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "gpuPools": [],
    }
    assert config_problems(raw)["gpuplane:gpuPools"].startswith("gke-nap needs at least 1 GPU class")


def test_nap_unknown_gpu_fails() -> None:
    raw = {
        "platform": "gke-nap",
        "cluster": {"name": "nap"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "gpuPools": [{"name": "x", "gpu": "mi300x", "maxNodes": 1}],  # not an NVIDIA GPU: not in the catalog
    }
    assert config_problems(raw)["gpuplane:gpuPools[0].gpu"].startswith("unknown GPU 'mi300x'")


def test_auto_provisioning_section_only_on_nap() -> None:
    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "std"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "gpuPools": [{"name": "x", "gpu": "l4", "maxNodes": 1}],
        "autoProvisioning": {"cpuMax": 10},
    }
    assert config_problems(raw) == {"gpuplane:autoProvisioning": "applies to platform gke-nap only, not gke-standard"}


def test_karpenter_with_autopilot_fails() -> None:
    raw = {
        "platform": "gke-autopilot",
        "cluster": {"name": "ap"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "karpenter": {"consolidateAfter": "30s"},
    }
    assert config_problems(raw) == {"gpuplane:karpenter": "applies to platform eks-karpenter only, not gke-autopilot"}


def test_autopilot_has_no_node_pools_and_no_privileged_workloads(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-autopilot")
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["enableAutopilot"] is True
    for standard_only in (
        "removeDefaultNodePool",
        "enableShieldedNodes",
        "nodePools",
        "initialNodeCount",
        "nodeConfig",
    ):
        assert standard_only not in cluster.inputs
    assert not plan.by_type("gcp:container/nodePool:NodePool")
    assert not plan.by_type(RELEASE)
    text = json.dumps([r.inputs for r in kube_objects(plan)])
    assert '"privileged": true' not in text and "hostPath" not in text
    assert cluster.inputs["monitoringConfig"] == {
        "enableComponents": ["SYSTEM_COMPONENTS", "DCGM"],
        "managedPrometheus": {"enabled": True},
    }


def test_autopilot_custom_scraping_targets_gke_device_plugin(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("gcp-autopilot", monitoring={"integration": "scrape-config"}))
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    assert "monitoringConfig" not in cluster.inputs
    (job,) = yaml.safe_load(plan.outputs["scrapeConfig"])
    assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["kube-system"]}}]
    rules = job["relabel_configs"]
    assert {
        "source_labels": ["__meta_kubernetes_pod_label_k8s_app"],
        "action": "keep",
        "regex": "nvidia-gpu-device-plugin",
    } in rules
    assert any(r.get("target_label") == "__address__" and r["replacement"] == "$1:2112" for r in rules)
    assert "duty_cycle" in plan.outputs["prometheusRules"] and "DCGM_" not in plan.outputs["prometheusRules"]
