"""Standalone dcgm-exporter (the metrics column of the seed's matrix on GKE Standard).

`dcgm_values` renders the chart's values from data; every key it sets exists in the pinned chart's
`values.yaml` (tests check this against the published file when it is available). The `DcgmExporter`
component creates the namespace, the priority-class quota GKE needs, and the Helm release.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..kube import pinned_release, privileged_namespace
from ..nodes import NodeSelection
from ..pins import CHARTS

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


def quota_pods(max_gpu_nodes: int) -> int:
    """Room for one exporter pod per GPU node, doubled for rolling updates, never below 100."""
    return max(100, 2 * max_gpu_nodes)


class DcgmExporterArgs:
    """Inputs of `DcgmExporter`."""

    def __init__(
        self,
        host: str,
        selection: NodeSelection,
        max_gpu_nodes: int,
        namespace: str = "gpu-monitoring",
        service_monitor: bool = False,
    ) -> None:
        self.host = host
        """Key of `HOST_DRIVERS`: where the node's driver lives."""
        self.selection = selection
        """The GPU nodes to run on: the exporter selects and tolerates exactly these."""
        self.max_gpu_nodes = max_gpu_nodes
        """Most GPU nodes the pools can reach; sizes the priority-class quota."""
        self.namespace = namespace
        """Namespace for the exporter (created here)."""
        self.service_monitor = service_monitor
        """Create the chart's ServiceMonitor (needs the prometheus-operator CRDs). Off by default."""


class DcgmExporter(pulumi.ComponentResource):
    """dcgm-exporter from its official chart, on the GPU pools only, reading the node's driver."""

    namespace: pulumi.Output[str]
    release_name: pulumi.Output[str]
    service_name: pulumi.Output[str]

    def __init__(self, name: str, args: DcgmExporterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:nvidia:DcgmExporter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        ns_obj = privileged_namespace(args.namespace)
        ns = k8s.core.v1.Namespace(f"{name}-namespace", metadata=ns_obj["metadata"], opts=child)
        after_ns = pulumi.ResourceOptions(parent=self, depends_on=[ns])
        quota = quota_manifest(args.namespace, quota_pods(args.max_gpu_nodes))
        needs: list[pulumi.Resource] = [ns]
        if HOST_DRIVERS[args.host].priority_quota:
            needs.append(
                k8s.core.v1.ResourceQuota(
                    f"{name}-quota", metadata=quota["metadata"], spec=quota["spec"], opts=after_ns
                )
            )
        release = pinned_release(
            f"{name}-release",
            "dcgm-exporter",
            RELEASE,
            args.namespace,
            dcgm_values(args.host, args.selection, args.service_monitor),
            # Pods of the priority class are refused until the quota exists.
            opts=pulumi.ResourceOptions(parent=self, depends_on=needs),
        )
        self.namespace = ns.metadata.name
        self.release_name = release.name.apply(lambda n: n or RELEASE)
        self.service_name = pulumi.Output.from_input(RELEASE)
        self.register_outputs(
            {"namespace": self.namespace, "release_name": self.release_name, "service_name": self.service_name}
        )
