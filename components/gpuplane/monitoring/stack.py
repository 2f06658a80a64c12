"""`GpuMonitoring`: wire a stack's GPU exporter into Prometheus, per the chosen integration.

- `scrape-config`: nothing in the cluster; the `gpu-metrics` job and rules file are stack outputs.
- `prometheus-operator`: a ServiceMonitor and PrometheusRule labelled for the user's Prometheus,
  and the dashboard ConfigMap for a Grafana sidecar.
- `gke-managed`: a PodMonitoring for GKE Managed Prometheus (the cluster's managed collection is on).
- `install`: kube-prometheus-stack (Prometheus, Alertmanager, Grafana) plus all of the above for it.

ServiceMonitor and PrometheusRule need the prometheus-operator CRDs: with `install` kube-prometheus-stack
brings them; with `prometheus-operator` the `prometheus-operator-crds` chart does, unless the config says
the cluster already has them (`monitoring.prometheusOperatorCrds: existing`). Never both charts: two
installers of the same CRDs conflict in Helm.

No `from __future__ import annotations`: the multi-language package reads `GpuMonitoring`'s annotations.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..args.deferred import Deferred
from ..args.platform import GpuMonitoringArgs
from ..catalog.platforms import GPUPLANE_SYSTEM_POOL, SystemPods
from ..k8s.clusters import adopt_kubernetes_provider, facts, is_cluster
from ..k8s.objects import custom_resource, namespace_manifest, pinned_release, privileged_namespace
from .cost import allowlist
from .dashboard import dashboard_configmap
from .monitors import pod_monitoring_manifest, service_monitor_manifest
from .rules import RuleSettings, prometheus_rule_manifest, rule_groups
from .scrape import ScrapeTarget

KPS_RELEASE = "kube-prometheus-stack"

CRDS_FROM: Mapping[str, str] = MappingProxyType(
    {"prometheus-operator": "prometheus-operator-crds", "install": "kube-prometheus-stack"}
)
"""Integration -> the pinned chart that brings the monitoring.coreos.com CRDs when gpuplane installs them
(kube-prometheus-stack carries them in its `crds` subchart, condition `crds.enabled`)."""
CRDS_RELEASE = "prometheus-operator-crds"
CRDS_NAMESPACE = "kube-system"
"""Where the CRD release's Helm record lives (CRDs are cluster-scoped; kube-system always exists)."""
CRDS_VALUES: Mapping[str, Any] = MappingProxyType({"crds": {"annotations": {"helm.sh/resource-policy": "keep"}}})
"""The chart's CRDs are templates, so uninstalling the release would delete them and every ServiceMonitor
and PrometheusRule in the cluster (its README, "Uninstall Chart"). `keep` makes Helm leave them
(helm.sh docs, "Tell Helm Not To Uninstall a Resource"), so switching the integration away deletes nothing."""


def node_exporter_namespace(install_namespace: str) -> str:
    """node-exporter needs the host's /proc, /sys and network (PSA `privileged`): it gets a namespace of
    its own, so the rest of kube-prometheus-stack runs under `baseline`."""
    return f"{install_namespace}-node-exporter"


def kps_values(
    cluster: str,
    region: str = "",
    install_namespace: str = "monitoring",
    system: SystemPods = GPUPLANE_SYSTEM_POOL,
    crds: bool = True,
    node_labels: tuple[str, ...] = (),
) -> dict[str, Any]:
    """kube-prometheus-stack values: every pod but node-exporter on the platform's system nodes (Prometheus,
    Alertmanager, the operator and its webhook-patch Job, kube-state-metrics and Grafana, whose keys live
    in their subcharts), a `cluster` label, node-exporter in its own privileged namespace. `crds=False`
    when the cluster already has the CRDs. `node_labels`: the node label keys kube-state-metrics exposes in
    `kube_node_labels` (its chart's `metricLabelsAllowlist`; the cost rules select pools by them)."""
    pods = system.values()
    ksm: dict[str, Any] = dict(pods)
    if node_labels:
        ksm["metricLabelsAllowlist"] = [f"nodes=[{','.join(node_labels)}]"]
    values: dict[str, Any] = {
        "grafana": {"enabled": True, **pods},
        "kube-state-metrics": ksm,
        "prometheus-node-exporter": {"namespaceOverride": node_exporter_namespace(install_namespace)},
        "prometheusOperator": {**pods, "admissionWebhooks": {"patch": dict(pods)}},
        "prometheus": {"prometheusSpec": {**pods, "externalLabels": {"cluster": cluster, "region": region}}},
        "alertmanager": {"alertmanagerSpec": dict(pods)},
    }
    if not crds:
        values["crds"] = {"enabled": False}
    return values


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
        service_monitor_manifest(target, labels, interval, timeout, settings.labels),
        prometheus_rule_manifest(target.namespace, labels, rule_groups(settings)),
        dashboard_configmap(target.namespace, settings),
    ]


class MonitoringSpec:
    """What `GpuMonitoring` builds, resolved: from a platform's stack config (`wiring.gpu_monitoring`) or
    from the component's typed args (`standalone.spec_of`)."""

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
        system: SystemPods = GPUPLANE_SYSTEM_POOL,
        prometheus_operator_crds: str = "install",
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
        self.system = system
        """Where the platform runs system pods (kube-prometheus-stack's, `install` only)."""
        self.prometheus_operator_crds = prometheus_operator_crds
        """`install` (gpuplane installs the CRDs its integration needs) or `existing` (the cluster has them)."""


class GpuMonitoring(pulumi.ComponentResource):
    """GPU metrics into Prometheus for an exporter on any cluster, per integration: a scrape job and rules
    file (outputs), ServiceMonitor + PrometheusRule + dashboard ConfigMap, a PodMonitoring for GKE Managed
    Prometheus, or kube-prometheus-stack with all of them. Pass the cluster object (`cluster`) or the
    cluster's Kubernetes provider, and the exporter in `depends_on`."""

    scrape_config: pulumi.Output[str]
    """The `gpu-metrics` Prometheus scrape job, as YAML to paste under `scrape_configs:`."""
    prometheus_rules: pulumi.Output[str]
    """The GPU recording and alerting rules, as a Prometheus rules file."""
    integration: pulumi.Output[str]
    """The integration in use."""
    gpu_cost: pulumi.Output[dict[str, Any]]
    """With `gpu_prices`: each pool's price, the cost series and the kube-state-metrics setting they need."""

    def __init__(self, name: str, args: GpuMonitoringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Monitoring objects `{name}-...` for the exporter `args["exporter"]`; see `GpuMonitoringArgs`. The
        objects wait for the component's `depends_on` (the exporter) and for the CRDs gpuplane installs.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        from .standalone import spec_of

        given = args.get("cluster")
        if is_cluster(given):  # the cluster object: its name and region label the series
            found = facts(given)
            args = {**args, "cluster": found.name, "region": args.get("region") or found.region}
        spec, deferred = spec_of(f"GpuMonitoring {name!r}", args)
        opts = opts or pulumi.ResourceOptions()
        after = [
            d for d in (opts.depends_on if isinstance(opts.depends_on, list) else []) if isinstance(d, pulumi.Resource)
        ]
        super().__init__("gpuplane:monitoring:GpuMonitoring", name, None, deferred.options(opts))
        adopt_kubernetes_provider(self, name, given)
        self._build(name, spec, after, deferred)

    @classmethod
    def from_spec(
        cls, name: str, spec: MonitoringSpec, exporter: pulumi.Resource, opts: pulumi.ResourceOptions | None = None
    ) -> "GpuMonitoring":
        """A platform's monitoring, from its stack config (after `exporter`)."""
        self = cls.__new__(cls)
        pulumi.ComponentResource.__init__(self, "gpuplane:monitoring:GpuMonitoring", name, None, opts)
        self._build(name, spec, [exporter], Deferred())
        return self

    def _build(self, name: str, args: MonitoringSpec, exporter: list[pulumi.Resource], deferred: Deferred) -> None:
        after: list[pulumi.Resource] = list(exporter)
        crds = args.prometheus_operator_crds == "install"
        if crds and CRDS_FROM.get(args.integration) == CRDS_RELEASE:
            after.append(
                pinned_release(
                    f"{name}-{CRDS_RELEASE}",
                    CRDS_RELEASE,
                    CRDS_RELEASE,
                    CRDS_NAMESPACE,
                    CRDS_VALUES,
                    opts=pulumi.ResourceOptions(parent=self),
                    # Adopt CRDs left without a Helm owner (kube-prometheus-stack's, after `install`).
                    take_ownership=True,
                )
            )
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
                    kps_values(
                        args.cluster,
                        args.target.static_labels.get("region", ""),
                        args.install_namespace,
                        args.system,
                        crds,
                        tuple(allowlist(args.settings.cost)) if args.settings.cost else (),
                    ),
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
        from .standalone import outputs_of

        outputs = {k: pulumi.Output.from_input(deferred.resolve(v)) for k, v in outputs_of(args).items()}
        self.scrape_config = outputs["scrape_config"]
        self.prometheus_rules = outputs["prometheus_rules"]
        self.integration = outputs["integration"]
        self.gpu_cost = outputs["gpu_cost"]
        self.register_outputs(dict(outputs))
