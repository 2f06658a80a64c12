"""The gcp-standard graph: names and parents, pools -> accelerator -> taint -> exporter toleration chain."""

from __future__ import annotations

from collections.abc import Callable

import yaml

from gpuplane.catalog import lookup
from gpuplane.plan import Plan

from .conftest import ROOT, stack_with
from .graph import RELEASE, children, gpu_node_pools, kube_objects, matches, node_taints, tolerates


def test_every_resource_is_named_after_its_component(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    root = plan.resources[0]
    assert root.type == "pulumi:pulumi:Stack" and root.parent is None
    for r in plan.resources[1:]:
        assert r.parent is not None, f"{r.urn} has no parent"
        parent = plan.get(r.parent)
        if parent.type != "pulumi:pulumi:Stack":
            assert r.name == parent.name or r.name.startswith(parent.name + "-"), (
                f"{r.urn} not named after {parent.name}"
            )


def test_cloud_and_kubernetes_resources_use_explicit_providers(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    gcp_provider = [r for r in plan.resources if r.type == "pulumi:providers:gcp"]
    k8s_provider = [r for r in plan.resources if r.type == "pulumi:providers:kubernetes"]
    assert len(gcp_provider) == 1 and len(k8s_provider) == 1
    for r in plan.resources:
        if r.custom and r.type.startswith("gcp:"):
            assert r.provider and r.provider.startswith(gcp_provider[0].urn + "::"), r.urn
        if r.custom and r.type.startswith("kubernetes:"):
            assert r.provider and r.provider.startswith(k8s_provider[0].urn + "::"), r.urn


def test_cluster_settings(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    i = cluster.inputs
    assert i["removeDefaultNodePool"] is True
    assert i["releaseChannel"] == {"channel": "REGULAR"}
    assert i["workloadIdentityConfig"] == {"workloadPool": "acme-ml-prod.svc.id.goog"}
    assert i["enableShieldedNodes"] is True and i["deletionProtection"] is True
    system = [p for p in plan.by_type("gcp:container/nodePool:NodePool") if p.inputs["name"] == "system"]
    assert len(system) == 1 and "guestAccelerators" not in system[0].inputs["nodeConfig"]


def test_each_configured_pool_becomes_a_tainted_gpu_node_pool(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.gcp-standard.yaml").read_text())["config"]
    pools = {p["name"]: p for p in config["gpuplane:gpuPools"]}
    planned = {r.inputs["name"]: r for r in gpu_node_pools(plan)}
    assert set(planned) == set(pools)
    for name, want in pools.items():
        nc = planned[name].inputs["nodeConfig"]
        gpu = lookup(want["gpu"])
        assert gpu is not None and gpu.gcp is not None
        (acc,) = nc["guestAccelerators"]
        assert acc["type"] == gpu.gcp.accelerator and acc["count"] == want["gpusPerNode"]
        assert gpu.gcp.machines.get(nc["machineType"]) == want["gpusPerNode"]
        assert acc["gpuDriverInstallationConfig"]["gpuDriverVersion"] == want.get("driverVersion", "DEFAULT")
        assert ("nvidia.com/gpu", "present", "NoSchedule") in node_taints(planned[name])
        assert (("cloud.google.com/gke-spot", "true", "NoSchedule") in node_taints(planned[name])) == want["spot"]
        assert nc["spot"] is want["spot"]
        assert nc["shieldedInstanceConfig"] == {"enableIntegrityMonitoring": True, "enableSecureBoot": True}
        assert nc["labels"]["gpuplane.io/pool"] == name and nc["labels"]["gpuplane.io/gpu"] == gpu.name
        assert planned[name].inputs["autoscaling"]["totalMinNodeCount"] == want["minNodes"]
        assert planned[name].inputs["autoscaling"]["totalMaxNodeCount"] == want["maxNodes"]
        assert planned[name].inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
        assert nc["diskSizeGb"] == want["diskSizeGb"]


def test_exporter_selects_and_tolerates_exactly_the_gpu_pools(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (release,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter"]
    values = release.inputs["values"]
    pools = plan.by_type("gcp:container/nodePool:NodePool")
    assert pools
    for pool in pools:
        labels = pool.inputs["nodeConfig"]["labels"]
        is_gpu = bool(pool.inputs["nodeConfig"].get("guestAccelerators"))
        assert matches(values["affinity"], labels) == is_gpu, pool.urn
        if is_gpu:
            for taint in node_taints(pool):
                assert tolerates(values["tolerations"], taint), f"exporter does not tolerate {taint} of {pool.urn}"


def test_exporter_reads_gke_host_driver(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (release,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter"]
    v = release.inputs["values"]
    host = {vol["name"]: vol["hostPath"] for vol in v["extraHostVolumes"]}
    mounts = {m["mountPath"]: m["name"] for m in v["extraVolumeMounts"]}
    assert host[mounts["/usr/local/nvidia"]] == "/home/kubernetes/bin/nvidia"
    env = {e["name"]: e["value"] for e in v["extraEnv"]}
    assert env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"
    assert v["securityContext"]["privileged"] is True and v["securityContext"]["allowPrivilegeEscalation"] is True
    assert v["serviceMonitor"] == {"enabled": False}
    assert release.inputs["version"] == "4.8.2"
    assert release.inputs["repositoryOpts"]["repo"] == "https://nvidia.github.io/dcgm-exporter/helm-charts"


def test_priority_class_quota_covers_exporter_namespace(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (release,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter"]
    quotas = [r for r in kube_objects(plan) if r.inputs["kind"] == "ResourceQuota"]
    assert len(quotas) == 1
    q = quotas[0].inputs
    assert q["metadata"]["namespace"] == release.inputs["namespace"]
    (expr,) = q["spec"]["scopeSelector"]["matchExpressions"]
    assert expr["scopeName"] == "PriorityClass" and release.inputs["values"]["priorityClassName"] in expr["values"]
    gpu_nodes = sum(p.inputs["autoscaling"]["totalMaxNodeCount"] for p in gpu_node_pools(plan))
    assert int(q["spec"]["hard"]["pods"]) >= gpu_nodes


def test_scrape_config_targets_the_exporter_service(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (release,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter"]
    (job,) = yaml.safe_load(plan.outputs["scrapeConfig"])
    assert job["job_name"] == "gpu-metrics"
    (sd,) = job["kubernetes_sd_configs"]
    assert sd["role"] == "endpoints" and sd["namespaces"]["names"] == [release.inputs["namespace"]]
    keeps = {r["source_labels"][0]: r["regex"] for r in job["relabel_configs"] if r["action"] == "keep"}
    # Labels the chart's selectorLabels template gives the Service for this release (name/instance/component).
    chart, name = release.inputs["chart"], release.inputs["name"]
    assert keeps == {
        "__meta_kubernetes_service_label_app_kubernetes_io_name": chart,
        "__meta_kubernetes_service_label_app_kubernetes_io_instance": name,
        "__meta_kubernetes_service_label_app_kubernetes_io_component": chart,
        "__meta_kubernetes_endpoint_port_name": "metrics",
    }
    node = [r for r in job["relabel_configs"] if r.get("target_label") == "kubernetes_node"]
    assert node == [
        {"source_labels": ["__meta_kubernetes_pod_node_name"], "action": "replace", "target_label": "kubernetes_node"}
    ]


def test_outputs_hide_the_kubeconfig(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    assert plan.outputs["kubeconfig"] == "[secret]"
    assert plan.outputs["gpuNodePools"] == ["inference", "training"]
    (provider,) = [r for r in plan.resources if r.type == "pulumi:providers:kubernetes"]
    assert provider.inputs["kubeconfig"] == "[secret]"


def test_pool_config_changes_reach_the_graph(plan_of: Callable[..., Plan]) -> None:
    pools = [
        {
            "name": "t4s",
            "gpu": "t4",
            "gpusPerNode": 2,
            "machineType": "n1-standard-16",
            "maxNodes": 3,
            "minNodes": 1,
            "taints": [{"key": "team", "value": "ml", "effect": "NoExecute"}],
            "labels": {"team": "ml"},
        },
    ]
    plan = plan_of(stack_with("gcp-standard", gpuPools=pools))
    (pool,) = gpu_node_pools(plan)
    assert pool.inputs["nodeConfig"]["machineType"] == "n1-standard-16"
    assert pool.inputs["nodeConfig"]["guestAccelerators"][0] == {
        "count": 2,
        "type": "nvidia-tesla-t4",
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
    }
    assert node_taints(pool) == {("nvidia.com/gpu", "present", "NoSchedule"), ("team", "ml", "NoExecute")}
    (release,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter"]
    assert tolerates(release.inputs["values"]["tolerations"], ("team", "ml", "NoExecute"))
    assert matches(release.inputs["values"]["affinity"], pool.inputs["nodeConfig"]["labels"])


def test_component_children(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (cluster,) = plan.by_type("gpuplane:gcp:GkeGpuCluster")
    kinds = sorted(r.type for r in children(plan, cluster))
    assert kinds.count("gcp:container/nodePool:NodePool") == 3
    assert "pulumi:providers:kubernetes" in kinds and "gcp:container/cluster:Cluster" in kinds
