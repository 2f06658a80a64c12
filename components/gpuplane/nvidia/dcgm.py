"""Standalone dcgm-exporter (the metrics column of the seed's matrix on GKE Standard).

`dcgm_values` renders the chart's values from data; every key it sets exists in the pinned chart's
`values.yaml` (tests check this against the published file when it is available). The `DcgmExporter`
component creates the namespace, the priority-class quota GKE needs, and the Helm release.

No `from __future__ import annotations`: the multi-language package reads the args' annotations.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NotRequired, TypedDict, cast

import pulumi
import pulumi_kubernetes as k8s

from ..args.checks import lift, plain
from ..args.inputs import ExporterHost, GpuNodes
from ..k8s.clusters import adopt_kubernetes_provider, check_component_args
from ..k8s.objects import pinned_release, privileged_namespace
from ..pins import CHARTS
from ..scheduling.nodes import POOL_LABEL, NodeSelection, agent_tolerations, label_affinity, targets_of

RELEASE = "dcgm-exporter"
"""Helm release name (fixed, so the Service name and labels are known before deploy)."""
DAEMONSET = RELEASE
"""The chart's DaemonSet is named by its `dcgm-exporter.fullname` helper: the release name when it contains the
chart name (NVIDIA/dcgm-exporter deployment/templates/_helpers.tpl)."""
PRIORITY_CLASS = "system-node-critical"
"""The chart's default priority class, kept so the exporter is not evicted before workloads."""
METRICS_PORT = 9400
METRICS_PORT_NAME = "metrics"
"""Service and container port name the chart's templates give the exporter."""


@dataclass(frozen=True)
class HostDriver:
    """Where a platform's preinstalled NVIDIA driver lives on the node, and what the exporter needs to use it."""

    host_path: str | None
    """Host directory holding the driver libraries (mounted at `mount_path`); None when the node's
    container runtime injects them (NVIDIA runtime with `NVIDIA_VISIBLE_DEVICES`)."""
    mount_path: str
    env: Mapping[str, str]
    privileged: bool
    priority_quota: bool
    """The platform admits `system-node-critical` pods outside kube-system only under a ResourceQuota (GKE)."""


HOST_DRIVERS: Mapping[str, HostDriver] = MappingProxyType(
    {
        # Google's own DCGM manifest for GKE Standard (prometheus-engine examples/nvidia-dcgm).
        "gke": HostDriver(
            host_path="/home/kubernetes/bin/nvidia",
            mount_path="/usr/local/nvidia",
            env=MappingProxyType(
                {
                    "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64",
                    "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE": "device-name",
                }
            ),
            privileged=True,
            priority_quota=True,
        ),
        # EKS Auto Mode (Bottlerocket NVIDIA): the NVIDIA container runtime injects the driver.
        "eks-automode": HostDriver(
            host_path=None,
            mount_path="",
            env=MappingProxyType({"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}),
            privileged=True,
            priority_quota=False,
        ),
    }
)
"""Node family -> host driver facts for a standalone exporter."""


def service_labels(release: str = RELEASE) -> dict[str, str]:
    """Labels the chart's templates put on the exporter Service and pods (its selectorLabels helper)."""
    name = CHARTS["dcgm-exporter"].chart
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": release, "app.kubernetes.io/component": name}


def pod_labels(release: str = RELEASE) -> dict[str, str]:
    """The exporter pods' labels a monitor can rely on: the chart's name and instance selector labels."""
    labels = service_labels(release)
    return {k: labels[k] for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance")}


def dcgm_values(host: str, selection: NodeSelection, service_monitor: bool = False) -> dict[str, Any]:
    """Helm values for the dcgm-exporter chart on `host` nodes, scheduled on exactly the selected GPU nodes."""
    driver = HOST_DRIVERS[host]
    volume = "nvidia-install-dir-host"
    values: dict[str, Any] = {
        "priorityClassName": PRIORITY_CLASS,
        # Helm merges this into the chart's default securityContext, whose allowPrivilegeEscalation=false
        # the API server rejects next to privileged=true.
        "securityContext": {"privileged": driver.privileged, "allowPrivilegeEscalation": driver.privileged},
        "affinity": selection.affinity,
        "tolerations": selection.tolerations,
        "extraEnv": [{"name": k, "value": v} for k, v in driver.env.items()],
        "service": {"port": METRICS_PORT},
        "serviceMonitor": {"enabled": service_monitor},
    }
    if driver.host_path:
        values["extraHostVolumes"] = [{"name": volume, "hostPath": driver.host_path}]
        values["extraVolumeMounts"] = [
            # The chart's default mount of its counters ConfigMap; listing mounts replaces the default list.
            {
                "name": "exporter-metrics-volume",
                "mountPath": "/etc/dcgm-exporter/default-counters.csv",
                "subPath": "default-counters.csv",
            },
            {"name": volume, "mountPath": driver.mount_path, "readOnly": True},
        ]
    return values


def quota_manifest(namespace: str, pods: int) -> dict[str, Any]:
    """ResourceQuota that lets `system-node-critical` pods run outside kube-system on GKE."""
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "gpu-critical-pods", "namespace": namespace},
        "spec": {
            "hard": {"pods": str(pods)},
            "scopeSelector": {
                "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": [PRIORITY_CLASS]}]
            },
        },
    }


def critical_pods_quota(
    resource_name: str, metadata: Mapping[str, Any], spec: Any, opts: pulumi.ResourceOptions
) -> k8s.core.v1.ResourceQuota:
    """The `quota_manifest` ResourceQuota (its spec may be an Output that follows the pools)."""
    return k8s.core.v1.ResourceQuota(resource_name, metadata=cast(Any, dict(metadata)), spec=spec, opts=opts)


def reachable_nodes(nodes: object) -> int:
    """Most GPU nodes the given pools reach (their `nodes`), when they are plain values; else 0."""
    if not isinstance(nodes, list | tuple):
        return 0
    return sum(int(n.get("nodes", 0)) for n in nodes if isinstance(n, dict) and isinstance(n.get("nodes", 0), int))


def quota_pods(max_gpu_nodes: int) -> int:
    """Room for one exporter pod per GPU node, doubled for rolling updates, never below 100."""
    return max(100, 2 * max_gpu_nodes)


HOST_CLOUDS: Mapping[str, str] = MappingProxyType({"gke": "gcp", "eks-automode": "aws"})
"""Exporter host -> the cloud whose platform taints GPU nodes carry (`nodes.platform_taints`)."""


class DcgmExporterArgs(TypedDict):
    """Arguments of `DcgmExporter`."""

    host: ExporterHost
    """Where the nodes' preinstalled NVIDIA driver lives (GKE Standard or EKS Auto Mode / Bottlerocket)."""
    gpu_nodes: NotRequired[pulumi.Input[Sequence[GpuNodes]]]
    """The GPU pools to run on (a pool component's `gpu_nodes`, or your own): the exporter tolerates
    their taints (and the platform's GPU and spot taints)."""
    node_label: NotRequired[str]
    """Run on every node carrying this label key; default `gpuplane.io/pool` (gpuplane's GPU pools). For
    auto-provisioned GKE nodes: `cloud.google.com/gke-accelerator`."""
    max_gpu_nodes: NotRequired[int]
    """Most GPU nodes the pools can reach; sizes GKE's priority-class quota (at least 100 pods). Unset: the
    sum of the `gpu_nodes` entries' `nodes`."""
    namespace: NotRequired[str]
    """Namespace for the exporter (created here); default `gpu-monitoring`."""
    service_monitor: NotRequired[bool]
    """Create the chart's ServiceMonitor (needs the prometheus-operator CRDs). Off by default."""
    cluster: NotRequired[Any]
    """Your cluster object (`pulumi_eks.Cluster`, `aws.eks.Cluster` or `gcp.container.Cluster`): the
    Kubernetes resources go to it through a provider made here (`{name}-k8s`), unless `opts` give one."""


def selection(host: str, nodes: Sequence[GpuNodes], node_label: str = POOL_LABEL) -> NodeSelection:
    """Nodes carrying `node_label`, tolerating the platform's GPU taints and every pool's own."""
    tolerations = agent_tolerations(HOST_CLOUDS[host], targets_of(nodes))
    return NodeSelection(affinity=label_affinity(node_label), tolerations=tolerations)


class DcgmExporter(pulumi.ComponentResource):
    """dcgm-exporter from its official chart, on the GPU pools only, reading the node's driver."""

    namespace: pulumi.Output[str]
    """The exporter's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name (`dcgm-exporter`)."""
    service_name: pulumi.Output[str]
    """The exporter's Service (port `metrics`, 9400), what Prometheus scrapes."""

    def __init__(self, name: str, args: DcgmExporterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """dcgm-exporter release `dcgm-exporter` in `args["namespace"]`; see `DcgmExporterArgs`.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        host = str(plain(args.get("host")))
        check_component_args(f"DcgmExporter {name!r}", args, DcgmExporterArgs, ("host", host, HOST_DRIVERS))
        namespace = args.get("namespace") or "gpu-monitoring"
        label = args.get("node_label") or POOL_LABEL
        super().__init__("gpuplane:nvidia:DcgmExporter", name, None, opts)
        adopt_kubernetes_provider(self, name, args.get("cluster"))
        child = pulumi.ResourceOptions(parent=self)
        ns_obj = privileged_namespace(namespace)
        ns = k8s.core.v1.Namespace(f"{name}-namespace", metadata=ns_obj["metadata"], opts=child)
        after_ns = pulumi.ResourceOptions(parent=self, depends_on=[ns])
        given = args.get("max_gpu_nodes")
        quota = quota_manifest(namespace, quota_pods(given or 0))
        # With `gpu_nodes` an Output (always so through the multi-language package) the pods follow once known.
        spec = (
            quota["spec"]
            if given
            else lift(
                args.get("gpu_nodes") or [], lambda n: quota_manifest(namespace, quota_pods(reachable_nodes(n)))["spec"]
            )
        )
        needs: list[pulumi.Resource] = [ns]
        if HOST_DRIVERS[host].priority_quota:
            needs.append(critical_pods_quota(f"{name}-quota", quota["metadata"], spec, after_ns))
        release = pinned_release(
            f"{name}-release",
            "dcgm-exporter",
            RELEASE,
            namespace,
            lift(
                args.get("gpu_nodes") or [],
                lambda nodes: dcgm_values(host, selection(host, nodes, label), bool(args.get("service_monitor"))),
            ),
            # Pods of the priority class are refused until the quota exists.
            opts=pulumi.ResourceOptions(parent=self, depends_on=needs),
        )
        self.namespace = ns.metadata.name
        self.release_name = release.name.apply(lambda n: n or RELEASE)
        self.service_name = pulumi.Output.from_input(RELEASE)
        self.register_outputs(
            {"namespace": self.namespace, "release_name": self.release_name, "service_name": self.service_name}
        )
