"""Upgrade safety: a change that would rename (and so replace) a live resource fails here first.

- tests/golden/<stack>/urns.txt lists every resource's URN. A renamed URN means Pulumi deletes the old
  resource and creates a new one; accept it only with an `aliases=[...]` for the old name, then
  regenerate with GPUPLANE_UPDATE_GOLDEN=1.
- Adding or removing a pool, or toggling monitoring or GPU sharing, must leave every other resource's
  URN and inputs alone (Hypothesis over the shipped single-cluster stacks).
- A holder's allowed changes must not replace a cluster or node pool (the replacement table,
  components/gpuplane/plan/replacement.py, decides: e.g. NAP's clusterAutoscaling and GKE's monitoringConfig update
  in place).
- Clusters honour `protect`/`retainOnDelete`, and GKE/EKS deletion protection is on by default.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.catalog import GPUS, PLATFORMS, gpus_on
from gpuplane.config import ConfigError, parse_config
from gpuplane.plan import Plan, PlannedResource, load
from gpuplane.plan.diff import changed_paths
from gpuplane.plan.replacement import classify, covers
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT, SINGLE, STACKS, cached_plan, examples, golden, session_cache, stack_with, without_pool

CLUSTERS = {"gcp:container/cluster:Cluster", "eks:index:Cluster", "aws:kms/key:Key"}
NODE_POOLS = {
    "gcp:container/nodePool:NodePool",
    "eks:index:ManagedNodeGroup",
    "aws:eks/nodeGroup:NodeGroup",
    "kubernetes:karpenter.sh/v1:NodePool",
}
MUST_NOT_REPLACE = (CLUSTERS - {"aws:kms/key:Key"}) | NODE_POOLS
"""Types a routine change must never replace (clusters and node pools)."""


@pytest.mark.parametrize("stack", STACKS)
def test_urns_are_golden(stack: str, plan_of: Callable[..., Plan]) -> None:
    urns = [r.urn for r in plan_of(stack).resources]
    assert len(set(urns)) == len(urns)
    golden(f"{stack}/urns.txt", "".join(f"{u}\n" for u in urns))


def index(plan: Plan) -> dict[str, Any]:
    return {r.urn: r.inputs for r in plan.resources}


def raw_of(config: dict[str, Any]) -> dict[str, Any]:
    return {k.removeprefix("gpuplane:"): v for k, v in config.items()}


def valid(config: dict[str, Any]) -> bool:
    try:
        parse_config(raw_of(config))
    except ConfigError:
        return False
    return True


def sharing_options(gpu: str, strategies: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every sharing setting to try on a pool of `gpu` (MIG profiles from the catalog)."""
    out: list[dict[str, Any]] = [{"strategy": s, "replicas": 4} for s in strategies if s != "mig"]
    if "mig" in strategies:
        out += [{"strategy": "mig", "migProfile": p} for p in GPUS[gpu].mig_profiles]
    return out


@session_cache
def pool_candidates(stack: str) -> list[dict[str, Any]]:
    """Pools that could be added to this stack (any GPU of its cloud, spot or not, with or without each
    sharing setting), kept only where the stack config accepts them."""
    config = load(stack, ROOT).config
    platform = PLATFORMS[config["gpuplane:platform"]]
    out = []
    for gpu in gpus_on(platform.cloud):
        for spot in (False, True):
            for sharing in [None, *sharing_options(gpu, platform.sharing)]:
                pool: dict[str, Any] = {"name": "extra", "gpu": gpu, "spot": spot, "maxNodes": 2}
                if sharing:
                    pool["sharing"] = sharing
                if valid({**config, "gpuplane:gpuPools": [*config["gpuplane:gpuPools"], pool]}):
                    out.append(pool)
    return out


@session_cache
def sharing_candidates(stack: str) -> list[tuple[int, dict[str, Any]]]:
    """(pool index, sharing) pairs this stack accepts, each pool's current sharing removed first."""
    config = load(stack, ROOT).config
    platform = PLATFORMS[config["gpuplane:platform"]]
    out = []
    for i, pool in enumerate(config["gpuplane:gpuPools"]):
        for sharing in sharing_options(GPUS[pool["gpu"]].name, platform.sharing):
            pools = copy.deepcopy(config["gpuplane:gpuPools"])
            pools[i]["sharing"] = sharing
            if valid({**config, "gpuplane:gpuPools": pools}):
                out.append((i, sharing))
    return out


def owned_by_pool(plan: Plan, pool: str) -> set[str]:
    """URNs a pool owns: those with `-<pool>` in their name, and Kubernetes objects (an EC2NodeClass of
    its disk size) that only those reference by name."""

    def named(urn: str) -> bool:
        return f"-{pool}-" in f"{urn.rsplit('::', 1)[1]}-"

    owned = {r.urn for r in plan.resources if named(r.urn)}
    text_owned = " ".join(str(r.inputs) for r in plan.resources if r.urn in owned)
    text_rest = " ".join(str(r.inputs) for r in plan.resources if r.urn not in owned)
    for r in plan.resources:
        name = r.inputs.get("metadata", {}).get("name") if isinstance(r.inputs.get("metadata"), dict) else None
        if r.urn not in owned and name and f"'{name}'" in text_owned and text_rest.count(f"'{name}'") == 1:
            owned.add(r.urn)  # referenced by the pool's own objects, and otherwise only by itself
    return owned


# Resources whose inputs legitimately hold every pool's (or class's) settings, per change: the input keys
# that may differ. NAP's GPU classes are the cluster's `clusterAutoscaling`; one device-plugin ConfigMap
# holds every pool's sharing config; GKE Managed Prometheus and managed DCGM are `monitoringConfig`.
QUOTAS = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
"""A team's ClusterQueue holds its quota on every pool (with a cohort, 0 on pools it has none of), and a
pool's resource name follows its sharing: its `spec` changes in place with any pool or sharing change."""

PRICED = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
"""The GPU rules hold every pool's price, node selection and units per GPU (the cost rules, docs/cost.md): their
`spec` changes in place with any pool or sharing change; so do kube-state-metrics' allowed node labels (`values`
of kube-prometheus-stack) when a pool brings a new label key."""

HOLDERS: dict[str, Callable[[str, PlannedResource], frozenset[str]]] = {
    "pool": lambda platform, r: (
        frozenset({"spec"})
        if r.type in (QUOTAS, PRICED)
        else frozenset({"values"})
        if r.name.endswith("-kube-prometheus-stack")
        else frozenset({"clusterAutoscaling"})
        if platform == "gke-nap" and r.type == "gcp:container/cluster:Cluster"
        else frozenset({"data"})
        if r.name.endswith("-device-plugin-config")
        else frozenset({"values"})  # its instance types and tolerations are every EFA pool's
        if r.name.endswith("-efa-device-plugin")
        else frozenset({"values"})  # its GPU-claim and ComputeDomain switches and tolerations are every served pool's
        if r.name.endswith("-dra-driver-release")
        else frozenset()
    ),
    "sharing": lambda platform, r: (
        frozenset({"data"})
        if r.name.endswith("-device-plugin-config")
        else frozenset({"spec"})
        if r.type in (QUOTAS, PRICED)
        else frozenset({"values"})
        if r.name.endswith("-kube-prometheus-stack")
        else frozenset({"spec"})  # an autoscaled Deployment is placed on its pool: its sharing labels and resource
        if r.type == "kubernetes:apps/v1:Deployment" and AUTOSCALER in r.urn
        else frozenset()
    ),
    "monitoring": lambda platform, r: (
        frozenset({"monitoringConfig"})
        if r.type == "gcp:container/cluster:Cluster"
        else frozenset({"spec"})  # a ScaledObject's query and address follow the integration's labels and Prometheus
        if r.type == SCALED_OBJECT
        else frozenset({"values"})  # KEDA's operator gets a Google identity while it queries GKE Managed Prometheus
        if r.name.endswith("-keda-release")
        else frozenset()
    ),
}
AUTOSCALER = "gpuplane:autoscaling:GpuAutoscaler"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
SERVING_SCRAPES = ("PodMonitor", "PodMonitoring", "TriggerAuthentication")
"""An autoscaler's scrape of its serving pods is the integration's kind (PodMonitor, PodMonitoring, a job) and KEDA
signs in to GKE Managed Prometheus only: they come and go with the monitoring integration (docs/autoscaling.md)."""


def autoscaling_owned(plan: Plan, config: dict[str, Any], kind: str, pool: str) -> set[str]:
    """What a change of `kind` about `pool` owns of the autoscaling: for a pool, the Deployments on it with their
    namespaces, scrapes and ScaledObjects; for the integration, the serving scrapes, TriggerAuthentications and KEDA's
    Google identity. (KEDA itself comes with the first workload and goes with the last: `KIND_AGENTS`.)"""
    if kind == "monitoring":
        return {
            r.urn
            for r in plan.resources
            if (AUTOSCALER in r.urn and r.type.rsplit(":", 1)[-1] in SERVING_SCRAPES)
            or r.name.endswith(("-keda-identity", "-keda-monitoring-viewer", "-keda-workload-identity"))
        }
    workloads = (config.get("gpuplane:autoscaling") or {}).get("workloads") or []
    on_pool = [w for w in workloads if (w.get("deployment") or {}).get("pool") == pool]
    names = {f"-scale-{w['name']}" for w in on_pool} | {f"-{w.get('namespace', 'default')}-namespace" for w in on_pool}
    return {r.urn for r in plan.resources if any(n in r.urn.rsplit("::", 1)[1] + "-" for n in names)}


KIND_AGENTS = (
    "-keda",
    "-keda-namespace",
    "-keda-release",
    "-keda-identity",
    "-keda-monitoring-viewer",
    "-keda-workload-identity",
    "-efa-device-plugin",
    "-nccl-rdma-installer",
    "-nccl-tcpxo-installer",
    "-gpuplane-dws",
    "-dra-driver-namespace",
    "-dra-driver-release",
    "-dra-driver-quota",
    "-dra-driver",
    "-nvidia-driver-installer",
    "-nvidia-driver-installer-a4x",
)
"""Node agents gpuplane installs only while some pool needs them (docs/multi-node.md; the NVIDIA DRA driver and
GKE's driver installer while a pool claims GPUs or spans NVLink domains, docs/gpu-claims.md), and Kueue's DWS
admission check and its ProvisioningRequestConfig, there while some pool is queued (docs/queues.md); KEDA (and its
Google identity), there while some autoscaled Deployment is (docs/autoscaling.md)."""
KIND_OBJECTS = ("-kueue-topology-",)
"""Kueue's Topology, there while some pool's flavor uses it (queued or fixed pools on labelled machines)."""


def changed_elsewhere(
    before: Plan, after: Plan, owned: set[str], holder: Callable[[PlannedResource], frozenset[str]]
) -> list[tuple[str, str]]:
    """URNs of `before` that vanished or whose inputs differ in `after`, outside what the change owns;
    a holder may differ only in its listed input keys."""
    b = index(after)
    out = []
    for r in before.resources:
        if r.urn in owned:
            continue
        if r.urn not in b:
            out.append(("removed", r.urn))
            continue
        allowed = holder(r)
        if {k: v for k, v in r.inputs.items() if k not in allowed} != {
            k: v for k, v in b[r.urn].items() if k not in allowed
        }:
            out.append(("inputs changed", r.urn))
        elif r.type in MUST_NOT_REPLACE and r.inputs != b[r.urn]:
            paths = [p for p in changed_paths(r.inputs, b[r.urn]) if not any(covers(i, p) for i in r.ignore_changes)]
            if any(f.replaces_self for f in classify(r.type, paths, r.inputs, b[r.urn]).values()):
                out.append(("replaced", r.urn))
    return out


KINDS = [
    (stack, kind)
    for stack in SINGLE
    for kind in ("pool", "sharing", "monitoring")
    # (no sharing where the platform has none, or where every pool claims its GPUs through DRA)
    if not (kind == "sharing" and not sharing_candidates(stack))
    and not (kind == "monitoring" and len(PLATFORMS[load(stack, ROOT).config["gpuplane:platform"]].integrations) < 2)
]


@st.composite
def change_of(draw: Any, stack: str, kind: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(smaller config, larger config, subject): the larger has one more pool, a pool's sharing, or another
    monitoring integration. Every change is one the stack accepts (candidates are validated first)."""
    config = copy.deepcopy(load(stack, ROOT).config)
    pools = config["gpuplane:gpuPools"]
    platform = PLATFORMS[config["gpuplane:platform"]]
    if kind == "pool":
        if len(pools) > 1 and draw(st.booleans()):  # remove any existing pool
            i = draw(st.integers(0, len(pools) - 1))
            smaller = without_pool(config, pools[i]["name"])
            assert valid(smaller)
            return smaller, config, pools[i]["name"]
        candidates = pool_candidates(stack)
        assert candidates, f"no pool can be added to {stack}"
        extra = draw(st.sampled_from(candidates))
        return config, {**config, "gpuplane:gpuPools": [*pools, extra]}, extra["name"]
    if kind == "sharing":
        candidates = sharing_candidates(stack)
        assert candidates, f"no pool of {stack} accepts sharing"
        i, sharing = draw(st.sampled_from(candidates))
        plain = copy.deepcopy(pools)
        plain[i].pop("sharing", None)
        shared = copy.deepcopy(plain)
        shared[i]["sharing"] = sharing
        return {**config, "gpuplane:gpuPools": plain}, {**config, "gpuplane:gpuPools": shared}, pools[i]["name"]
    monitoring = config.get("gpuplane:monitoring", {})
    a, b = draw(st.permutations(platform.integrations))[:2]
    return (
        {**config, "gpuplane:monitoring": {**monitoring, "integration": a}},
        {**config, "gpuplane:monitoring": {**monitoring, "integration": b}},
        b,
    )


@pytest.mark.parametrize(("stack", "kind"), KINDS)
@settings(max_examples=examples(6), suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_change_touches_only_what_it_is_about(stack: str, kind: str, data: st.DataObject) -> None:
    smaller, larger, subject = data.draw(change_of(stack, kind))
    base = load(stack, ROOT)
    small = cached_plan(StackFile(project=base.project, stack=base.stack, config=smaller))
    large = cached_plan(StackFile(project=base.project, stack=base.stack, config=larger))
    platform = smaller["gpuplane:platform"]

    def holder(r: PlannedResource) -> frozenset[str]:
        return HOLDERS[kind](platform, r)

    scaled = autoscaling_owned(small, smaller, kind, subject) | autoscaling_owned(large, larger, kind, subject)
    if kind == "monitoring":
        owned = {r.urn for p in (small, large) for r in p.resources if "-monitoring" in r.urn} | scaled
    else:
        owned = owned_by_pool(small, subject) | owned_by_pool(large, subject) | scaled
        # A per-kind node agent (EFA device plugin, NCCL installer) comes with the first pool of its kind and
        # goes with the last: then it belongs to the change.
        owned |= {
            u
            for u in set(index(small)) ^ set(index(large))
            if u.endswith(KIND_AGENTS) or any(k in u for k in KIND_OBJECTS)
        }
    assert changed_elsewhere(small, large, owned, holder) == []
    assert changed_elsewhere(large, small, owned, holder) == []
    # The change did something (Autopilot classes make no resources; NAP/Autopilot sharing is pod-side).
    if kind == "monitoring" or (kind == "pool" and platform != "gke-autopilot"):
        assert index(large) != index(small)


def test_the_stability_check_can_fail() -> None:
    """Renaming the cluster renames every resource: the same check must report it."""
    base = load("gcp-standard", ROOT)
    renamed = copy.deepcopy(base.config)
    renamed["gpuplane:cluster"] = {**renamed["gpuplane:cluster"], "name": "ml-gke2"}
    before = cached_plan(base)
    after = cached_plan(StackFile(project=base.project, stack=base.stack, config=renamed))
    found = changed_elsewhere(before, after, set(), lambda r: frozenset())
    assert ("removed", next(r.urn for r in before.resources if r.type == "gcp:container/cluster:Cluster")) in found


def test_a_holder_change_that_replaces_is_reported() -> None:
    """A holder may change its listed keys only in place: a ForceNew one (the network) is reported, and an
    ignored one (the default pool's nodeConfig, ignored after create) is not."""
    import dataclasses

    before = cached_plan(load("gcp-standard", ROOT))
    (cluster,) = before.by_type("gcp:container/cluster:Cluster")
    node_config = {**cluster.inputs["nodeConfig"], "serviceAccount": "other@acme-ml-prod.iam.gserviceaccount.com"}
    for key, value, found in (("network", "other", [("replaced", cluster.urn)]), ("nodeConfig", node_config, [])):
        moved = dataclasses.replace(cluster, inputs={**cluster.inputs, key: value})
        after = dataclasses.replace(before, resources=[moved if r is cluster else r for r in before.resources])
        assert changed_elsewhere(before, after, set(), lambda r, key=key: frozenset({key})) == found


@pytest.mark.parametrize("stack", SINGLE)
def test_deletion_protection_on_by_default(stack: str, plan_of: Callable[..., Plan]) -> None:
    clusters = [r for r in plan_of(stack).resources if r.type in CLUSTERS - {"aws:kms/key:Key"}]
    assert clusters and all(r.inputs["deletionProtection"] is True for r in clusters)
    assert not any(r.protect or r.retain_on_delete for r in plan_of(stack).resources)


@pytest.mark.parametrize("stack", ["gcp-standard", "gcp-autopilot", "aws-managed", "aws-automode"])
def test_protect_and_retain_on_delete_reach_the_cluster(stack: str, plan_of: Callable[..., Plan]) -> None:
    cluster = {**load(stack, ROOT).config["gpuplane:cluster"], "protect": True, "retainOnDelete": True}
    plan = plan_of(stack_with(stack, cluster=cluster))
    kept = {r.type for r in plan.resources if r.protect and r.retain_on_delete}
    want = {t for t in CLUSTERS if any(r.type == t for r in plan.resources)}
    assert want and kept == want
    for eks_cluster in plan.by_type("eks:index:Cluster"):
        # retainOnDelete does not apply to components: a transform carries both to pulumi-eks's cloud cluster.
        (transform,) = eks_cluster.transforms
        opts = pulumi.ResourceOptions(parent=None)
        child = transform(pulumi.ResourceTransformArgs(True, "aws:eks/cluster:Cluster", "ml-eks-eksCluster", {}, opts))
        assert child is not None and child.opts.protect is True and child.opts.retain_on_delete is True
        other = pulumi.ResourceTransformArgs(True, "aws:iam/role:Role", "ml-eks-eksRole", {}, opts)
        assert transform(other) is None


def test_no_transform_unless_asked(plan_of: Callable[..., Plan]) -> None:
    (eks_cluster,) = plan_of("aws-managed").by_type("eks:index:Cluster")
    assert eks_cluster.transforms == ()
