"""End to end, per integration: one real Prometheus scrapes a fake dcgm-exporter (idle, allocated, MIG and
time-shared GPUs) through the scrape config each integration really runs, and the rules give the same answers.

- scrape-config: the stack's own job.
- prometheus-operator / install: the job prometheus-operator generates from the emitted ServiceMonitor, steps
  as in prometheus-operator pkg/prometheus/promcfg.go (`initRelabelings`, `generateServiceMonitorConfig`).
- gke-managed: the job GMP generates from the emitted PodMonitoring, steps as in prometheus-engine
  pkg/operator/apis/monitoring/v1/pod_config.go (`ScrapeConfigs`, `endpointScrapeConfig`) and common_types.go
  (`relabelingsForSelector`, `buildPrometheusScrapeConfig`: no honor_labels).

Debian's Prometheus has no Kubernetes discovery: file_sd serves the `__meta_kubernetes_*` labels discovery would
give the exporter pod. Each path gets its own `cluster`, and the rules are evaluated per cluster. The fleet
stacks' `scrapeConfig` jobs are loaded into the same Prometheus. One process, bounded waits.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.monitoring.labels import BY_INTEGRATION, LabelModel
from gpuplane.monitoring.monitors import pod_monitoring_manifest, service_monitor_manifest
from gpuplane.monitoring.rules import RuleSettings, rule_groups
from gpuplane.monitoring.scrape import ScrapeTarget, scrape_job
from gpuplane.nvidia import dcgm
from gpuplane.plan import Plan

from . import labelled_gpus as fx
from .conftest import FLEETS, SINGLE, cached_plan
from .engines import checked_prometheus, engine, stop
from .test_oracles import DCGM_EXPORTER_SERVICE_LABELS
from .test_prometheus_e2e import query, serve
from .test_promtool import promtool

INTEGRATIONS = ("scrape-config", "prometheus-operator", "gke-managed")
"""`install` scrapes the same ServiceMonitor as prometheus-operator (kube-prometheus-stack runs the operator)."""
NODE = "gpu-node-1"
TARGET = ScrapeTarget(
    namespace=fx.EXPORTER_NAMESPACE,
    service_labels=DCGM_EXPORTER_SERVICE_LABELS,  # the chart's, written from its templates
    port_name=dcgm.METRICS_PORT_NAME,
    pod_labels={k: DCGM_EXPORTER_SERVICE_LABELS[k] for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance")},
    container_port=dcgm.METRICS_PORT_NAME,
)


def snake(relabel: dict[str, Any]) -> dict[str, Any]:
    """A monitoring.coreos.com RelabelConfig as Prometheus YAML (promcfg.go `generateRelabelConfig`)."""
    names = {"sourceLabels": "source_labels", "targetLabel": "target_label"}
    return {names.get(k, k): (v.lower() if k == "action" else v) for k, v in relabel.items()}


def operator_job(sm: dict[str, Any]) -> dict[str, Any]:
    """prometheus-operator's scrape config for endpoint 0 of ServiceMonitor `sm` (role endpoints)."""
    meta, (ep,) = sm["metadata"], sm["spec"]["endpoints"]
    keep = [
        {
            "action": "keep",
            "source_labels": [
                f"__meta_kubernetes_service_label_{_san(k)}",
                f"__meta_kubernetes_service_labelpresent_{_san(k)}",
            ],
            "regex": f"({v});true",
        }
        for k, v in sorted(sm["spec"]["selector"]["matchLabels"].items())
    ]
    target = ["__meta_kubernetes_endpoint_address_target_kind", "__meta_kubernetes_endpoint_address_target_name"]
    relabels = [
        {"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"},
        *keep,
        {"action": "keep", "source_labels": ["__meta_kubernetes_endpoint_port_name"], "regex": ep["port"]},
        {
            "source_labels": target,
            "separator": ";",
            "regex": "Node;(.*)",
            "replacement": "${1}",
            "target_label": "node",
        },
        {"source_labels": target, "separator": ";", "regex": "Pod;(.*)", "replacement": "${1}", "target_label": "pod"},
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "service"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
        {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"},
        {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job", "replacement": "${1}"},
        {"target_label": "endpoint", "replacement": ep["port"]},
        *(snake(r) for r in ep.get("relabelings", [])),
    ]
    job = {
        "job_name": f"serviceMonitor/{meta['namespace']}/{meta['name']}/0",
        "honor_labels": ep.get("honorLabels", False),
        "scrape_interval": ep["interval"],
        "scrape_timeout": ep["scrapeTimeout"],
        "metrics_path": ep["path"],
        "relabel_configs": relabels,
    }
    if ep.get("metricRelabelings"):
        job["metric_relabel_configs"] = [snake(r) for r in ep["metricRelabelings"]]
    return job


def gmp_job(pm: dict[str, Any], cluster: str, location: str) -> dict[str, Any]:
    """GKE Managed Prometheus' scrape config for endpoint 0 of PodMonitoring `pm` (role pod, port by name)."""
    meta, (ep,) = pm["metadata"], pm["spec"]["endpoints"]
    metadata = pm["spec"].get("targetLabels", {}).get("metadata", [])
    from_meta = {
        "pod": "__meta_kubernetes_pod_name",
        "container": "__meta_kubernetes_pod_container_name",
        "node": "__meta_kubernetes_pod_node_name",
    }
    relabels = [
        {"action": "replace", "target_label": "project_id", "replacement": "proj"},
        {"action": "replace", "target_label": "location", "replacement": location},
        {"action": "replace", "target_label": "cluster", "replacement": cluster},
        {"action": "keep", "source_labels": ["__meta_kubernetes_namespace"], "regex": meta["namespace"]},
        *(
            {"action": "keep", "source_labels": [f"__meta_kubernetes_pod_label_{_san(k)}"], "regex": v}
            for k, v in sorted(pm["spec"]["selector"]["matchLabels"].items())
        ),
        *(
            {"action": "replace", "source_labels": [from_meta[label]], "target_label": label}
            for label in ("pod", "container", "node")
            if label in metadata
        ),
        {"action": "replace", "source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"action": "replace", "replacement": meta["name"], "target_label": "job"},
        {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"},
        {"action": "replace", "source_labels": ["__meta_kubernetes_pod_name"], "target_label": "__tmp_instance"},
        {
            "action": "replace",
            "source_labels": ["__meta_kubernetes_pod_controller_kind", "__meta_kubernetes_pod_node_name"],
            "regex": "DaemonSet;(.*)",
            "target_label": "__tmp_instance",
            "replacement": "$1",
        },
        {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": ep["port"]},
        {
            "action": "replace",
            "source_labels": ["__tmp_instance", "__meta_kubernetes_pod_container_port_name"],
            "regex": "(.+);(.+)",
            "replacement": "$1:$2",
            "target_label": "instance",
        },
    ]
    return {
        "job_name": f"PodMonitoring/{meta['namespace']}/{meta['name']}/{ep['port']}",
        "honor_labels": False,
        "scrape_interval": ep["interval"],
        "scrape_timeout": ep["timeout"],
        "metrics_path": ep["path"],
        "relabel_configs": relabels,
    }


def _san(label: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", label)


def discovered(port: int) -> dict[str, str]:
    """What Kubernetes discovery gives the exporter pod's endpoint (role endpoints) and container port (role pod)."""
    labels = {f"__meta_kubernetes_service_label_{_san(k)}": v for k, v in TARGET.service_labels.items()}
    labels |= {f"__meta_kubernetes_service_labelpresent_{_san(k)}": "true" for k in TARGET.service_labels}
    labels |= {f"__meta_kubernetes_pod_label_{_san(k)}": v for k, v in TARGET.pod_labels.items()}
    return labels | {
        "__meta_kubernetes_namespace": fx.EXPORTER_NAMESPACE,
        "__meta_kubernetes_service_name": dcgm.RELEASE,
        "__meta_kubernetes_endpoint_port_name": TARGET.port_name,
        "__meta_kubernetes_endpoint_address_target_kind": "Pod",
        "__meta_kubernetes_endpoint_address_target_name": fx.EXPORTER_POD,
        "__meta_kubernetes_pod_name": fx.EXPORTER_POD,
        "__meta_kubernetes_pod_container_name": "exporter",
        "__meta_kubernetes_pod_container_port_name": TARGET.container_port,
        "__meta_kubernetes_pod_node_name": NODE,
        "__meta_kubernetes_pod_controller_kind": "DaemonSet",
        "__meta_kubernetes_pod_phase": "Running",
        "__meta_kubernetes_pod_ip": "127.0.0.1",
        "__address__": f"127.0.0.1:{port}",
    }


def cluster_of(integration: str) -> str:
    return f"e2e-{integration}"


def integration_job(integration: str, sd: list[dict[str, Any]]) -> dict[str, Any]:
    cluster = cluster_of(integration)
    target = replace(TARGET, static_labels={"cluster": cluster, "region": fx.REGION})
    if integration == "scrape-config":
        job = scrape_job(target)
        job.pop("kubernetes_sd_configs")
    elif integration == "prometheus-operator":
        job = operator_job(service_monitor_manifest(target, {}, "15s", "10s", BY_INTEGRATION[integration]))
    else:
        job = gmp_job(pod_monitoring_manifest(target, "15s", "10s"), cluster, fx.REGION)
    job["scrape_interval"], job["scrape_timeout"] = "1s", "1s"
    return {**job, "file_sd_configs": sd}


@dataclass
class Server:
    base: str
    workdir: Path


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    engine("prometheus")
    workdir = tmp_path_factory.mktemp("integrations")
    body = fx.exposition(BY_INTEGRATION["scrape-config"])
    exporter, port = serve(body)
    (workdir / "targets.json").write_text(json.dumps([{"targets": [f"127.0.0.1:{port}"], "labels": discovered(port)}]))
    (workdir / "none.json").write_text("[]")
    sd = [{"files": [str(workdir / "targets.json")]}]
    jobs = [integration_job(i, sd) for i in INTEGRATIONS]
    for fleet in FLEETS:  # the fleet outputs load as they are, discovery swapped for an empty file
        for job in yaml.safe_load(cached_plan(fleet).outputs["scrapeConfig"]):
            job.pop("kubernetes_sd_configs")
            jobs.append({**job, "file_sd_configs": [{"files": [str(workdir / "none.json")]}]})
    proc, listen = checked_prometheus(workdir, jobs)
    server = Server(f"http://127.0.0.1:{listen}", workdir)
    try:
        deadline = time.monotonic() + 30
        want = {cluster_of(i) for i in INTEGRATIONS}
        seen: set[str] = set()
        while time.monotonic() < deadline and seen != want:
            time.sleep(0.2)
            try:
                seen = {r["metric"].get("cluster", "") for r in query(server.base, "DCGM_FI_DEV_GPU_UTIL")}
            except OSError:
                continue
        assert seen == want, f"series arrived for {seen}, not {want}"
        yield server
    finally:
        stop(proc)
        exporter.shutdown()


def in_cluster(expr: str, model: LabelModel, cluster: str) -> str:
    """`expr` restricted to one cluster's series: the rules as that cluster's own Prometheus evaluates them."""
    return re.sub(
        r"DCGM_FI_DEV_GPU_UTIL(\{)?",
        lambda m: f'DCGM_FI_DEV_GPU_UTIL{{{model.cluster}="{cluster}"' + ("," if m.group(1) else "}"),
        expr,
    )


def comparable(labels: dict[str, str], model: LabelModel) -> dict[str, str]:
    """Labels without the ones that name the scrape target (instance, the collector's extras)."""
    return {k: v for k, v in labels.items() if k not in {"__name__", "instance", *model.extra} or k == model.region}


def expected(model: LabelModel, labels: dict[str, str], cluster: str) -> dict[str, str]:
    out = comparable({**labels, model.cluster: cluster}, model)
    out.pop("instance", None)
    return {k: (NODE if k == model.node else v) for k, v in out.items()}


@pytest.mark.parametrize("integration", INTEGRATIONS)
def test_stored_labels_and_rule_answers_match_the_label_model(integration: str, prometheus: Server) -> None:
    model, cluster = BY_INTEGRATION[integration], cluster_of(integration)
    got = [
        comparable(r["metric"], model)
        for r in query(prometheus.base, in_cluster("DCGM_FI_DEV_GPU_UTIL", model, cluster))
    ]
    want = [expected(model, fx.stored(model, g), cluster) for g in fx.GPUS]
    key = lambda d: sorted(d.items())  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    free = [r for r in got if r.get("pod") is None]
    assert len(free) == 2 and all(r.get("pod") != fx.EXPORTER_POD for r in got), "a free GPU names no pod"

    groups = {
        r.get("alert") or r.get("record"): r["expr"]
        for g in rule_groups(RuleSettings(labels=model))
        for r in g["rules"]
    }
    idle = query(prometheus.base, in_cluster(groups["GpuAllocatedButIdle"], model, cluster))
    assert sorted(({k: v for k, v in r["metric"].items() if k in ("namespace", "pod")} for r in idle), key=key) == [
        {"namespace": "ml", "pod": "mig-a"},
        {"namespace": "ml", "pod": "notebook-0"},
    ], "GpuAllocatedButIdle fires only for the allocated idle GPUs"

    def answers(record: str, *labels: str) -> dict[tuple[str, ...], float]:
        rows = query(prometheus.base, in_cluster(groups[record], model, cluster))
        assert all(r["metric"][model.cluster] == cluster for r in rows)
        return {tuple(r["metric"][k] for k in labels): float(r["value"][1]) for r in rows}

    count = answers("gpuplane:gpus_allocated:count_by_namespace", "namespace")
    assert count == {(ns,): n for ns, n in fx.COUNT_BY_NAMESPACE.items()}
    assert answers("gpuplane:gpu_utilization:avg_by_namespace", "namespace") == {
        (ns,): n for ns, n in fx.AVG_BY_NAMESPACE.items()
    }
    # One node in this test: every GPU's series has the exporter pod's node.
    assert answers("gpuplane:gpu_utilization:avg_by_node", model.node) == {
        (NODE,): sum(g.util for g in fx.GPUS) / len(fx.GPUS)
    }


@pytest.mark.parametrize("stack", [*SINGLE, *FLEETS])
def test_scrape_config_output_passes_promtool_check_config(
    stack: str, plan_of: Callable[[str], Plan], tmp_path: Path
) -> None:
    """Each stack's and fleet's `scrapeConfig`, discovery swapped for file_sd (Debian's promtool has no
    Kubernetes SD); relabelling and job names as output. A fleet's jobs have distinct names."""
    engine("promtool")
    jobs = yaml.safe_load(plan_of(stack).outputs["scrapeConfig"])
    for job in jobs:
        assert job.pop("kubernetes_sd_configs")
        job["file_sd_configs"] = [{"files": [str(tmp_path / "none.json")]}]
    (tmp_path / "none.json").write_text("[]")
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({"scrape_configs": jobs}, sort_keys=False))
    out = promtool("check", "config", str(tmp_path / "prometheus.yml"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert len({j["job_name"] for j in jobs}) == len(jobs)
