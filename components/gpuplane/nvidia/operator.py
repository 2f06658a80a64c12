"""NVIDIA gpu-operator: the EKS column of the seed's matrix.

`operator_values` derives the chart values from the node image (data in `catalog.images`): on the
AL2023 NVIDIA AMI the driver and toolkit are preinstalled, so the operator brings the device plugin,
GFD and dcgm-exporter; on Bottlerocket NVIDIA the device plugin is preinstalled too; on a plain AMI the
operator installs everything. Every key set here exists in the pinned chart's `values.yaml`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..catalog import NodeImage, operator_components
from ..config.model import GpuPool
from ..kube import pinned_release, privileged_namespace
from ..nodes import GPU_TAINT, GpuNodeTarget, tolerations_for
from .sharing import DEVICE_PLUGIN_CONFIG, MIG_STRATEGY, device_plugin_configmap

RELEASE = "gpu-operator"
NAMESPACE = "gpu-operator"
EXPORTER_SERVICE = "nvidia-dcgm-exporter"
EXPORTER_LABELS = {"app": "nvidia-dcgm-exporter"}
EXPORTER_DAEMONSET = "nvidia-dcgm-exporter"
"""The operator's dcgm-exporter DaemonSet (NVIDIA/gpu-operator assets/state-dcgm-exporter/0800_daemonset.yaml)."""
"""Labels the operator gives its dcgm-exporter Service and pods (gpu-operator v26.7.0,
assets/state-dcgm-exporter/0400_service.yaml: Service `nvidia-dcgm-exporter`, port `gpu-metrics`)."""
EXPORTER_PORT_NAME = "gpu-metrics"
SYSTEM_SELECTOR = {"gpuplane.io/role": "system"}
CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}


def operator_values(
    image: NodeImage, targets: Sequence[GpuNodeTarget], pools: Sequence[GpuPool] = (), service_monitor: bool = False
) -> dict[str, Any]:
    """gpu-operator values for GPU pools on `image`, tolerating exactly the pools' taints.

    `dcgmExporter.serviceMonitor.enabled` is always set: v26.7.0 turns it on by default, which fails
    without the prometheus-operator CRDs.
    """
    comps = operator_components(image)
    # The GPU taint always, then each pool's: a plain pool added or removed leaves the DaemonSets alone.
    tolerations = tolerations_for([GpuNodeTarget(pool="*", labels={}, taints=(GPU_TAINT,)), *targets])
    return {
        "operator": {"nodeSelector": dict(SYSTEM_SELECTOR)},
        # CDI only where the operator manages the container toolkit; a preinstalled toolkit (EKS AMIs)
        # keeps the runtime hooks the image configured.
        "cdi": {"enabled": comps["toolkit"]},
        "driver": {"enabled": comps["driver"]},
        "toolkit": {"enabled": comps["toolkit"]},
        "devicePlugin": {
            "enabled": comps["devicePlugin"],
            # Our ConfigMap: `default` keeps GPUs whole; sharing pools pick theirs by node label.
            "config": {"name": DEVICE_PLUGIN_CONFIG, "default": "default"},
        },
        "migManager": {"enabled": comps["migManager"]},
        "mig": {"strategy": MIG_STRATEGY},
        "gfd": {"enabled": True},
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": service_monitor}},
        "daemonsets": {"tolerations": tolerations},
        "node-feature-discovery": {"worker": {"tolerations": [CONTROL_PLANE_TOLERATION, *tolerations]}},
    }


class GpuOperatorArgs:
    """Inputs of `GpuOperator`."""

    def __init__(
        self,
        image: NodeImage,
        targets: Sequence[GpuNodeTarget],
        pools: Sequence[GpuPool] = (),
        service_monitor: bool = False,
        namespace: str = NAMESPACE,
    ) -> None:
        self.image = image
        """The GPU pools' node image; decides driver/toolkit/device plugin/MIG manager."""
        self.targets = list(targets)
        """The GPU pools; operator DaemonSets tolerate exactly their taints."""
        self.pools = list(pools)
        """The GPU pools' config: their sharing becomes device-plugin configs and the MIG strategy."""
        self.service_monitor = service_monitor
        """Create the dcgm-exporter ServiceMonitor (needs the prometheus-operator CRDs)."""
        self.namespace = namespace
        """Namespace for the operator and its operands (created here)."""


class GpuOperator(pulumi.ComponentResource):
    """The gpu-operator chart in its own privileged namespace; the operator itself runs on system nodes."""

    namespace: pulumi.Output[str]
    release_name: pulumi.Output[str]

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:nvidia:GpuOperator", name, None, opts)
        ns_obj = privileged_namespace(args.namespace)
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace", metadata=ns_obj["metadata"], opts=pulumi.ResourceOptions(parent=self)
        )
        cm = device_plugin_configmap(args.namespace, args.pools)
        config = k8s.core.v1.ConfigMap(
            f"{name}-device-plugin-config",
            metadata=cm["metadata"],
            data=cm["data"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[ns]),
        )
        release = pinned_release(
            f"{name}-release",
            "gpu-operator",
            RELEASE,
            args.namespace,
            operator_values(args.image, args.targets, args.pools, args.service_monitor),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[ns, config]),
            timeout=900,
        )
        self.namespace = ns.metadata.name
        self.release_name = release.name.apply(lambda n: n or RELEASE)
        self.register_outputs({"namespace": self.namespace, "release_name": self.release_name})
