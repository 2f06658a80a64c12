"""Placement fragments match the pools they target, on every pool of every shipped stack."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuplane.config import ConfigError, namespace_of, parse_config
from gpuplane.config.model import StackConfig
from gpuplane.plan import Plan, load
from gpuplane.scheduling.placement import placement, pod, stack_gpu_nodes

from .conftest import ROOT, STACKS, schema_version, stack_with
from .graph import RELEASE, could_match, kube_objects, node_models, tolerates


def config(stack: str) -> StackConfig:
    return parse_config(namespace_of(load(stack, ROOT).flat_config()))


CASES = [(s, p.name) for s in STACKS for p in config(s).gpuPools]


@pytest.mark.parametrize(("stack", "pool"), CASES)
def test_fragment_lands_on_its_pool_and_no_other(stack: str, pool: str, plan_of: Callable[..., Plan]) -> None:
    from gpuplane.stack.fleet import region_configs

    plan = plan_of(stack)
    models = node_models(plan)
    for _, cfg in region_configs(config(stack)):  # every cluster of a fleet, or the one cluster
        if pool not in {p.name for p in cfg.gpuPools}:
            continue
        fragment = placement(cfg, pool)
        assert all(t["effect"] == "NoSchedule" for t in fragment["tolerations"])
        mine = {k: m for k, m in models.items() if k[0] == cfg.cluster.name}
        if not mine:  # NAP / Autopilot: GKE creates nodes from the pod's own selectors
            auto_provisioned_node_fits(plan, cfg, pool, fragment)
            continue
        labels, taints = mine[(cfg.cluster.name, pool)]
        assert could_match(fragment["affinity"], labels), f"{pool}: affinity not satisfied by its own nodes"
        for taint in taints:
            assert tolerates(fragment["tolerations"], taint), f"{pool}: {taint} not tolerated"
        for (_, other), (other_labels, _) in mine.items():
            if other != pool:
                assert not could_match(fragment["affinity"], other_labels), f"{pool}'s pods could land on {other}"


def auto_provisioned_node_fits(plan: Plan, cfg: StackConfig, pool: str, fragment: dict[str, Any]) -> None:
    """The node GKE would create for the pod: its accelerator is allowed by NAP's limits (Autopilot: any),
    it carries the GKE labels the pod selects, and the pod tolerates GKE's GPU (and spot) taints."""
    from gpuplane.catalog import GPUS

    p = next(x for x in cfg.gpuPools if x.name == pool)
    gpu = GPUS[p.gpu]
    assert gpu.gcp is not None
    (cluster,) = [c for c in plan.by_type("gcp:container/cluster:Cluster") if c.inputs["name"] == cfg.cluster.name]
    limits = {r["resourceType"] for r in cluster.inputs.get("clusterAutoscaling", {}).get("resourceLimits", [])}
    assert not limits or gpu.gcp.accelerator in limits, "NAP may create nodes with this GPU"
    node = {"cloud.google.com/gke-accelerator": {gpu.gcp.accelerator}}
    if p.spot:
        node["cloud.google.com/gke-spot"] = {"true"}
    from gpuplane.scheduling.sharing import gke_node_labels

    node.update({k: {v} for k, v in gke_node_labels(p).items()})
    assert could_match(fragment["affinity"], node)
    assert tolerates(fragment["tolerations"], ("nvidia.com/gpu", "present", "NoSchedule"))
    if p.spot:
        assert tolerates(fragment["tolerations"], ("cloud.google.com/gke-spot", "true", "NoSchedule"))


@pytest.mark.parametrize(("stack", "pool"), CASES)
def test_fragment_is_a_valid_pod(stack: str, pool: str) -> None:
    p = pod(config(stack), pool, 1, "probe", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", ["nvidia-smi"])
    kubernetes_validate.validate(p, schema_version(stack), strict=True)


def test_resource_names_follow_the_sharing_mechanism() -> None:
    assert placement(config("aws-karpenter"), "notebooks")["resources"] == {"limits": {"nvidia.com/mig-1g.5gb": 1}}
    assert placement(config("gcp-standard"), "inference")["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert placement(config("gcp-standard"), "training", 8)["resources"] == {"limits": {"nvidia.com/gpu": 8}}


@pytest.mark.parametrize(
    ("stack", "pool", "gpus", "key", "message"),
    [
        ("gcp-standard", "inference", 2, "gpus", "inference nodes offer 1 to 1 nvidia.com/gpu, not 2"),
        ("gcp-standard", "training", 9, "gpus", "training nodes offer 1 to 8 nvidia.com/gpu, not 9"),
        # 8 A100 40GB per p4d, 7 x 1g.5gb MIG instances per A100 (NVIDIA MIG user guide, A100 profiles): 56
        ("aws-karpenter", "notebooks", 57, "gpus", "notebooks nodes offer 1 to 56 nvidia.com/mig-1g.5gb, not 57"),
        ("gcp-standard", "nope", 1, "pool", "no GPU pool 'nope' in this stack (pools: inference, training)"),
    ],
)
def test_placement_errors(stack: str, pool: str, gpus: int, key: str, message: str) -> None:
    """Each error names the argument the caller got wrong (`pool`, `gpus`: the CLI's and the API's names)."""
    with pytest.raises(ConfigError) as info:
        placement(config(stack), pool, gpus)
    assert info.value.problems == [(key, message)]


def test_cli_prints_the_fragment(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplane.cli import main

    assert main(["placement", "aws-managed", "training", "--gpus", "8"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == placement(config("aws-managed"), "training", 8)


def test_docs_rebuild_the_seed_pod_with_the_helper() -> None:
    readme = (ROOT / "docs" / "placement.md").read_text()
    block = readme.split("<!-- placement:start")[1].split("```yaml")[1].split("```")[0]
    cfg = parse_config({**namespace_of(load("gcp-standard", ROOT).flat_config())})
    assert yaml.safe_load(block) == placement(cfg, "training", 2)


def test_smoke_jobs_are_off_by_default_and_placed_by_the_helper(plan_of: Callable[..., Plan]) -> None:
    assert not [r for r in plan_of("gcp-standard").resources if r.type == "kubernetes:batch/v1:Job"]
    plan = plan_of(stack_with("aws-karpenter", smokeTest={"enabled": True}))
    jobs = {r.inputs["metadata"]["labels"]["gpuplane.io/pool"]: r for r in plan.by_type("kubernetes:batch/v1:Job")}
    cfg = config("aws-karpenter")
    assert set(jobs) == {p.name for p in cfg.gpuPools}
    (op,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "gpu-operator"]
    for name, job in jobs.items():
        spec: dict[str, Any] = job.inputs["spec"]["template"]["spec"]
        assert spec["affinity"] == placement(cfg, name)["affinity"]
        assert spec["containers"][0]["command"] == ["nvidia-smi", "-L"]
        assert op.urn in job.dependencies, "runs after the device plugin is installed"
        kubernetes_validate.validate(job.inputs, schema_version("aws-karpenter"), strict=True)
    assert [r for r in kube_objects(plan) if r.inputs["kind"] == "Job"]


# --- the fragment's parts on exact examples (the seed's pod spec; Kubernetes Toleration / NodeSelector API) ---


def test_tolerations_follow_the_seeds_pod_spec() -> None:
    """`nvidia.com/gpu` is tolerated with Exists (any value), every other taint by its value; a taint without an
    effect is NoSchedule (the Kubernetes default for node taints gpuplane sets)."""
    from gpuplane.args.inputs import TaintArgs, TaintEffect
    from gpuplane.scheduling.placement import tolerations

    taints = [
        TaintArgs(key="nvidia.com/gpu", value="present", effect=TaintEffect.NO_SCHEDULE),
        TaintArgs(key="cloud.google.com/gke-spot", value="true", effect=TaintEffect.NO_EXECUTE),
        TaintArgs(key="team", value="ml"),
        TaintArgs(key="dedicated", effect=TaintEffect.PREFER_NO_SCHEDULE),
    ]
    assert tolerations(taints) == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true", "effect": "NoExecute"},
        {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
        # a taint without a value has the empty value (core/v1 Taint.value is an optional string), and an Equal
        # toleration matches it with value "" (core/v1 Toleration: "otherwise just a regular string"; null is no string)
        {"key": "dedicated", "operator": "Equal", "value": "", "effect": "PreferNoSchedule"},
    ]


def test_affinity_is_the_pools_own_or_its_pool_label_and_a_fresh_copy() -> None:
    from gpuplane.scheduling.placement import affinity_of

    assert affinity_of({"pool": "p"}) == [{"key": "gpuplane.io/pool", "operator": "In", "values": ["p"]}]  # type: ignore[typeddict-item]
    own = [{"key": "k", "operator": "In", "values": ("a", "b")}, {"key": "e", "operator": "Exists"}]
    got = affinity_of({"pool": "p", "affinity": own})  # type: ignore[typeddict-item]
    assert got == [{"key": "k", "operator": "In", "values": ["a", "b"]}, {"key": "e", "operator": "Exists"}]
    got[0]["values"].append("c")
    assert own[0]["values"] == ("a", "b"), "the caller's expressions are not shared"


def test_the_pod_carries_the_fragment() -> None:
    """`pod` puts the fragment where the Pod API has it: resources on the container, affinity, tolerations and
    nodeSelector on the spec, annotations on the metadata."""
    cfg = config("aws-karpenter")
    name = cfg.gpuPools[0].name
    f = placement(cfg, name, 1)
    p = pod(cfg, name, 1, "probe", "img:1", ["nvidia-smi"])
    assert p["apiVersion"] == "v1" and p["kind"] == "Pod" and p["metadata"]["name"] == "probe"
    spec = p["spec"]
    assert spec["restartPolicy"] == "Never"
    assert spec["containers"] == [
        {"name": "main", "image": "img:1", "command": ["nvidia-smi"], "resources": f["resources"]}
    ]
    assert spec["affinity"] == f["affinity"] and spec["tolerations"] == f["tolerations"]
    assert spec.get("nodeSelector") == f.get("nodeSelector") and p["metadata"].get("annotations") == f.get(
        "annotations"
    )


# --- whole pools on exact examples, each value written out from the platform's docs ---


def config_with(base: str, **overrides: Any) -> StackConfig:
    return parse_config(namespace_of(stack_with(base, **overrides).flat_config()))


def nodes_of(cfg: StackConfig, pool: str) -> Any:
    (nodes,) = [n for n in stack_gpu_nodes(cfg) if n["pool"] == pool]
    return nodes


def required(fragment: dict[str, Any]) -> list[dict[str, Any]]:
    return fragment["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]


def test_a_spot_time_shared_gke_pool_selects_spot_shared_nodes_and_offers_one_share_per_pod() -> None:
    """gcp-standard's `inference`: spot L4s, 1 per node, at most 8 nodes, time-shared by 4. The labels GKE puts on
    its nodes: `cloud.google.com/gke-nodepool`, `cloud.google.com/gke-accelerator: nvidia-l4` (GKE, "About GPUs"),
    `cloud.google.com/gke-spot: "true"` on Spot VMs (GKE, "Spot VMs"), `cloud.google.com/gke-gpu-sharing-strategy:
    time-sharing` and `cloud.google.com/gke-max-shared-clients-per-gpu: "4"` (GKE, "Time-sharing GPUs"). A container
    gets at most 1 time-shared `nvidia.com/gpu` (GKE, "About GPU sharing strategies": "at most 1 nvidia.com/gpu can
    be requested"); the pool offers 8 nodes x 1 GPU x 4 clients = 32. gpuplane labels its nodes with the stack's
    cluster (`ml-gke`), pool and GPU."""
    cfg = config("gcp-standard")
    nodes = nodes_of(cfg, "inference")
    expressions = [
        {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["inference"]},
        {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-l4"]},
        {"key": "cloud.google.com/gke-spot", "operator": "In", "values": ["true"]},
        {"key": "cloud.google.com/gke-gpu-sharing-strategy", "operator": "In", "values": ["time-sharing"]},
        {"key": "cloud.google.com/gke-max-shared-clients-per-gpu", "operator": "In", "values": ["4"]},
    ]
    assert nodes["affinity"] == expressions
    assert (nodes["resource"], nodes["capacity"], nodes["nodes"], nodes["ceiling"]) == ("nvidia.com/gpu", 1, 8, 32)
    assert dict(nodes["labels"]) == {
        "cloud.google.com/gke-nodepool": "inference",
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "cloud.google.com/gke-spot": "true",
        "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
        "cloud.google.com/gke-max-shared-clients-per-gpu": "4",
        "gpuplane.io/cluster": "ml-gke",
        "gpuplane.io/pool": "inference",
        "gpuplane.io/gpu": "l4",
    }
    fragment = placement(cfg, "inference")
    assert required(fragment) == [{"matchExpressions": expressions}]
    assert tolerates(fragment["tolerations"], ("cloud.google.com/gke-spot", "true", "NoSchedule"))
    # the on-demand pool of the same stack selects no spot nodes (GKE puts gke-spot on Spot VMs only)
    assert nodes_of(cfg, "training")["affinity"] == [
        {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["training"]},
        {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-tesla-a100"]},
    ]


def test_an_mps_pool_offers_one_share_per_pod_and_replicas_per_gpu_in_all() -> None:
    """MPS on GKE: the nodes are labelled `cloud.google.com/gke-gpu-sharing-strategy: mps` and
    `cloud.google.com/gke-max-shared-clients-per-gpu` (GKE, "Share GPUs with multiple workloads using NVIDIA MPS");
    each container asks for one shared `nvidia.com/gpu` (ibid., and GKE's "at most 1 nvidia.com/gpu" for shared
    GPUs). 3 nodes x 2 L4s x 8 clients = 48 shares in the pool."""
    pools = [
        {"name": "mps", "gpu": "l4", "gpusPerNode": 2, "maxNodes": 3, "sharing": {"strategy": "mps", "replicas": 8}}
    ]
    cfg = config_with("gcp-standard", gpuPools=pools)
    nodes = nodes_of(cfg, "mps")
    assert nodes["affinity"] == [
        {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["mps"]},
        {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-l4"]},
        {"key": "cloud.google.com/gke-gpu-sharing-strategy", "operator": "In", "values": ["mps"]},
        {"key": "cloud.google.com/gke-max-shared-clients-per-gpu", "operator": "In", "values": ["8"]},
    ]
    assert (nodes["resource"], nodes["capacity"], nodes["ceiling"]) == ("nvidia.com/gpu", 1, 48)
    assert placement(cfg, "mps", 1)["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    with pytest.raises(ConfigError) as info:
        placement(cfg, "mps", 2)
    assert info.value.problems == [("gpus", "mps nodes offer 1 to 1 nvidia.com/gpu, not 2")]


def test_a_mig_pool_offers_every_slice_of_every_gpu() -> None:
    """aws-karpenter's `notebooks`: one p4d (8 x A100 40GB) cut into 1g.5gb MIG instances, 7 per A100 (NVIDIA MIG
    user guide, A100 profiles), each its own resource `nvidia.com/mig-1g.5gb` (device plugin, mixed strategy):
    one pod may take all 56 of a node; the pool (1 node) offers 56."""
    cfg = config("aws-karpenter")
    nodes = nodes_of(cfg, "notebooks")
    assert (nodes["resource"], nodes["capacity"], nodes["ceiling"]) == ("nvidia.com/mig-1g.5gb", 56, 56)
    assert placement(cfg, "notebooks", 56)["resources"] == {"limits": {"nvidia.com/mig-1g.5gb": 56}}


def test_pool_taint_effects_reach_the_node_model_and_the_tolerations() -> None:
    """A pool's own taints keep their effects in its `gpu_nodes` (what Kueue's flavor and node agents read), and
    the fragment tolerates each with that effect: a toleration with another effect does not match (core/v1
    Toleration.effect), so a NoExecute taint tolerated as NoSchedule would keep the pod off the node."""
    taints = [
        {"key": "dedicated", "value": "training", "effect": "NoExecute"},
        {"key": "team", "effect": "PreferNoSchedule"},
    ]
    pools = [{"name": "training", "gpu": "a100-40gb", "gpusPerNode": 8, "maxNodes": 2, "taints": taints}]
    cfg = config_with("gcp-standard", gpuPools=pools)
    assert [dict(t) for t in nodes_of(cfg, "training")["taints"]] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "training", "effect": "NoExecute"},
        {"key": "team", "value": "", "effect": "PreferNoSchedule"},
    ]
    fragment = placement(cfg, "training", 8)
    assert fragment["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Equal", "value": "training", "effect": "NoExecute"},
        {"key": "team", "operator": "Equal", "value": "", "effect": "PreferNoSchedule"},
    ]
    for taint in [("dedicated", "training", "NoExecute"), ("team", "", "PreferNoSchedule")]:
        assert tolerates(fragment["tolerations"], taint)


def test_compute_class_nodes_carry_the_class_taint_with_its_effect() -> None:
    """GKE taints the nodes it creates for a ComputeClass `cloud.google.com/compute-class=<class>:NoSchedule` (GKE,
    "About custom ComputeClasses"); a Kubernetes taint always has an effect (core/v1 Taint.effect is required), so
    the class's `gpu_nodes` spells it out, as it does the GPU taint's."""
    pools = [{"name": "a100", "gpu": "a100-40gb", "gpusPerNode": 4, "maxNodes": 1, "capacity": ["flex-start"]}]
    nodes = nodes_of(config_with("gcp-nap", gpuPools=pools), "a100")
    assert [dict(t) for t in nodes["taints"]] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "cloud.google.com/compute-class", "value": "gpuplane-a100", "effect": "NoSchedule"},
    ]
    assert all(isinstance(t["effect"], str) for t in nodes["taints"])


def test_a_placement_on_nodes_without_a_stated_capacity_takes_one_unit() -> None:
    """Your own `gpu_nodes` entry may leave `capacity` out: the fragment then asks for one unit, and more is refused
    (nothing says a node of it has more), naming `gpus`."""
    nodes: Any = {"pool": "byo", "labels": {}, "taints": [{"key": "dedicated"}], "resource": "nvidia.com/gpu"}
    fragment = placement(nodes)
    assert fragment["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert fragment["tolerations"] == [{"key": "dedicated", "operator": "Equal", "value": "", "effect": "NoSchedule"}]
    with pytest.raises(ConfigError) as info:
        placement(nodes, gpus=2)
    assert info.value.problems == [("gpus", "byo nodes offer 1 to 1 nvidia.com/gpu, not 2")]


def test_an_autopilot_pod_selects_its_gpu_by_node_selector() -> None:
    """Autopilot provisions GPU nodes from a Pod's nodeSelector `cloud.google.com/gke-accelerator` (GKE, "Deploy GPU
    workloads in Autopilot": nvidia-h100-80gb, nvidia-l4) and, for Spot Pods, `cloud.google.com/gke-spot: "true"`
    (GKE, "Spot Pods"); the Pod asks for the GPUs it was built for."""
    cfg = config("gcp-autopilot")
    training = pod(cfg, "training", 8, "probe", "img:1", ["nvidia-smi"])
    assert training["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}
    assert training["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 8}}
    inference = pod(cfg, "inference", 1, "probe", "img:1", ["nvidia-smi"])
    assert inference["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "cloud.google.com/gke-spot": "true",
    }


def test_a_gpudirect_pod_carries_the_interface_annotations() -> None:
    """GKE GPUDirect RDMA on A3 Ultra (GKE, "Maximize GPU network bandwidth ... with GPUDirect"): the Pod's
    annotations `networking.gke.io/default-interface: eth0` and `networking.gke.io/interfaces`, eth0 on the
    default network, eth1 on the gVNIC network, eth2 to eth9 on the eight RDMA networks (gpuplane names them
    `<pool>-gvnic-1`, `<pool>-rdma-<n>`)."""
    p = pod(config("gcp-multinode"), "training", 8, "probe", "img:1", ["nvidia-smi"])
    annotations = p["metadata"]["annotations"]
    assert set(annotations) == {"networking.gke.io/default-interface", "networking.gke.io/interfaces"}
    assert annotations["networking.gke.io/default-interface"] == "eth0"
    networks = ["default", "training-gvnic-1", *(f"training-rdma-{i}" for i in range(8))]
    assert json.loads(annotations["networking.gke.io/interfaces"]) == [
        {"interfaceName": f"eth{i}", "network": n} for i, n in enumerate(networks)
    ]


@pytest.mark.parametrize(
    ("stack", "prefix"), [("aws-karpenter", "karpenter.k8s.aws"), ("aws-automode", "eks.amazonaws.com")]
)
def test_a_spot_karpenter_pool_falls_back_to_on_demand_and_selects_its_gpu_by_name(stack: str, prefix: str) -> None:
    """Karpenter's NodePool takes a list of capacity types and launches the cheapest it can (Karpenter docs,
    "NodePools": `karpenter.sh/capacity-type` In [spot, on-demand] falls back to on-demand), so a `spot: true`
    pool's pods must accept both; Karpenter labels nodes with the GPU's name under the provider's prefix
    (`karpenter.k8s.aws/instance-gpu-name`, EKS Auto Mode `eks.amazonaws.com/instance-gpu-name`: L4 is `l4`)."""
    pools = [{"name": "spotty", "gpu": "l4", "gpusPerNode": 1, "spot": True, "maxNodes": 2}]
    cfg = config_with(stack, gpuPools=pools, queues=None, autoscaling=None)
    (term,) = required(placement(cfg, "spotty"))
    got = {e["key"]: e["values"] for e in term["matchExpressions"]}
    assert got == {
        "karpenter.sh/nodepool": ["spotty"],
        "karpenter.sh/capacity-type": ["spot", "on-demand"],
        f"{prefix}/instance-gpu-name": ["l4"],
    }
