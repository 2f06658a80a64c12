"""Monitor objects for Prometheus Operator (ServiceMonitor) and GKE Managed Prometheus (PodMonitoring).

Both select the exporter the stack creates, by the labels and port names in its `ScrapeTarget`, and
give the series the same `job` and node label as the plain scrape config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .labels import PROMETHEUS_OPERATOR, LabelModel
from .scrape import JOB_NAME, ScrapeTarget


def service_monitor_manifest(
    target: ScrapeTarget,
    labels: Mapping[str, str],
    interval: str,
    timeout: str,
    model: LabelModel = PROMETHEUS_OPERATOR,
) -> dict[str, Any]:
    """A ServiceMonitor (monitoring.coreos.com/v1) for the exporter Service, labelled for the user's Prometheus.

    Scrape settings come from the label model: the operator adds `namespace`/`pod`/`container` target labels
    for the exporter pod, and the endpoint's relabelings run after them (prometheus-operator
    pkg/prometheus/promcfg.go `generateServiceMonitorConfig`). Dropping them there, with `honorLabels`, leaves
    dcgm-exporter's own workload labels, which it sets only on GPUs a pod holds: an idle GPU has no `pod`.
    """
    drop = [{"action": "labeldrop", "regex": "|".join(model.drop_target_labels)}] if model.drop_target_labels else []
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": JOB_NAME, "namespace": target.namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(target.service_labels)},
            "namespaceSelector": {"matchNames": [target.namespace]},
            "endpoints": [
                {
                    "port": target.port_name,
                    "path": "/metrics",
                    "interval": interval,
                    "scrapeTimeout": timeout,
                    "honorLabels": bool(model.honor_labels),
                    "relabelings": [
                        *drop,
                        {
                            "sourceLabels": ["__meta_kubernetes_pod_node_name"],
                            "targetLabel": "kubernetes_node",
                            "action": "replace",
                        },
                        {"targetLabel": "job", "replacement": JOB_NAME, "action": "replace"},
                        *(
                            {"targetLabel": k, "replacement": v, "action": "replace"}
                            for k, v in sorted(target.static_labels.items())
                        ),
                    ],
                }
            ],
        },
    }


def pod_monitoring_manifest(target: ScrapeTarget, interval: str, timeout: str) -> dict[str, Any]:
    """A PodMonitoring (monitoring.googleapis.com/v1) for the exporter pods, as Google's DCGM example.

    Only the `node` metadata label is added: dcgm-exporter's own `pod`/`container` labels name the
    workload using the GPU and must not be overwritten. GMP always sets `namespace` to this object's namespace
    and scrapes without honor_labels, so the workload's namespace is stored as `exported_namespace`; the rules
    read it from there (`labels.GKE_MANAGED`; prometheus-engine pkg/operator/apis/monitoring/v1/pod_config.go).
    """
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": {
            "name": JOB_NAME,
            "namespace": target.namespace,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
        },
        "spec": {
            "selector": {"matchLabels": dict(target.pod_labels)},
            "endpoints": [
                {"port": target.container_port, "path": "/metrics", "interval": interval, "timeout": timeout}
            ],
            "targetLabels": {"metadata": ["node"]},
        },
    }
