"""NVIDIA's DRA driver for GPUs (kubernetes-sigs/dra-driver-nvidia-gpu, chart pinned in `gpuplane.pins`): GPU
claims (`gpu.nvidia.com`, `mig.nvidia.com`) on the pools that choose `gpuAllocation: dra`, and ComputeDomains
(IMEX across the nodes of one NVLink domain) on GB200 / GB300 pools.

`dra_values` renders the chart's values from the pools; every key it sets exists in the chart's
`values.yaml` (tests check it against the published file when available). The kubelet plugin runs only on
nodes carrying gpuplane's `gpuplane.io/dra-plugin` label (`catalog.dra.PLUGIN_LABEL`), tolerating their
taints; the controller runs on the system nodes.

No `from __future__ import annotations`: the multi-language package reads the args' annotations.
"""

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ..args.checks import lift, plain
from ..args.inputs import GpuNodes
from ..catalog.dra import DRA_HOSTS, PLUGIN_LABEL
from ..k8s.clusters import adopt_kubernetes_provider, check_component_args
from ..k8s.objects import pinned_release, privileged_namespace
from ..scheduling.claims import claims_on
from ..scheduling.nodes import agent_tolerations, targets_of
from .dcgm import critical_pods_quota, quota_manifest, quota_pods, reachable_nodes
from .operator import SYSTEM_SELECTOR

RELEASE = "nvidia-dra-driver-gpu"
"""Helm release name (fixed, so the objects the chart names after it are known before deploy)."""
NAMESPACE = "nvidia-dra-driver-gpu"
"""The chart refuses the `default` namespace (`allowDefaultNamespace: false`); this is the one NVIDIA's docs use."""


class DraHostKind(StrEnum):
    """Whose GPU nodes the DRA driver runs on (where their NVIDIA driver lives)."""

    GKE = "gke"
    """GKE Standard nodes (driver under /home/kubernetes/bin/nvidia; priority-class quota needed)."""
    EKS = "eks"
    """EKS nodes on the AL2023 NVIDIA AMI (driver on the host root)."""


HOST_CLOUDS: Mapping[str, str] = {"gke": "gcp", "eks": "aws"}


def dra_values(cloud: str, nodes: Sequence[GpuNodes], system: Mapping[str, str] = SYSTEM_SELECTOR) -> dict[str, Any]:
    """Chart values for the pools in `nodes`: GPU claims where any pool claims GPUs, ComputeDomains where any
    pool's NVLink domain spans nodes; the kubelet plugin on the labelled nodes, tolerating their taints."""
    host = DRA_HOSTS[cloud]
    gpus = any(claims_on(n) for n in nodes)
    domains = any(n.get("nvlink_nodes") for n in nodes)
    return {
        "nvidiaDriverRoot": host.driver_root,
        # The chart picks the highest resource.k8s.io version the cluster reports (templates/_helpers.tpl); DRA's
        # GA version, which gpuplane requires (`config.dra`), keeps a render without a cluster the same.
        "resourceApiVersion": "resource.k8s.io/v1",
        # The chart guards GPU claims behind this override (templates/validation.yaml); gpuplane keeps them to
        # the pools that chose them.
        "gpuResourcesEnabledOverride": gpus,
        "resources": {"gpus": {"enabled": gpus}, "computeDomains": {"enabled": domains}},
        "controller": {"nodeSelector": dict(system)},
        "kubeletPlugin": {
            "nodeSelector": {PLUGIN_LABEL: "true"},
            # A list replaces the chart's (`nvidia.com/gpu` Exists): the GPU taint is among the platform's.
            "tolerations": agent_tolerations(cloud, targets_of(nodes)),
        },
    }


class NvidiaDraDriverArgs(TypedDict):
    """Arguments of `NvidiaDraDriver`."""

    host: DraHostKind
    """Whose GPU nodes: GKE Standard or EKS (AL2023 NVIDIA AMI)."""
    gpu_nodes: pulumi.Input[Sequence[GpuNodes]]
    """The pools the driver serves (a pool component's `gpu_nodes` entries with `allocation: dra` or
    `nvlink_nodes`); their nodes carry the `gpuplane.io/dra-plugin: "true"` label."""
    namespace: NotRequired[str]
    """Namespace for the driver (created here); default `nvidia-dra-driver-gpu`."""
    system_node_selector: NotRequired[Mapping[str, str]]
    """Node labels of the nodes the controller runs on; default gpuplane's system nodes. `{}`: any node."""
    cluster: NotRequired[Any]
    """Your cluster object: the Kubernetes resources go to it through a provider made here (`{name}-k8s`),
    unless `opts` give one."""


class NvidiaDraDriver(pulumi.ComponentResource):
    """The NVIDIA DRA driver chart in its own privileged namespace (GKE: with the priority-class quota)."""

    namespace: pulumi.Output[str]
    """The driver's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name (`nvidia-dra-driver-gpu`)."""

    def __init__(self, name: str, args: NvidiaDraDriverArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """DRA driver release `nvidia-dra-driver-gpu`; see `NvidiaDraDriverArgs`.

        Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        host = str(plain(args.get("host")))
        check_component_args(f"NvidiaDraDriver {name!r}", args, NvidiaDraDriverArgs, ("host", host, HOST_CLOUDS))
        cloud = HOST_CLOUDS[host]
        namespace = args.get("namespace") or NAMESPACE
        selector = args.get("system_node_selector")
        system = SYSTEM_SELECTOR if selector is None else dict(selector)
        nodes = args["gpu_nodes"]
        super().__init__("gpuplane:nvidia:NvidiaDraDriver", name, None, opts)
        adopt_kubernetes_provider(self, name, args.get("cluster"))
        ns_obj = privileged_namespace(namespace)
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace", metadata=ns_obj["metadata"], opts=pulumi.ResourceOptions(parent=self)
        )
        needs: list[pulumi.Resource] = [ns]
        if DRA_HOSTS[cloud].priority_quota:  # both the controller and the kubelet plugin are system-node-critical
            spec = lift(nodes, lambda n: quota_manifest(namespace, quota_pods(reachable_nodes(n)))["spec"])
            after_ns = pulumi.ResourceOptions(parent=self, depends_on=[ns])
            needs.append(critical_pods_quota(f"{name}-quota", quota_manifest(namespace, 0)["metadata"], spec, after_ns))
        release = pinned_release(
            f"{name}-release",
            "dra-driver-nvidia-gpu",
            RELEASE,
            namespace,
            lift(nodes, lambda n: dra_values(cloud, n, system)),
            opts=pulumi.ResourceOptions(parent=self, depends_on=needs),
        )
        self.namespace = ns.metadata.name
        self.release_name = release.name.apply(lambda n: n or RELEASE)
        self.register_outputs({"namespace": self.namespace, "release_name": self.release_name})


def dra_driver(name: str, cfg: Any, opts: pulumi.ResourceOptions) -> NvidiaDraDriver | None:
    """The driver for a stack's pools that claim GPUs or span NVLink domains (`{name}-dra-driver`), or None."""
    from ..config.dra import needs_driver
    from ..config.model import StackConfig
    from ..scheduling.placement import stack_gpu_nodes

    assert isinstance(cfg, StackConfig)
    served = [n for n, p in zip(stack_gpu_nodes(cfg), cfg.gpuPools, strict=True) if needs_driver(p)]
    if not served:
        return None
    host = DraHostKind.GKE if cfg.platform_spec.cloud == "gcp" else DraHostKind.EKS
    return NvidiaDraDriver(f"{name}-dra-driver", NvidiaDraDriverArgs(host=host, gpu_nodes=served), opts=opts)
