"""Typed args of the whole platforms and of `GpuMonitoring`: nested TypedDicts that mirror the stack config's
sections (`cluster`, `gcp`, `aws`, `monitoring`, ...), in snake_case, with enums where values are enumerable.
A platform maps its args onto the stack config (`to_config`) and validates them with `parse_config`, so a
rule lives in one place; `argcheck.check` turns the problems into argument paths.

Which args may be Outputs: the ones passed through to resource inputs (a GCP project, network and
subnetwork; an existing VPC, its subnets, admin ARNs, a KMS key; a monitoring cluster/region label). Those
that decide which resources exist or name them stay plain: the platform kind, the pools, the region (it
picks the zones that offer each GPU), the cluster name, the monitoring integration.

No `from __future__ import annotations`: the multi-language package reads these annotations.
"""

from collections.abc import Mapping, Sequence
from enum import Enum, StrEnum
from typing import Any, NotRequired, TypedDict

import pulumi

from ..config.model import StackConfig
from .checks import ArgsError, camel, check, pool_config, shape_problems
from .deferred import Deferred
from .inputs import GpuPriceArgs
from .kueue import KueueTeamArgs


class ReleaseChannel(StrEnum):
    """GKE release channel (GKE upgrades control plane and nodes along it)."""

    RAPID = "RAPID"
    """Newest versions first, soon after their open-source release."""
    REGULAR = "REGULAR"
    """Versions after they have been on RAPID a while: GKE's default."""
    STABLE = "STABLE"
    """Versions after REGULAR: fewer, later upgrades."""
    EXTENDED = "EXTENDED"
    """As REGULAR, with support for a minor version for up to 24 months (extra cost after standard support)."""


class MonitoringIntegration(StrEnum):
    """How GPU metrics reach Prometheus."""

    SCRAPE_CONFIG = "scrape-config"
    """A `gpu-metrics` scrape job (an output) for the Prometheus you run; nothing in the cluster."""
    PROMETHEUS_OPERATOR = "prometheus-operator"
    """ServiceMonitor, PrometheusRule and dashboard ConfigMap for your Prometheus Operator."""
    GKE_MANAGED = "gke-managed"
    """PodMonitoring for GKE Managed Prometheus."""
    INSTALL = "install"
    """kube-prometheus-stack (Prometheus, Alertmanager, Grafana) plus the above for it."""


class CrdSource(StrEnum):
    """Where the prometheus-operator CRDs come from."""

    INSTALL = "install"
    """gpuplane installs them (with the integrations that need them)."""
    EXISTING = "existing"
    """The cluster already has them (it runs Prometheus Operator)."""


class MonitoredExporter(StrEnum):
    """Which GPU metrics exporter `GpuMonitoring` scrapes."""

    DCGM_EXPORTER = "dcgm-exporter"
    """The standalone chart (`DcgmExporter`), in its namespace (default `gpu-monitoring`)."""
    GPU_OPERATOR = "gpu-operator"
    """The gpu-operator's own exporter (`GpuOperator`), in the operator's namespace."""
    GKE_DEVICE_PLUGIN = "gke-device-plugin"
    """GKE Autopilot's nvidia-gpu-device-plugin pods (port 2112, in kube-system)."""


class AutoscalingProfile(StrEnum):
    """GKE cluster autoscaling profile."""

    BALANCED = "BALANCED"
    """GKE's default: keeps spare capacity for scale-ups."""
    OPTIMIZE_UTILIZATION = "OPTIMIZE_UTILIZATION"
    """Removes idle (GPU) nodes sooner."""


class SystemPoolArgs(TypedDict):
    """The small non-GPU pool for add-ons (`gpuplane:cluster.systemPool`)."""

    machine_type: NotRequired[str]
    """Machine (GCP) or instance (AWS) type; unset: `e2-standard-4` / `m7i.large`."""
    min_nodes: NotRequired[int]
    """Smallest size (at least 1, the default)."""
    max_nodes: NotRequired[int]
    """Largest size (default 3)."""
    disk_size_gb: NotRequired[int]
    """Boot disk size in GB (default 100)."""


class ClusterArgs(TypedDict):
    """Cluster-wide settings (`gpuplane:cluster`). Plain values: the name names the cluster's resources."""

    name: str
    """Cluster name (a DNS label, at most 40 characters)."""
    release_channel: NotRequired[ReleaseChannel]
    """GKE release channel (default REGULAR)."""
    kubernetes_version: NotRequired[str]
    """Minimum control plane version, e.g. `1.33`; unset follows the release channel's default."""
    deletion_protection: NotRequired[bool]
    """The cloud's own deletion protection (default on)."""
    protect: NotRequired[bool]
    """Pulumi `protect` on the cluster."""
    retain_on_delete: NotRequired[bool]
    """Pulumi `retainOnDelete` on the cluster."""
    system_pool: NotRequired[SystemPoolArgs]
    """The non-GPU pool for add-ons."""


class QueuesArgs(TypedDict):
    """Kueue job queues per team with GPU quotas per pool (`gpuplane:queues`, docs/queues.md)."""

    teams: Sequence[KueueTeamArgs]
    """One entry per team: a ClusterQueue with its quota per pool, and a LocalQueue."""
    cohort: NotRequired[str]
    """Put every team's ClusterQueue in this cohort, so a team borrows quota the others leave idle."""
    overcommit: NotRequired[bool]
    """Allow quotas that together exceed a pool's GPU ceiling."""
    create_namespaces: NotRequired[bool]
    """Create the teams' namespaces (default true)."""
    pods_ready_timeout: NotRequired[str]
    """Gang admission: evict and requeue a job whose pods are not all ready within this (default `10m`)."""
    topology: NotRequired[bool]
    """Topology-aware scheduling on pools whose machines carry the cloud's topology labels (default true)."""


class SmokeTestArgs(TypedDict):
    """An `nvidia-smi` Job per GPU pool after deploy (`gpuplane:smokeTest`)."""

    enabled: NotRequired[bool]
    """Create the Jobs (off by default)."""
    image: NotRequired[str]
    """A CUDA base image with `nvidia-smi`."""


class HealthArgs(TypedDict):
    """GPU fault detection and node repair (`gpuplane:health`, docs/health.md)."""

    detection: NotRequired[bool]
    """EKS: install the node monitoring agent add-on, which sets `AcceleratedHardwareReady` (default true)."""
    repair: NotRequired[bool]
    """Replace failed nodes: node groups' `nodeRepairConfig`, Karpenter's `nodeRepair` gate (default true)."""
    max_parallel_repairs: NotRequired[int]
    """Managed node groups: nodes repaired at once (default 1)."""
    max_unhealthy_percent: NotRequired[int]
    """Managed node groups: stop repairing above this share unhealthy (unset: EKS's default, 20% of groups over 5
    nodes)."""


class ValidationArgs(TypedDict):
    """Post-deploy checks per GPU pool (`gpuplane:validation`): GPUs visible, DCGM diagnostics, NCCL."""

    enabled: NotRequired[bool]
    """Create the checks' Jobs (off by default)."""
    image: NotRequired[str]
    """A CUDA base image with `nvidia-smi`."""
    dcgm_image: NotRequired[str]
    """An image with `dcgmi`."""
    diagnostics: NotRequired[bool]
    """Run `dcgmi diag -r 1` on one node of each pool (default true)."""
    nccl: NotRequired[bool]
    """Run an NCCL all-reduce on EFA and GPUDirect RDMA pools (default true)."""
    nccl_nodes: NotRequired[int]
    """Nodes the NCCL test spans (default 2)."""
    nccl_min_bus_bandwidth: NotRequired[Mapping[str, float]]
    """Pool -> bus bandwidth floor (GB/s) where the catalog cites none, or to hold one higher."""


class MonitoringArgs(TypedDict):
    """GPU metrics settings (`gpuplane:monitoring`). Plain values."""

    integration: NotRequired[MonitoringIntegration]
    """How metrics reach Prometheus (default scrape-config)."""
    prometheus_operator_crds: NotRequired[CrdSource]
    """Whether gpuplane installs the prometheus-operator CRDs (default install) or the cluster has them."""
    namespace: NotRequired[str]
    """Namespace of a standalone dcgm-exporter (default `gpu-monitoring`)."""
    scrape_interval: NotRequired[str]
    """Scrape interval of the `gpu-metrics` job (default `15s`)."""
    scrape_timeout: NotRequired[str]
    """Scrape timeout, at most the interval (default `10s`)."""
    selector_labels: NotRequired[Mapping[str, str]]
    """Labels your Prometheus selects ServiceMonitors and PrometheusRules by (default `release:
    kube-prometheus-stack`)."""
    install_namespace: NotRequired[str]
    """Namespace for kube-prometheus-stack (`install`; default `monitoring`)."""
    idle_window: NotRequired[str]
    """How long an allocated GPU may stay idle before `GpuAllocatedButIdle` fires (default `30m`)."""
    idle_percent: NotRequired[float]
    """Utilisation (%) under which an allocated GPU counts as idle (default 5)."""
    temperature_celsius: NotRequired[float]
    """`GpuTemperatureHigh` threshold (default 85)."""
    memory_ratio: NotRequired[float]
    """`GpuMemoryNearlyFull` threshold, used / total framebuffer (default 0.95)."""


class GpuMonitoringArgs(TypedDict):
    """Arguments of `GpuMonitoring`: which exporter to scrape, on which cluster, and how."""

    cluster: pulumi.Input[str]
    """Cluster name: the `cluster` label on every series (and kube-prometheus-stack's external label). Or
    your cluster object (`pulumi_eks.Cluster`, `aws.eks.Cluster`, `gcp.container.Cluster`): its name, its
    region (unless `region`), and a Kubernetes provider on it made here (`{name}-k8s`) unless `opts` give one."""
    exporter: NotRequired[MonitoredExporter]
    """The exporter to scrape (default dcgm-exporter)."""
    exporter_namespace: NotRequired[pulumi.Input[str]]
    """The exporter's namespace, e.g. `DcgmExporter(...).namespace` or `GpuOperator(...).namespace`; unset:
    `monitoring.namespace` for dcgm-exporter, `gpu-operator` for the operator's, `kube-system` for GKE's
    device plugin."""
    region: NotRequired[pulumi.Input[str]]
    """Region label on every series; unset: no region label."""
    monitoring: NotRequired[MonitoringArgs]
    """Integration, scrape settings, selector labels and alert thresholds."""
    system_node_selector: NotRequired[Mapping[str, str]]
    """Node selector for kube-prometheus-stack's pods (`install`); default gpuplane's system nodes
    (`gpuplane.io/role: system`)."""
    gpu_prices: NotRequired[Sequence[GpuPriceArgs]]
    """Each pool's price: adds the GPU cost recording rules (cost per pod, namespace and pool; of unallocated,
    empty and held-but-idle GPUs). They need kube-state-metrics with the node labels allowed (`gpu_cost`)."""


class AuthorizedNetworkArgs(TypedDict):
    """A CIDR block allowed to reach the cluster's Kubernetes API endpoint."""

    cidr_block: str
    """IPv4 CIDR block, e.g. `203.0.113.0/24`."""
    display_name: NotRequired[str]
    """Label shown in the GKE console."""


class GcpArgs(TypedDict):
    """Where a GKE cluster lives and who can reach it (`gpuplane:gcp`)."""

    project: pulumi.Input[str]
    """GCP project ID (may be an Output, e.g. another stack's)."""
    region: str
    """Region of the cluster, e.g. `us-central1` (plain: it picks the zones that offer each GPU)."""
    zones: NotRequired[Sequence[str]]
    """Zones for nodes; unset: the GPU catalog's zones of the region."""
    network: NotRequired[pulumi.Input[str]]
    """VPC network name or self link (may be an Output); unset: `default`."""
    subnetwork: NotRequired[pulumi.Input[str]]
    """Subnetwork name or self link (may be an Output); unset: the network's subnet in the region."""
    private_nodes: NotRequired[bool]
    """Nodes get internal IPs only (default on; egress through Cloud NAT)."""
    cloud_nat: NotRequired[bool]
    """With private nodes, create a Cloud Router and NAT (default on)."""
    private_endpoint: NotRequired[bool]
    """Serve the API on the control plane's internal IP only (default off; needs private nodes)."""
    authorized_networks: NotRequired[Sequence[AuthorizedNetworkArgs]]
    """CIDR blocks allowed to reach the API endpoint: where `pulumi up` and kubectl run. Default none: no
    outside address reaches the public endpoint (`[{"cidr_block": "0.0.0.0/0"}]` opens it to the internet)."""
    multi_networking: NotRequired[bool]
    """GKE multi-networking on dataplane V2, which `network: gpudirect` pools need; decide it when the cluster
    is created (changing it later replaces the cluster)."""


class AutoProvisioningArgs(TypedDict):
    """GKE node auto-provisioning limits (`gpuplane:autoProvisioning`, kind `gke-nap`)."""

    cpu_max: NotRequired[int]
    """Cluster-wide vCPU ceiling (default 1000)."""
    memory_gb_max: NotRequired[int]
    """Cluster-wide memory ceiling in GB (default 10000)."""
    locations: NotRequired[Sequence[str]]
    """Zones NAP may create node pools in; unset: the cluster's zones."""
    profile: NotRequired[AutoscalingProfile]
    """Autoscaling profile (default OPTIMIZE_UTILIZATION)."""
    disk_size_gb: NotRequired[int]
    """Boot disk of auto-provisioned nodes (default 200)."""


class AwsArgs(TypedDict):
    """Where an EKS cluster lives and who administers it (`gpuplane:aws`)."""

    region: str
    """AWS region, e.g. `us-east-1` (plain)."""
    vpc_id: NotRequired[pulumi.Input[str]]
    """An existing VPC (may be an Output, e.g. a VPC stack's); unset: gpuplane creates one."""
    private_subnet_ids: NotRequired[pulumi.Input[Sequence[str]]]
    """The existing VPC's private subnets, at least 2 (the list or its items may be Outputs)."""
    public_subnet_ids: NotRequired[pulumi.Input[Sequence[str]]]
    """The existing VPC's public subnets (optional; the list or its items may be Outputs)."""
    node_subnet_ids: NotRequired[Sequence[str]]
    """The existing VPC's private subnets for GPU node groups only (e.g. a Local Zone's, for P6e-GB200): never
    the cluster's or the system pool's; a pool whose reservation is in their Local Zone uses them (eks-managed;
    plain)."""
    vpc_cidr: NotRequired[str]
    """CIDR of the VPC gpuplane creates (default `10.0.0.0/16`)."""
    availability_zones: NotRequired[int]
    """How many AZs the created VPC spans (default 3)."""
    single_nat_gateway: NotRequired[bool]
    """One NAT gateway for all private subnets (default on)."""
    admins: NotRequired[Sequence[pulumi.Input[str]]]
    """IAM role/user ARNs granted cluster-admin (each may be an Output; the list itself is plain)."""
    endpoint_public_access: NotRequired[bool]
    """Expose the Kubernetes API endpoint publicly; unset: public exactly when `public_access_cidrs` lists some."""
    public_access_cidrs: NotRequired[Sequence[str]]
    """CIDRs allowed to reach the public API endpoint (default none: private endpoint only)."""
    ssm_access: NotRequired[bool]
    """Attach `AmazonSSMManagedInstanceCore` to node roles (default off)."""
    secrets_kms_key_arn: NotRequired[pulumi.Input[str]]
    """KMS key for Kubernetes secrets (may be an Output); unset: one is created."""


VERBATIM = frozenset(
    {
        "labels",
        "stores",  # a Deployment's store -> mount path (the storage section's `stores` is a list: converted as usual)
        "selector_labels",
        "quota",
        "discovery_tags",
        "system_node_selector",
        "nccl_min_bus_bandwidth",
        "pod_labels",
        "served_by",
    }
)
"""Arg keys whose value is a map of user keys (labels), passed on as given."""


def to_config(value: Any) -> Any:
    """Args (snake_case keys, enums) as a stack-config document (camelCase keys, enum values); `gpu_pools`
    entries through `pool_config` (its key renames)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == "gpu_pools":
                out["gpuPools"] = [pool_config(p) for p in v]
            elif k in VERBATIM and isinstance(v, Mapping):
                out[camel(k)] = dict(v)
            else:
                out[camel(k)] = to_config(v)
        return out
    if isinstance(value, list | tuple):
        return [to_config(v) for v in value]
    return value


SECTIONS = {
    "gpuPools": "gpu_pools",
    "autoProvisioning": "auto_provisioning",
    "smokeTest": "smoke_test",
    "platform": "kind",
}
"""Stack-config sections whose arg name is not the snake_case of theirs (for error paths)."""


ARN_TEMPLATE = "arn:aws:iam::000000000000:role/gpuplane-arg-{}z"
KMS_TEMPLATE = "arn:aws:kms:us-east-1:000000000000:key/00000000-0000-0000-0000-0000000000{}"
DEFERRABLE: Mapping[tuple[str, str], tuple[str, str]] = {
    ("gcp", "project"): ("value", "gpuplane-arg-{}z"),
    ("gcp", "network"): ("value", "gpuplane-arg-{}z"),
    ("gcp", "subnetwork"): ("value", "gpuplane-arg-{}z"),
    ("aws", "vpc_id"): ("value", "vpc-0aaaaaaa{}f"),
    ("aws", "private_subnet_ids"): ("list", "subnet-gpuplanearg{}z"),
    ("aws", "public_subnet_ids"): ("list", "subnet-gpuplanearg{}z"),
    ("aws", "admins"): ("items", ARN_TEMPLATE),
    ("aws", "secrets_kms_key_arn"): ("value", KMS_TEMPLATE),
}
"""(section, arg) -> how it may be an Output (`value`; `list`: the list or its items; `items`: its items only,
the list's length decides how many resources exist) and the stand-in the config model accepts."""

PLAIN = "must be a plain value, not an Output (it decides which resources exist or names them)"


def unknown_paths(value: Any, path: str = "") -> list[str]:
    """Argument paths of Outputs (or awaitables) inside `value`."""
    if isinstance(value, pulumi.Output) or hasattr(value, "__await__"):
        return [path]
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in unknown_paths(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in unknown_paths(v, f"{path}[{i}]")]
    return []


def _without(value: Any, paths: set[str], path: str = "") -> Any:
    """`value` without the entries at `paths`."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            p = f"{path}.{k}" if path else str(k)
            if p not in paths:
                out[k] = _without(v, paths, p)
        return out
    if isinstance(value, list | tuple):
        return [_without(v, paths, f"{path}[{i}]") for i, v in enumerate(value) if f"{path}[{i}]" not in paths]
    return value


def platform_config(
    where: str, kinds: Sequence[str], args: Mapping[str, Any], cls: Any = None
) -> tuple[StackConfig, Deferred]:
    """Validate a platform's args as its stack config: `(StackConfig, Deferred)`. Output args that may be
    Outputs are deferred (see `gpuplane.args.deferred`); any other Output, a kind outside `kinds`, keys the
    platform's args TypedDict `cls` does not declare (named with its keys, not the stack config's) and
    every config problem come back together in one `ArgsError`, argument paths first."""
    deferred = Deferred()
    doc = {k: v for k, v in args.items() if k != "kind"}
    for (section, key), (how, template) in DEFERRABLE.items():
        sec = doc.get(section)
        if not isinstance(sec, Mapping) or sec.get(key) is None:
            continue
        value = sec[key]
        if how == "value":
            value = deferred.value(value, template)
        elif how == "list" or isinstance(value, list | tuple):
            value = deferred.items(value, template)
        doc[section] = {**sec, key: value}
    kind = args.get("kind", kinds[0])
    problems = [(p, PLAIN) for p in unknown_paths(doc)]
    if cls is not None:
        # `platform` is said below, with what to write instead; `kind` is checked against `kinds` below (a
        # one-kind platform, Autopilot, declares none but accepts its own)
        shaped_as = {k: v for k, v in args.items() if k not in ("platform", "kind")}
        problems += [(p, r) for p, r in shape_problems(shaped_as, cls) if r.startswith("unknown argument")]
    if "platform" in doc:  # the stack key; a component's platform is its `kind` (it would override it)
        problems.append(("platform", f"unknown argument: give the platform as `kind` (one of {list(kinds)})"))
        doc = {k: v for k, v in doc.items() if k != "platform"}
    if str(to_config(kind)) not in kinds:
        problems.insert(0, ("kind", f"{to_config(kind)!r} is not one of {list(kinds)}"))
        kind = kinds[0]
    bad = {p for p, _ in problems}
    try:
        cfg = check(where, {"platform": to_config(kind), **to_config(_without(doc, bad))}, SECTIONS)
    except ArgsError as exc:
        problems += [(p, r) for p, r in exc.problems if not any(p == b or p.startswith(b + ".") for b in bad)]
    if problems:
        raise ArgsError(where, problems)
    return cfg, deferred
