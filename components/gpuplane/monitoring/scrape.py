"""The seed's `gpu-metrics` Prometheus scrape job, for a Prometheus the user already runs.

Endpoints discovery limited to the exporter's namespace, a keep rule on the exporter Service's
labels and port name (so only the GPU exporter is scraped), and the seed's node relabel.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..text import yamltext

JOB_NAME = "gpu-metrics"


@dataclass(frozen=True)
class ScrapeTarget:
    """Where a stack's GPU exporter is: namespace, its Service's labels and port name, and its pods'
    labels and container port name (what the exporter's chart templates create, as data)."""

    namespace: str
    service_labels: Mapping[str, str]
    port_name: str
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    container_port: str = "metrics"
    role: str = "endpoints"
    """Kubernetes discovery role: `endpoints` (a Service we know) or `pod` (a platform DaemonSet)."""
    pod_port: int | None = None
    """With role `pod`: the port the metrics listen on (the pods need not declare it)."""
    static_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels put on every series (`cluster`, `region`), so one Prometheus can tell clusters apart."""
    daemonset: str = ""
    """Name of the exporter's DaemonSet (its pods' `created_by_name` in kube-state-metrics), when gpuplane knows it."""


def static_relabels(target: ScrapeTarget) -> list[dict[str, Any]]:
    """Relabel rules that set the target's static labels."""
    return [{"target_label": k, "replacement": v, "action": "replace"} for k, v in sorted(target.static_labels.items())]


def sd_label(label: str, kind: str = "service") -> str:
    """Prometheus' meta-label name for a Kubernetes Service (or pod) label (non-alphanumerics become `_`)."""
    return f"__meta_kubernetes_{kind}_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", label)


def _literal(value: str) -> str:
    """A regex (RE2, anchored by Prometheus) matching exactly `value`."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", value)


def scrape_job(target: ScrapeTarget, interval: str = "15s", timeout: str = "10s") -> dict[str, Any]:
    """One Prometheus `scrape_configs` entry scraping exactly the GPU exporter's endpoints (or pods)."""
    if target.role == "pod":
        return _pod_job(target, interval, timeout)
    keep = [
        {"source_labels": [sd_label(k)], "action": "keep", "regex": _literal(v)}
        for k, v in sorted(target.service_labels.items())
    ]
    relabels = [
        *keep,
        {"source_labels": ["__meta_kubernetes_endpoint_port_name"], "action": "keep", "regex": target.port_name},
        dict(NODE_RELABEL),
        *static_relabels(target),
    ]
    return _job("endpoints", target, interval, timeout, relabels)


NODE_RELABEL = {
    "source_labels": ["__meta_kubernetes_pod_node_name"],
    "action": "replace",
    "target_label": "kubernetes_node",
}


def _pod_job(target: ScrapeTarget, interval: str, timeout: str) -> dict[str, Any]:
    """Pods of a platform DaemonSet (e.g. GKE's nvidia-gpu-device-plugin), at a fixed metrics port."""
    keep = [
        {"source_labels": [sd_label(k, "pod")], "action": "keep", "regex": _literal(v)}
        for k, v in sorted(target.pod_labels.items())
    ]
    address = [
        {
            "source_labels": ["__meta_kubernetes_pod_ip"],
            "action": "replace",
            "regex": "(.+)",
            "replacement": f"$1:{target.pod_port}",
            "target_label": "__address__",
        }
    ]
    relabels = [*keep, *(address if target.pod_port else []), dict(NODE_RELABEL), *static_relabels(target)]
    return _job("pod", target, interval, timeout, relabels)


def _job(
    role: str, target: ScrapeTarget, interval: str, timeout: str, relabels: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "job_name": JOB_NAME,
        "scrape_interval": interval,
        "scrape_timeout": timeout,
        "metrics_path": "/metrics",
        "scheme": "http",
        "kubernetes_sd_configs": [{"role": role, "namespaces": {"names": [target.namespace]}}],
        "relabel_configs": relabels,
    }


def scrape_yaml(job: Mapping[str, Any]) -> str:
    """The job as YAML, ready to paste under `scrape_configs:`."""
    return yamltext.dump([dict(job)], sort_keys=False, default_flow_style=False)


def stack_scrape_yaml(target: ScrapeTarget, interval: str, timeout: str) -> str:
    """The stack's `gpu-metrics` job as YAML (the `scrapeConfig` stack output)."""
    return scrape_yaml(scrape_job(target, interval, timeout))


def fleet_scrape_yaml(jobs: Mapping[str, str]) -> str:
    """Cluster name -> that cluster's `scrapeConfig` YAML, joined into one `scrape_configs` list.

    Prometheus refuses two scrape configs with one job name (config.go: "found multiple scrape configs with job
    name"), so each job is named `gpu-metrics-<cluster>`; a relabel keeps the series' `job` label `gpu-metrics`
    (the rules select on it) and every series carries its `cluster` and `region`. Each job discovers with the
    Prometheus' own in-cluster credentials: paste it into that cluster's Prometheus (docs/metrics.md, "Fleets").
    """
    out: list[dict[str, Any]] = []
    for cluster, text in jobs.items():
        for job in yamltext.load(text):
            job["job_name"] = f"{JOB_NAME}-{cluster}"
            job["relabel_configs"] = [
                *job["relabel_configs"],
                {"target_label": "job", "replacement": JOB_NAME, "action": "replace"},
            ]
            out.append(job)
    return yamltext.dump(out, sort_keys=False, default_flow_style=False)
