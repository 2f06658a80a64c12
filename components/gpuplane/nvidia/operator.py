"""NVIDIA gpu-operator: the EKS column of the seed's matrix.

`operator_values` derives the chart values from the node image (data in `catalog.images`): on the
AL2023 NVIDIA AMI the driver and toolkit are preinstalled, so the operator brings the device plugin,
GFD and dcgm-exporter; on Bottlerocket NVIDIA the device plugin is preinstalled too; on a plain AMI the
operator installs everything. Every key set here exists in the pinned chart's `values.yaml`.

No `from __future__ import annotations`: the multi-language package reads the args' annotations.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ..args.checks import lift, plain
from ..args.inputs import AmiType, GpuNodes
from ..catalog import NODE_IMAGES, NodeImage, operator_components
from ..config.model import GpuPool
from ..config.sharing import Sharing
from ..k8s.clusters import adopt_kubernetes_provider, check_component_args
from ..k8s.objects import pinned_release, privileged_namespace
from ..scheduling.claims import claims_on
from ..scheduling.nodes import GPU_TAINT, GpuNodeTarget, targets_of, tolerations_for
from ..scheduling.sharing import DEVICE_PLUGIN_CONFIG, MIG_STRATEGY, device_plugin_configmap

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
    image: NodeImage,
    targets: Sequence[GpuNodeTarget],
    pools: Sequence[GpuPool] = (),
    service_monitor: bool = False,
    system: Mapping[str, str] = SYSTEM_SELECTOR,
    all_claimed: bool = False,
) -> dict[str, Any]:
    """gpu-operator values for GPU pools on `image`, tolerating exactly the pools' taints.

    `dcgmExporter.serviceMonitor.enabled` is always set: v26.7.0 turns it on by default, which fails
    without the prometheus-operator CRDs.

    `all_claimed`: every GPU pool claims its GPUs through DRA, so the device plugin is off cluster-wide. The
    per-node label that keeps it off a DRA pool (`catalog.dra.DRA_NODE_LABELS`) is not enough for the operator's
    validator: it drops its plugin validation only when the plugin is disabled in the ClusterPolicy
    (gpu-operator v26.7.0 controllers/object_controls.go), and otherwise fails on a node with no
    `nvidia.com/gpu` (cmd/nvidia-validator/main.go "GPU resources are not discovered by the node").
    """
    comps = operator_components(image)
    # The GPU taint always, then each pool's: a plain pool added or removed leaves the DaemonSets alone.
    tolerations = tolerations_for([GpuNodeTarget(pool="*", labels={}, taints=(GPU_TAINT,)), *targets])
    return {
        "operator": {"nodeSelector": dict(system)},
        # CDI only where the operator manages the container toolkit; a preinstalled toolkit (EKS AMIs)
        # keeps the runtime hooks the image configured.
        "cdi": {"enabled": comps["toolkit"]},
        "driver": {"enabled": comps["driver"]},
        "toolkit": {"enabled": comps["toolkit"]},
        "devicePlugin": {
            "enabled": comps["devicePlugin"] and not all_claimed,
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


class GpuOperatorArgs(TypedDict):
    """Arguments of `GpuOperator`."""

    node_image: NotRequired[AmiType]
    """The GPU nodes' image profile (EKS AMI type): decides driver, toolkit, device plugin and MIG
    manager. Default AL2023 NVIDIA (driver and toolkit preinstalled)."""
    gpu_nodes: NotRequired[pulumi.Input[Sequence[GpuNodes]]]
    """The GPU pools (a pool component's `gpu_nodes`, or your own): operand DaemonSets tolerate their
    taints, and their `sharing` becomes device-plugin configs."""
    service_monitor: NotRequired[bool]
    """Create the dcgm-exporter ServiceMonitor (needs the prometheus-operator CRDs)."""
    namespace: NotRequired[str]
    """Namespace for the operator and its operands (created here); default `gpu-operator`."""
    system_node_selector: NotRequired[Mapping[str, str]]
    """Node labels of the nodes the operator itself runs on; default gpuplane's system nodes
    (`gpuplane.io/role: system`). `{}`: any node."""
    cluster: NotRequired[Any]
    """Your cluster object (`pulumi_eks.Cluster`, `aws.eks.Cluster` or `gcp.container.Cluster`): the
    Kubernetes resources go to it through a provider made here (`{name}-k8s`), unless `opts` give one."""


@dataclass(frozen=True)
class SharedPool:
    """A pool's name and sharing, what the device-plugin ConfigMap reads."""

    name: str
    sharing: Sharing | None


def shared_pools(nodes: Sequence[GpuNodes]) -> list[SharedPool]:
    """`gpu_nodes` entries as the pools the device-plugin ConfigMap reads."""
    out = []
    for n in nodes:
        s = n.get("sharing")
        sharing = None
        if s:
            raw = {"strategy": plain(s["strategy"]), "replicas": s.get("replicas"), "migProfile": s.get("profile")}
            sharing = Sharing.model_validate({k: v for k, v in raw.items() if v is not None})
        out.append(SharedPool(name=n["pool"], sharing=sharing))
    return out


class GpuOperator(pulumi.ComponentResource):
    """The gpu-operator chart in its own privileged namespace; the operator itself runs on system nodes."""

    namespace: pulumi.Output[str]
    """The operator's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name (`gpu-operator`); its dcgm-exporter Service is `nvidia-dcgm-exporter`."""

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """gpu-operator release `gpu-operator` in `args["namespace"]`; see `GpuOperatorArgs`.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        ami = str(plain(args.get("node_image") or AmiType.AL2023_X86_64_NVIDIA))
        check_component_args(f"GpuOperator {name!r}", args, GpuOperatorArgs, ("node_image", ami, NODE_IMAGES))
        image = NODE_IMAGES[ami]
        namespace = args.get("namespace") or NAMESPACE
        nodes = args.get("gpu_nodes") or []
        selector = args.get("system_node_selector")
        system = SYSTEM_SELECTOR if selector is None else dict(selector)
        super().__init__("gpuplane:nvidia:GpuOperator", name, None, opts)
        adopt_kubernetes_provider(self, name, args.get("cluster"))
        ns_obj = privileged_namespace(namespace)
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace", metadata=ns_obj["metadata"], opts=pulumi.ResourceOptions(parent=self)
        )
        cm = device_plugin_configmap(namespace, [])
        config = k8s.core.v1.ConfigMap(
            f"{name}-device-plugin-config",
            metadata=cm["metadata"],
            data=lift(nodes, lambda n: device_plugin_configmap(namespace, shared_pools(n))["data"]),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[ns]),
        )
        release = pinned_release(
            f"{name}-release",
            "gpu-operator",
            RELEASE,
            namespace,
            lift(
                nodes,
                lambda n: operator_values(
                    image,
                    targets_of(n),
                    (),
                    bool(args.get("service_monitor")),
                    system,
                    all_claimed=bool(n) and all(claims_on(x) for x in n),
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[ns, config]),
            timeout=900,
        )
        self.namespace = ns.metadata.name
        self.release_name = release.name.apply(lambda n: n or RELEASE)
        self.register_outputs({"namespace": self.namespace, "release_name": self.release_name})
