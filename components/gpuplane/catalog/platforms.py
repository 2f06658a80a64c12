"""The seed's provider matrix as data: what each platform preinstalls and what gpuplane installs.

Columns follow the last table of "GPUs on Kubernetes": provisioning, drivers, container toolkit,
device plugin and metrics. `Source.PLATFORM` means the platform ships it (gpuplane installs nothing);
any other value names what gpuplane installs. A platform is built by the function at `builder`
(`module:function`), imported only when that platform is used, so a GKE stack never imports the AWS SDKs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class Source(StrEnum):
    """Who provides a piece of the NVIDIA stack on a platform."""

    PLATFORM = "preinstalled by the platform"
    GPU_OPERATOR = "NVIDIA gpu-operator (installed by gpuplane)"
    DCGM_EXPORTER = "standalone dcgm-exporter chart (installed by gpuplane)"


@dataclass(frozen=True)
class SystemPods:
    """Where a platform's system workloads run (operators, Prometheus, Grafana, ...): the node selector and
    tolerations gpuplane gives their pods, and where those nodes come from."""

    node_selector: Mapping[str, str]
    tolerations: tuple[Mapping[str, str], ...] = ()
    nodes: str = ""
    """The nodes that match, and the source that says they carry these labels and taints."""

    def values(self) -> dict[str, object]:
        """`nodeSelector` (and `tolerations` when there are any), as most charts name them."""
        out: dict[str, object] = {"nodeSelector": dict(self.node_selector)}
        if self.tolerations:
            out["tolerations"] = [dict(t) for t in self.tolerations]
        return out


GPUPLANE_SYSTEM_POOL = SystemPods(
    node_selector=MappingProxyType({"gpuplane.io/role": "system"}),
    nodes="gpuplane's own system node pool/group, labelled gpuplane.io/role=system and untainted "
    "(components/gpuplane/gcp/render.py, components/gpuplane/aws/render.py)",
)

AUTO_MODE_SYSTEM_POOL = SystemPods(
    node_selector=MappingProxyType({"karpenter.sh/nodepool": "system"}),
    tolerations=(MappingProxyType({"key": "CriticalAddonsOnly", "operator": "Exists"}),),
    nodes="EKS Auto Mode's built-in `system` NodePool (on by default), tainted CriticalAddonsOnly; AWS's "
    "procedure for critical add-ons selects it with exactly this selector and toleration "
    "(awsdocs/amazon-eks-user-guide latest/ug/automode/critical-workload.adoc, set-builtin-node-pools.adoc)",
)

AUTOPILOT_SYSTEM_PODS = SystemPods(
    node_selector=MappingProxyType({}),
    nodes="Autopilot creates nodes per pod; a pod that selects no compute class runs on the default "
    "general-purpose class, and separation needs a toleration plus a selector of the same key:value "
    "(cloud.google.com/kubernetes-engine/docs/how-to/autopilot-compute-classes, .../how-to/workload-separation)",
)


@dataclass(frozen=True)
class Platform:
    """One row of the provider matrix."""

    name: str
    """Value of `gpuplane:platform`."""
    cloud: str
    """`gcp` or `aws`: which cloud section of the config applies and which GPU offers are valid."""
    provisioning: str
    drivers: Source
    toolkit: Source
    device_plugin: Source
    metrics: Source
    builder: str
    """`module:function` that builds the platform's component tree."""
    integrations: tuple[str, ...]
    """Monitoring integrations available (`gpuplane:monitoring.integration`)."""
    fixed_pools: bool = True
    """`gpuPools` become node pools/groups (True) or GPU classes for an auto-provisioner (False)."""
    min_pools: int = 1
    """Fewest `gpuPools` entries the platform needs."""
    sections: tuple[str, ...] = ()
    """Optional config sections only this platform reads (e.g. `karpenter`)."""
    sharing: tuple[str, ...] = ("time-slicing", "mps", "mig")
    """GPU sharing strategies the platform can carry out (`gpuPools[].sharing.strategy`)."""
    unused_pool_keys: tuple[str, ...] = ()
    """`gpuPools[]` keys the platform has no use for (the cloud picks the nodes); setting one is an error."""
    system_pods: SystemPods = GPUPLANE_SYSTEM_POOL
    """Node selector and tolerations for the system workloads gpuplane installs (not GPU workloads)."""
    description: str = ""

    @property
    def installs(self) -> tuple[str, ...]:
        """The distinct things gpuplane installs on this platform (empty when the platform ships all)."""
        parts = (self.drivers, self.toolkit, self.device_plugin, self.metrics)
        return tuple(dict.fromkeys(p.value for p in parts if p is not Source.PLATFORM))


PLATFORMS: Mapping[str, Platform] = MappingProxyType(
    {
        p.name: p
        for p in (
            Platform(
                name="gke-standard",
                cloud="gcp",
                provisioning="fixed GPU node pools with the cluster autoscaler (GKE)",
                drivers=Source.PLATFORM,
                toolkit=Source.PLATFORM,
                device_plugin=Source.PLATFORM,
                metrics=Source.DCGM_EXPORTER,
                builder="gpuplane.gcp.platform:build",
                integrations=("scrape-config", "prometheus-operator", "gke-managed", "install"),
                description="GKE Standard: GKE installs the driver (gpu_driver_installation_config), "
                "toolkit and device plugin; gpuplane adds dcgm-exporter for metrics.",
            ),
            Platform(
                name="eks-managed",
                cloud="aws",
                provisioning="EKS managed GPU node groups with the cluster autoscaler",
                drivers=Source.PLATFORM,
                toolkit=Source.PLATFORM,
                device_plugin=Source.GPU_OPERATOR,
                metrics=Source.GPU_OPERATOR,
                builder="gpuplane.aws.platform:build",
                integrations=("scrape-config", "prometheus-operator", "install"),
                description="EKS: the AL2023 NVIDIA AMI ships driver and toolkit; the gpu-operator adds the "
                "device plugin, GFD and dcgm-exporter (driver and toolkit follow the node image).",
            ),
            Platform(
                name="gke-nap",
                cloud="gcp",
                provisioning="GKE node auto-provisioning: GPU node pools created on demand within resource limits",
                drivers=Source.PLATFORM,
                toolkit=Source.PLATFORM,
                device_plugin=Source.PLATFORM,
                metrics=Source.DCGM_EXPORTER,
                builder="gpuplane.gcp.platform:build",
                integrations=("scrape-config", "prometheus-operator", "gke-managed", "install"),
                fixed_pools=False,
                sections=("autoProvisioning",),
                description="GKE Standard with NAP: gpuPools are GPU classes whose ceilings become NAP's "
                "resource limits; GKE installs the driver on the node pools it creates.",
            ),
            Platform(
                name="gke-autopilot",
                cloud="gcp",
                provisioning="GKE Autopilot: GCP provisions GPU nodes per pod",
                drivers=Source.PLATFORM,
                toolkit=Source.PLATFORM,
                device_plugin=Source.PLATFORM,
                metrics=Source.PLATFORM,
                builder="gpuplane.gcp.autopilot:build",
                integrations=("gke-managed", "scrape-config"),
                fixed_pools=False,
                min_pools=0,
                sharing=("time-slicing", "mig"),
                unused_pool_keys=("machineType", "diskSizeGb", "diskType", "driverVersion"),
                system_pods=AUTOPILOT_SYSTEM_PODS,
                description="Autopilot: everything NVIDIA is GKE's; metrics come from GKE's device plugin "
                "(:2112) or managed DCGM. gpuplane installs nothing privileged.",
            ),
            Platform(
                name="eks-karpenter",
                cloud="aws",
                provisioning="Karpenter (karpenter.sh/v1): GPU nodes launched per pending pod, removed when empty",
                drivers=Source.PLATFORM,
                toolkit=Source.PLATFORM,
                device_plugin=Source.GPU_OPERATOR,
                metrics=Source.GPU_OPERATOR,
                builder="gpuplane.aws.platform:build",
                integrations=("scrape-config", "prometheus-operator", "install"),
                fixed_pools=False,
                sections=("karpenter",),
                description="EKS with Karpenter: one NodePool per GPU class, one EC2NodeClass per image family; "
                "the gpu-operator adds the device plugin and dcgm-exporter as on managed node groups.",
            ),
            Platform(
                name="eks-automode",
                cloud="aws",
                provisioning="EKS Auto Mode: AWS-managed Karpenter; GPU NodePools on the eks.amazonaws.com NodeClass",
                drivers=Source.PLATFORM,
                toolkit=Source.PLATFORM,
                device_plugin=Source.PLATFORM,
                metrics=Source.DCGM_EXPORTER,
                builder="gpuplane.aws.platform:build",
                integrations=("scrape-config", "prometheus-operator", "install"),
                fixed_pools=False,
                sharing=(),
                system_pods=AUTO_MODE_SYSTEM_POOL,
                description="EKS Auto Mode manages the NVIDIA driver and device plugin; gpuplane adds GPU NodePools "
                "and a standalone dcgm-exporter for metrics (no gpu-operator).",
            ),
        )
    }
)
"""Platform name -> matrix row. Later platforms (EKS, Autopilot, Karpenter) add rows here."""


def _cell(source: Source) -> str:
    return {Source.PLATFORM: "platform", Source.GPU_OPERATOR: "gpu-operator", Source.DCGM_EXPORTER: "dcgm-exporter"}[
        source
    ]


def matrix_markdown(names: tuple[str, ...] | None = None) -> str:
    """The provider matrix as a Markdown table: who provides each piece on each platform
    (`platform` = preinstalled/managed by the cloud; otherwise what gpuplane installs)."""
    rows = [
        "| platform | cloud | provisioning | drivers | container toolkit | device plugin | metrics |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in PLATFORMS.values():
        if names is None or p.name in names:
            cells = (p.drivers, p.toolkit, p.device_plugin, p.metrics)
            rows.append(f"| `{p.name}` | {p.cloud} | {p.provisioning} | " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows)
