"""Typed args of gpuplane's public components: TypedDicts with a docstring per field, and enums where
the values are enumerable.

One definition serves Python programs (mypy, editor completion) and the multi-language package:
Pulumi's component provider host reads these annotations and docstrings into the package schema
(pulumi/provider/experimental/analyzer.py: TypedDict fields, `pulumi.Input[...]`, `NotRequired`,
`Enum`). So this module has no `from __future__ import annotations`, and no `Literal` or other unions
the analyzer refuses.

Field names are Python's snake_case; the schema spells them in camelCase, as the stack config does.
Values that decide *which* resources exist (the pools) are plain; references to other resources
(cluster, service account, role, subnets) are `pulumi.Input`s, so another resource's Output can be
passed straight in.
"""

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import NotRequired, TypedDict


class GpuType(StrEnum):
    """A GPU of gpuplane's catalog (`gpuplane gpus` lists where each is offered)."""

    T4 = "t4"
    P100 = "p100"
    V100 = "v100"
    A10G = "a10g"
    L4 = "l4"
    L40S = "l40s"
    A100_40GB = "a100-40gb"
    A100_80GB = "a100-80gb"
    H100 = "h100"
    H200 = "h200"
    B200 = "b200"
    GB200 = "gb200"
    GB300 = "gb300"
    B300 = "b300"
    RTX_PRO_6000 = "rtx-pro-6000"


class AmiType(StrEnum):
    """An EKS node image (AMI type) and so its NVIDIA software profile."""

    AL2023_X86_64_NVIDIA = "AL2023_x86_64_NVIDIA"
    """AL2023 with the NVIDIA driver and container toolkit (the gpu-operator adds the device plugin)."""
    AL2023_ARM_64_NVIDIA = "AL2023_ARM_64_NVIDIA"
    """AL2023 for Arm (Grace: P6e-GB200) with the NVIDIA driver and toolkit."""
    BOTTLEROCKET_X86_64_NVIDIA = "BOTTLEROCKET_x86_64_NVIDIA"
    """Bottlerocket NVIDIA: driver, toolkit and device plugin preinstalled."""
    AL2023_X86_64_STANDARD = "AL2023_x86_64_STANDARD"
    """Plain AL2023: the gpu-operator installs everything (`driver: operator`)."""


class DriverSource(StrEnum):
    """Who provides the NVIDIA driver on EKS nodes."""

    PREINSTALLED = "preinstalled"
    """The node image's driver."""
    OPERATOR = "operator"
    """The gpu-operator installs one (plain AMIs only)."""


class DiskType(StrEnum):
    """GCP boot disk type of GPU nodes."""

    PD_BALANCED = "pd-balanced"
    """Balanced persistent disk (SSD-backed): GKE's default boot disk."""
    PD_SSD = "pd-ssd"
    """SSD persistent disk: faster image pulls and local scratch."""
    PD_STANDARD = "pd-standard"
    """Standard (HDD) persistent disk: cheapest, slowest."""
    HYPERDISK_BALANCED = "hyperdisk-balanced"
    """Hyperdisk Balanced: the boot disk of machine series without persistent disk (A3 Ultra, A4, G4)."""


class GkeDriverVersion(StrEnum):
    """Which GKE-managed NVIDIA driver GPU nodes get."""

    DEFAULT = "DEFAULT"
    """The default driver version of the node's GKE version."""
    LATEST = "LATEST"
    """The latest driver version the node's GKE version supports."""


class TaintEffect(StrEnum):
    """A Kubernetes taint effect."""

    NO_SCHEDULE = "NoSchedule"
    """Pods without a toleration are not scheduled on the node."""
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    """The scheduler avoids the node for pods without a toleration, but may use it."""
    NO_EXECUTE = "NoExecute"
    """Pods without a toleration are not scheduled, and running ones are evicted."""


class SharingStrategy(StrEnum):
    """How pods share a GPU."""

    TIME_SLICING = "time-slicing"
    """Interleaved, no isolation."""
    MPS = "mps"
    """Concurrent, memory-limited (NVIDIA Multi-Process Service)."""
    MIG = "mig"
    """Hardware partitions (Multi-Instance GPU)."""


class PoolNetwork(StrEnum):
    """Multi-node GPU networking of a pool (docs/multi-node.md)."""

    EFA = "efa"
    """EKS: EFA interfaces on every network card, a cluster placement group, one AZ."""
    GPUDIRECT = "gpudirect"
    """GKE: GPUDirect-TCPXO (A3 Mega) or GPUDirect RDMA (A3 Ultra, A4) with multi-networking."""


class GpuAllocation(StrEnum):
    """How pods get a pool's GPUs (docs/gpu-claims.md)."""

    DEVICE_PLUGIN = "device-plugin"
    """Pods count `nvidia.com/gpu` (or MIG / shared resources) through the device plugin."""
    DRA = "dra"
    """Pods claim GPUs through Dynamic Resource Allocation (ResourceClaims, the NVIDIA DRA driver)."""


class ExporterHost(StrEnum):
    """Where a standalone dcgm-exporter finds the node's preinstalled NVIDIA driver."""

    GKE = "gke"
    """GKE Standard nodes (driver under /home/kubernetes/bin/nvidia)."""
    EKS_AUTOMODE = "eks-automode"
    """EKS Auto Mode / Bottlerocket NVIDIA (the NVIDIA container runtime injects the driver)."""


class CapacityType(StrEnum):
    """A capacity type of a GPU pool (`capacity` lists them in preference order; docs/scarce-gpus.md)."""

    RESERVED = "reserved"
    """Reserved capacity: AWS on-demand capacity reservations or Capacity Blocks, GCP reservations."""
    SPOT = "spot"
    """Spot capacity (cheaper, can be reclaimed)."""
    ON_DEMAND = "on-demand"
    """On-demand capacity."""
    FLEX_START = "flex-start"
    """GKE: Dynamic Workload Scheduler flex-start VMs (wait for capacity, run at most seven days)."""
    QUEUED = "queued"
    """GKE: DWS queued provisioning (nodes only through ProvisioningRequests, all at once)."""


class ReservationType(StrEnum):
    """AWS: what kind of capacity reservation a pool consumes."""

    DEFAULT = "default"
    """An on-demand capacity reservation (ODCR)."""
    CAPACITY_BLOCK = "capacity-block"
    """A Capacity Block for ML."""


class ReservationArgs(TypedDict):
    """The reservation `reserved` capacity consumes (as `gpuPools[].reservation` in a stack)."""

    ids: NotRequired[Sequence[str]]
    """AWS: capacity reservation IDs (`cr-...`); a managed node group takes exactly one."""
    tags: NotRequired[Mapping[str, str]]
    """AWS (Karpenter): select reservations by tags instead of IDs."""
    type: NotRequired[ReservationType]
    """AWS: `capacity-block` for Capacity Blocks for ML (default: an on-demand capacity reservation)."""
    names: NotRequired[Sequence[str]]
    """GCP: reservation names (or `projects/P/reservations/N`); empty consumes any matching reservation."""
    zone: NotRequired[str]
    """The reservation's zone / Availability Zone; the pool's nodes are pinned to it."""
    machine_type: NotRequired[str]
    """The reservation's machine (GCP) or instance (AWS) type, checked against the pool's."""
    nodes: NotRequired[int]
    """Reserved nodes (shown as reserved GPUs in the capacity summary)."""


class TaintArgs(TypedDict):
    """A node taint (Kubernetes spelling of the effect)."""

    key: str
    """Taint key, e.g. `nvidia.com/gpu`."""
    value: NotRequired[str]
    """Taint value (empty when unset)."""
    effect: NotRequired[TaintEffect]
    """Taint effect; `NoSchedule` when unset."""


class SharingArgs(TypedDict):
    """How pods share a pool's GPUs."""

    strategy: SharingStrategy
    """time-slicing, mps or mig."""
    replicas: NotRequired[int]
    """time-slicing / mps: pods that share one GPU (2-48)."""
    profile: NotRequired[str]
    """mig: the partition profile, e.g. `1g.10gb` (checked against the GPU catalog; `migProfile` in a stack)."""


class GpuPoolArgs(TypedDict):
    """One pool of GPU nodes of a single GPU type (the same checks as `gpuplane:gpuPools[]` in a stack)."""

    name: str
    """Pool name (a DNS label, at most 30 characters); also the `gpuplane.io/pool` node label."""
    gpu: GpuType
    """GPU type from the catalog."""
    max_nodes: int
    """Most nodes the autoscaler may add (across all zones)."""
    gpus_per_node: NotRequired[int]
    """GPUs on each node (default 1); picks the catalog's machine or instance type for that count."""
    min_nodes: NotRequired[int]
    """Fewest nodes the autoscaler keeps (default 0: scale to zero)."""
    spot: NotRequired[bool]
    """Run on spot capacity (GKE spot pools also get a spot taint)."""
    machine_type: NotRequired[str]
    """GKE: machine type, one the catalog lists for this GPU and count."""
    instance_types: NotRequired[Sequence[str]]
    """EKS: instance types (all from the catalog for this GPU and count); default the smallest."""
    ami_type: NotRequired[AmiType]
    """EKS: node image (default AL2023 NVIDIA)."""
    driver: NotRequired[DriverSource]
    """EKS: the image's NVIDIA driver (default) or the gpu-operator's."""
    disk_size_gb: NotRequired[int]
    """Boot disk in GB (default 200: CUDA images are large)."""
    disk_type: NotRequired[DiskType]
    """GKE: boot disk type (default pd-balanced)."""
    driver_version: NotRequired[GkeDriverVersion]
    """GKE: the GKE version's DEFAULT or LATEST managed driver."""
    sharing: NotRequired[SharingArgs]
    """Share each GPU between pods: time-slicing, MPS or MIG."""
    labels: NotRequired[Mapping[str, str]]
    """Extra node labels."""
    taints: NotRequired[Sequence[TaintArgs]]
    """Extra taints beyond the `nvidia.com/gpu` (and spot) taints gpuplane always sets."""
    capacity: NotRequired[Sequence[CapacityType]]
    """Capacity types in preference order, e.g. `[reserved, spot]`; unset: `spot` decides."""
    reservation: NotRequired[ReservationArgs]
    """The reservation `reserved` capacity consumes."""
    max_run_duration: NotRequired[str]
    """GKE flex-start / queued: how long each node may run (e.g. `24h`, at most `7d`)."""
    zones: NotRequired[Sequence[str]]
    """Zones of the pool's nodes (AWS AZs or GCP zones); a multi-node `network` pool needs exactly one."""
    network: NotRequired[PoolNetwork]
    """Multi-node GPU networking: `efa` (EKS) or `gpudirect` (GKE A3 Mega / A3 Ultra / A4)."""
    placement_group: NotRequired[str]
    """EKS with `network: efa`: an existing cluster placement group (name or `pg-` ID)."""
    gpu_allocation: NotRequired[GpuAllocation]
    """`device-plugin` (default) or `dra`: claim the pool's GPUs through DRA (docs/gpu-claims.md)."""


class NodeSelectorRequirement(TypedDict):
    """One Kubernetes node-selector requirement (`matchExpressions[]`)."""

    key: str
    """Node label key."""
    operator: str
    """`In`, `NotIn`, `Exists`, ..."""
    values: NotRequired[Sequence[str]]
    """Label values (for `In` / `NotIn`)."""


class GpuNodes(TypedDict):
    """What one GPU pool's nodes carry and offer: what a workload, an exporter or the gpu-operator needs to
    select, tolerate and request them. Pool components output one per pool; `GpuOperator`, `DcgmExporter`
    and `placement()` take them. (Keys are single words, so they read the same in every language.)"""

    pool: str
    """Pool (or GPU class) name."""
    labels: Mapping[str, str]
    """Node labels the pool's nodes carry (gpuplane's, the platform's and the user's)."""
    taints: Sequence[TaintArgs]
    """Taints the pool's nodes carry."""
    resource: str
    """The extended resource a pod requests (`nvidia.com/gpu`, or `nvidia.com/mig-<profile>`)."""
    capacity: NotRequired[int]
    """Most of `resource` one pod can get on one node (GPUs, MIG slices); 1 on time-sliced or MPS GPUs."""
    nodes: NotRequired[int]
    """Most nodes the pool can reach (its `max_nodes`): sizes `DcgmExporter`'s pod quota."""
    ceiling: NotRequired[int]
    """Most of `resource` the pool can offer (nodes x GPUs x units per GPU): `KueueQueues`' default ceiling."""
    affinity: NotRequired[Sequence[NodeSelectorRequirement]]
    """Node-affinity expressions that select exactly this pool's nodes (on labels the platform sets)."""
    selector: NotRequired[Mapping[str, str]]
    """A nodeSelector pods also need (Autopilot provisions GPU nodes from it)."""
    sharing: NotRequired[SharingArgs]
    """The pool's GPU sharing (the gpu-operator's device plugin config follows it)."""
    devices: NotRequired[Mapping[str, int]]
    """Other extended resources each node offers that a multi-node pod takes with its GPUs
    (`vpc.amazonaws.com/efa`: the node's EFA interfaces)."""
    topology: NotRequired[Sequence[str]]
    """Network-topology node labels the cloud sets on the pool's nodes, broadest first."""
    allocation: NotRequired[GpuAllocation]
    """`dra`: pods claim these GPUs through ResourceClaims (`placement` returns a ResourceClaimTemplate), not
    `resource` limits; unset: the device plugin."""
    nvlink_nodes: NotRequired[int]
    """Nodes one NVLink domain spans (GB200 / GB300 NVL72: 18): a multi-node job within it takes a ComputeDomain
    (`compute_domain`); unset: the NVLink domain ends at the node."""
    nvlink_label: NotRequired[str]
    """The node label whose value names a node's NVLink domain (with `nvlink_nodes`)."""
    annotations: NotRequired[Mapping[str, str]]
    """Pod annotations a workload needs on these nodes (GKE GPUDirect: `networking.gke.io/interfaces`,
    which attaches the node's extra NICs to the pod)."""


class GpuPriceArgs(TypedDict):
    """What one GPU pool costs, for `GpuMonitoring`'s cost rules."""

    nodes: GpuNodes
    """The pool (a pool component's `gpu_nodes` entry): its `affinity` (else its `gpuplane.io/pool` label) selects
    its nodes in kube-state-metrics' `kube_node_labels`, its `sharing` says what one unit of it is."""
    usd_per_gpu_hour: float
    """What one GPU of the pool costs per hour, in USD (e.g. your negotiated rate)."""
    units_per_gpu: NotRequired[int]
    """Units one GPU becomes; unset: the sharing's replicas, the MIG profile's instances on a catalog GPU
    (`gpuplane.io/gpu` label), or 1."""
