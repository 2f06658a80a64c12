"""The guardrails: which resources each applies to, and what it reports.

Each rule is two pure functions of (type token, engine-format props[, policy config]): `applies` says
whether the rule examines the resource at all (so tests can count what a rule looked at), `check`
returns the violation messages. `Rule.validate` is the CrossGuard validate function built from them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from .gpu import GPU_TAINT_KEY, KARPENTER_GPU_LIMIT, repels_non_gpu_pods, tolerates_gpu_taint
from .props import first, get, has, items, number, show
from .resources import (
    DAEMON_SET,
    EC2_INSTANCE,
    EC2_NODE_CLASSES,
    EKS_MANAGED_NODE_GROUP,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    KARPENTER_NODE_POOLS,
    LAUNCH_TEMPLATE,
    containers,
    gpu_node_targeting,
    gpu_pool,
    gpu_resources,
    is_nap_cluster,
    pod_spec,
    requests_gpu,
)

Props = Mapping[str, Any]
Config = Mapping[str, Any]

MAX_GPU_NODES = "maxGpuNodesPerPool"
"""Policy config of `gpu-autoscaling-bounded`: the most nodes one GPU node pool or node group may reach."""

EKS_GROUPS = (EKS_NODE_GROUP, EKS_MANAGED_NODE_GROUP)


@dataclass(frozen=True)
class Rule:
    """One policy: a name, a description, an enforcement level and the two pure functions."""

    name: str
    description: str
    enforcement_level: EnforcementLevel
    applies: Callable[[str, Props], bool]
    check: Callable[[str, Props, Config], list[str]]
    config_schema: PolicyConfigSchema | None = field(default=None)

    def validate(self, args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        """The CrossGuard validate function: report each message of `check` on an examined resource."""
        if not self.applies(args.resource_type, args.props):
            return
        for message in self.check(args.resource_type, args.props, args.get_config()):
            report_violation(message, None)

    def policy(self) -> ResourceValidationPolicy:
        return ResourceValidationPolicy(
            name=self.name,
            description=self.description,
            validate=self.validate,
            enforcement_level=self.enforcement_level,
            config_schema=self.config_schema,
        )


# --- GPU node pools are tainted --------------------------------------------------------------------


def _is_gpu_pool(resource_type: str, props: Props) -> bool:
    return gpu_pool(resource_type, props) is not None


def check_gpu_pool_tainted(resource_type: str, props: Props, config: Config) -> list[str]:
    pool = gpu_pool(resource_type, props)
    if pool is None or repels_non_gpu_pods(pool.taints):
        return []
    return [
        f"{pool.kind} has GPUs but no `{GPU_TAINT_KEY}` taint with effect NoSchedule: pods that request no GPU "
        "can land on its nodes and keep them from scaling down"
    ]


# --- GPU node pools can scale to zero --------------------------------------------------------------


def _gke_autoscaled(props: Props) -> bool:
    scaling = get(props, "autoscaling")
    return any(has(scaling, k) for k in ("minNodeCount", "maxNodeCount", "totalMinNodeCount", "totalMaxNodeCount"))


def _gke_fixed_size(props: Props) -> float | None:
    found = first(props, "nodeCount", "initialNodeCount")
    return number(found[1]) if found else None


def _scales_to_zero_applies(resource_type: str, props: Props) -> bool:
    return resource_type in (GKE_NODE_POOL, *EKS_GROUPS) and _is_gpu_pool(resource_type, props)


def check_gpu_pool_scales_to_zero(resource_type: str, props: Props, config: Config) -> list[str]:
    if resource_type == GKE_NODE_POOL:
        if not _gke_autoscaled(props):
            size = _gke_fixed_size(props)
            if size == 0:
                return []
            what = f"{show(size)} node(s) per zone" if size is not None else "the default size"
            return [
                f"GPU node pool has no autoscaling and keeps {what}: it cannot scale to zero; "
                "set autoscaling with totalMinNodeCount 0"
            ]
        found = first(get(props, "autoscaling"), "totalMinNodeCount", "minNodeCount")
        low = number(found[1]) if found else None
        if found and low is not None and low > 0:
            return [f"GPU node pool autoscaling keeps at least {show(low)} node(s) ({found[0]}): cannot scale to zero"]
        return []
    raw = get(props, "scalingConfig", "minSize")
    low = 1.0 if raw is None and resource_type == EKS_MANAGED_NODE_GROUP else number(raw)  # pulumi-eks default
    if low is None:
        return ["GPU node group sets no scalingConfig.minSize: it cannot scale to zero"]
    if low > 0:
        return [f"GPU node group keeps at least {show(low)} node(s) (scalingConfig.minSize): it cannot scale to zero"]
    return []


# --- GPU autoscaling is bounded --------------------------------------------------------------------


def _cap(config: Config) -> float | None:
    return number(config.get(MAX_GPU_NODES)) if config else None


def _over_cap(nodes: float, what: str, config: Config) -> list[str]:
    cap = _cap(config)
    if cap is not None and nodes > cap:
        return [f"{what} may reach {show(nodes)} nodes, more than {MAX_GPU_NODES} ({show(cap)})"]
    return []


def _bounded_applies(resource_type: str, props: Props) -> bool:
    return _is_gpu_pool(resource_type, props) or is_nap_cluster(resource_type, props)


def _check_gke_pool_bounded(props: Props, config: Config) -> list[str]:
    zones = len(items(get(props, "nodeLocations"))) or 1
    if not _gke_autoscaled(props):
        size = _gke_fixed_size(props)
        return _over_cap(size * zones, "GPU node pool", config) if size else []
    scaling = get(props, "autoscaling")
    total = number(get(scaling, "totalMaxNodeCount"))
    per_zone = number(get(scaling, "maxNodeCount"))
    if total is None and per_zone is None:
        return ["GPU node pool autoscaling sets no totalMaxNodeCount or maxNodeCount: its growth is unbounded"]
    nodes = total if total is not None else (per_zone or 0.0) * zones
    return _over_cap(nodes, "GPU node pool", config)


def _check_eks_group_bounded(resource_type: str, props: Props, config: Config) -> list[str]:
    raw = get(props, "scalingConfig", "maxSize")
    high = 2.0 if raw is None and resource_type == EKS_MANAGED_NODE_GROUP else number(raw)  # pulumi-eks default
    if high is None:
        return ["GPU node group sets no scalingConfig.maxSize: its growth is unbounded"]
    return _over_cap(high, "GPU node group", config)


def _check_karpenter_pool_bounded(props: Props) -> list[str]:
    if has(get(props, "spec", "limits"), KARPENTER_GPU_LIMIT):
        return []
    return [
        f"GPU NodePool has no `{KARPENTER_GPU_LIMIT}` entry in spec.limits: Karpenter may launch GPU nodes "
        "without bound"
    ]


def _check_nap_bounded(props: Props) -> list[str]:
    out = []
    for limit in items(get(props, "clusterAutoscaling", "resourceLimits")):
        kind = str(get(limit, "resourceType") or "")
        if kind.startswith("nvidia-") and number(get(limit, "maximum")) is None:
            out.append(f"node auto-provisioning limit for {kind} has no maximum: GPU auto-provisioning is unbounded")
    return out


def check_gpu_autoscaling_bounded(resource_type: str, props: Props, config: Config) -> list[str]:
    """GKE node pools and EKS node groups need a maximum size (at most `maxGpuNodesPerPool` nodes when set);
    Karpenter NodePools a GPU limit; GKE node auto-provisioning a maximum for every GPU type it may
    create. A NAP cluster with no GPU resource limit is fine: NAP creates GPU nodes only for GPU types
    that have one. GKE Autopilot clusters are out of scope: they take no resource limits."""
    if resource_type == GKE_NODE_POOL:
        return _check_gke_pool_bounded(props, config)
    if resource_type in EKS_GROUPS:
        return _check_eks_group_bounded(resource_type, props, config)
    if resource_type in KARPENTER_NODE_POOLS:
        return _check_karpenter_pool_bounded(props)
    return _check_nap_bounded(props)


# --- IMDSv2 ----------------------------------------------------------------------------------------


def _imds_applies(resource_type: str, props: Props) -> bool:
    return resource_type in (LAUNCH_TEMPLATE, EC2_INSTANCE, *EKS_GROUPS) or resource_type in EC2_NODE_CLASSES


def _metadata_options(what: str, options: Any) -> list[str]:
    if get(options, "httpEndpoint") == "disabled":
        return []  # no metadata service at all
    tokens = get(options, "httpTokens")
    if tokens == "required":
        return []
    if tokens is None:
        return [
            f"{what} does not set metadataOptions.httpTokens: instances take the AMI's or the account's default, "
            'which may allow IMDSv1; set it to "required"'
        ]
    return [f'{what} allows IMDSv1 (metadataOptions.httpTokens is "{tokens}"); set it to "required"']


def check_imdsv2(resource_type: str, props: Props, config: Config) -> list[str]:
    if resource_type == LAUNCH_TEMPLATE:
        return _metadata_options("launch template", get(props, "metadataOptions"))
    if resource_type == EC2_INSTANCE:
        return _metadata_options("instance", get(props, "metadataOptions"))
    if resource_type in EC2_NODE_CLASSES:
        options = get(props, "spec", "metadataOptions")
        if get(options, "httpEndpoint") != "disabled" and get(options, "httpTokens") == "optional":
            return ['EC2NodeClass allows IMDSv1 (spec.metadataOptions.httpTokens is "optional"); set it to "required"']
        return []  # Karpenter defaults to "required"
    # EKS node groups: the launch template carries the metadata options (and is checked itself).
    if has(props, "launchTemplate"):
        return []
    if resource_type == EKS_MANAGED_NODE_GROUP and has(props, "enableIMDSv2"):
        if get(props, "enableIMDSv2") is True:
            return []  # pulumi-eks makes a launch template with httpTokens "required"
        return ["node group sets enableIMDSv2 false: its nodes accept IMDSv1"]
    return [
        "node group has no launch template, so its nodes take the default metadata options, which may allow "
        'IMDSv1; attach a launch template with metadataOptions.httpTokens "required"'
    ]


# --- GPU pods --------------------------------------------------------------------------------------


def _gpu_pod_applies(resource_type: str, props: Props) -> bool:
    spec = pod_spec(resource_type, props)
    return spec is not None and bool(requests_gpu(spec))


def _quantity(value: Any) -> str:
    n = number(value)
    return show(n) if n is not None else str(value)


def check_gpu_limits(resource_type: str, props: Props, config: Config) -> list[str]:
    spec = pod_spec(resource_type, props)
    out: list[str] = []
    for c in containers(spec or {}):
        name = get(c, "name") or "?"
        requests, limits = gpu_resources(c, "requests"), gpu_resources(c, "limits")
        for res, amount in sorted(requests.items()):
            if res not in limits:
                out.append(
                    f"container '{name}' requests {res} but does not set it in resources.limits: "
                    "extended resources such as GPUs must be declared as limits"
                )
            elif number(amount) != number(limits[res]):
                out.append(
                    f"container '{name}' requests {_quantity(amount)} {res} but limits it to {_quantity(limits[res])}: "
                    "requests and limits of a GPU must be equal"
                )
    return out


def check_gpu_toleration(resource_type: str, props: Props, config: Config) -> list[str]:
    spec = pod_spec(resource_type, props)
    if spec is None or tolerates_gpu_taint(get(spec, "tolerations")):
        return []
    return [
        f"pod requests {', '.join(requests_gpu(spec))} but has no toleration for the `{GPU_TAINT_KEY}` taint "
        "(NoSchedule): it stays Pending on tainted GPU nodes"
    ]


def _pinned_applies(resource_type: str, props: Props) -> bool:
    if resource_type == DAEMON_SET:
        return False  # node agents (device plugin, DCGM exporter) run on GPU nodes without requesting GPUs
    spec = pod_spec(resource_type, props)
    return spec is not None and gpu_node_targeting(spec) is not None


def check_pinned_pod_requests_gpu(resource_type: str, props: Props, config: Config) -> list[str]:
    spec = pod_spec(resource_type, props)
    # A pod with `resourceClaims` takes its devices through DRA (its GPUs are claimed, not counted).
    if spec is None or requests_gpu(spec) or get(spec, "resourceClaims"):
        return []
    return [
        f"pod is pinned to GPU nodes ({gpu_node_targeting(spec)}) but requests no GPU: it holds a GPU node "
        "without using its GPU"
    ]


# --- The pack --------------------------------------------------------------------------------------

MANDATORY, ADVISORY = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY

RULES: tuple[Rule, ...] = (
    Rule(
        "gpu-node-pool-tainted",
        "GPU node pools (GKE node pools, EKS node groups, Karpenter and Auto Mode NodePools) carry the "
        "nvidia.com/gpu NoSchedule taint, so only GPU pods land on GPU nodes.",
        MANDATORY,
        _is_gpu_pool,
        check_gpu_pool_tainted,
    ),
    Rule(
        "gpu-node-pool-scales-to-zero",
        "GPU node pools and node groups autoscale down to zero nodes (no minimum, no fixed size).",
        MANDATORY,
        _scales_to_zero_applies,
        check_gpu_pool_scales_to_zero,
    ),
    Rule(
        "gpu-autoscaling-bounded",
        "GPU autoscaling has a ceiling: node pools and node groups a maximum size, Karpenter NodePools an "
        "nvidia.com/gpu limit, GKE node auto-provisioning a maximum for every GPU type.",
        MANDATORY,
        _bounded_applies,
        check_gpu_autoscaling_bounded,
        PolicyConfigSchema(
            properties={
                MAX_GPU_NODES: {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Most nodes one GPU node pool or node group may reach (GKE: across its zones).",
                }
            }
        ),
    ),
    Rule(
        "imdsv2-required",
        "EC2 instances, launch templates, EKS node groups and Karpenter EC2NodeClasses require IMDSv2.",
        MANDATORY,
        _imds_applies,
        check_imdsv2,
    ),
    Rule(
        "gpu-pod-declares-limits",
        "Containers that request nvidia.com/gpu (or a MIG or shared GPU resource) declare it in resources.limits.",
        MANDATORY,
        _gpu_pod_applies,
        check_gpu_limits,
    ),
    Rule(
        "gpu-pod-tolerates-gpu-taint",
        "Pods that request a GPU tolerate the nvidia.com/gpu taint.",
        MANDATORY,
        _gpu_pod_applies,
        check_gpu_toleration,
    ),
    Rule(
        "gpu-nodes-only-for-gpu-pods",
        "Pods pinned to GPU nodes (nodeSelector or required node affinity on GPU labels) request a GPU; "
        "DaemonSets are exempt.",
        ADVISORY,
        _pinned_applies,
        check_pinned_pod_requests_gpu,
    ),
)

RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
POLICIES: list[ResourceValidationPolicy] = [r.policy() for r in RULES]
