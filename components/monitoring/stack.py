"""`GpuMonitoring`: wire a stack's GPU exporter into Prometheus, per the chosen integration.

- `scrape-config`: nothing in the cluster; the `gpu-metrics` job and rules file are stack outputs.
- `prometheus-operator`: a ServiceMonitor and PrometheusRule labelled for the user's Prometheus,
  and the dashboard ConfigMap for a Grafana sidecar.
- `gke-managed`: a PodMonitoring for GKE Managed Prometheus (the cluster's managed collection is on).
- `install`: kube-prometheus-stack (Prometheus, Alertmanager, Grafana) plus all of the above for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..kube import custom_resource, namespace_manifest, pinned_release, privileged_namespace
from .dashboard import dashboard_configmap
from .monitors import pod_monitoring_manifest, service_monitor_manifest
from .rules import RuleSettings, prometheus_rule_manifest, rule_groups
from .scrape import ScrapeTarget

KPS_RELEASE = "kube-prometheus-stack"
SYSTEM_SELECTOR = {"gpuplane.io/role": "system"}


def node_exporter_namespace(install_namespace: str) -> str:
    """node-exporter needs the host's /proc, /sys and network (PSA `privileged`): it gets a namespace of
    its own, so the rest of kube-prometheus-stack runs under `baseline`."""
    return f"{install_namespace}-node-exporter"


def kps_values(cluster: str, region: str = "", install_namespace: str = "monitoring") -> dict[str, Any]:
    """kube-prometheus-stack values: Grafana on, Prometheus, its operator and Alertmanager on the system
    nodes (Grafana's own keys live in its subchart; GPU taints keep it off GPU nodes), a `cluster` label,
    node-exporter in its own privileged namespace."""
    return {
        "grafana": {"enabled": True},
        "prometheus-node-exporter": {"namespaceOverride": node_exporter_namespace(install_namespace)},
        "prometheusOperator": {"nodeSelector": dict(SYSTEM_SELECTOR)},
        "prometheus": {
            "prometheusSpec": {
                "nodeSelector": dict(SYSTEM_SELECTOR),
                "externalLabels": {"cluster": cluster, "region": region},
            }
        },
        "alertmanager": {"alertmanagerSpec": {"nodeSelector": dict(SYSTEM_SELECTOR)}},
    }


def monitor_labels(integration: str, selector_labels: Mapping[str, str]) -> dict[str, str]:
    """Labels the Prometheus in use selects monitors and rules by (kube-prometheus-stack: `release`)."""
    return {"release": KPS_RELEASE} if integration == "install" else dict(selector_labels)


def cluster_objects(
    integration: str,
    target: ScrapeTarget,
    settings: RuleSettings,
    selector_labels: Mapping[str, str],
    interval: str,
    timeout: str,
) -> list[dict[str, Any]]:
    """The monitoring objects to apply in the cluster for an integration (pure; tests validate each)."""
    if integration == "scrape-config":
        return []
    if integration == "gke-managed":
        return [pod_monitoring_manifest(target, interval, timeout)]
    labels = monitor_labels(integration, selector_labels)
    return [
        service_monitor_manifest(target, labels, interval, timeout),
        prometheus_rule_manifest(target.namespace, labels, rule_groups(settings)),
        dashboard_configmap(target.namespace, settings),
    ]


class GpuMonitoringArgs:
    """Inputs of `GpuMonitoring`."""

    def __init__(
        self,
        cluster: str,
        integration: str,
        target: ScrapeTarget,
        settings: RuleSettings,
        selector_labels: Mapping[str, str],
        interval: str,
        timeout: str,
        install_namespace: str = "monitoring",
    ) -> None:
        self.cluster = cluster
        """Cluster name (Prometheus external label `cluster` when installed)."""
        self.integration = integration
        """`scrape-config`, `prometheus-operator`, `gke-managed` or `install`."""
        self.target = target
        """The exporter to scrape."""
        self.settings = settings
        """Rule thresholds and label names."""
        self.selector_labels = dict(selector_labels)
        """Labels the user's Prometheus selects ServiceMonitors and PrometheusRules by."""
        self.interval = interval
        self.timeout = timeout
        self.install_namespace = install_namespace
        """Namespace of kube-prometheus-stack (`install` only)."""


class GpuMonitoring(pulumi.ComponentResource):
    """The integration's objects, created after the exporter (and after the CRDs when installing)."""

    def __init__(
        self,
        name: str,
        args: GpuMonitoringArgs,
        exporter: pulumi.Resource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpuplane:monitoring:GpuMonitoring", name, None, opts)
        after: list[pulumi.Resource] = [exporter]
        if args.integration == "install":
            namespaces = [
                k8s.core.v1.Namespace(
                    f"{name}-{role}", metadata=obj["metadata"], opts=pulumi.ResourceOptions(parent=self)
                )
                for role, obj in (
                    ("namespace", namespace_manifest(args.install_namespace, "baseline")),
                    ("node-exporter-namespace", privileged_namespace(node_exporter_namespace(args.install_namespace))),
                )
            ]
            after.append(
                pinned_release(
                    f"{name}-kube-prometheus-stack",
                    "kube-prometheus-stack",
                    KPS_RELEASE,
                    args.install_namespace,
                    kps_values(args.cluster, args.target.static_labels.get("region", ""), args.install_namespace),
                    opts=pulumi.ResourceOptions(parent=self, depends_on=namespaces),
                    timeout=900,
                )
            )
        objs = cluster_objects(
            args.integration, args.target, args.settings, args.selector_labels, args.interval, args.timeout
        )
        for obj in objs:
            role = obj["kind"].lower()
            opts_ = pulumi.ResourceOptions(parent=self, depends_on=after)
            if obj["kind"] == "ConfigMap":
                k8s.core.v1.ConfigMap(f"{name}-{role}", metadata=obj["metadata"], data=obj["data"], opts=opts_)
            else:
                custom_resource(f"{name}-{role}", obj, opts_)
        self.register_outputs({})
