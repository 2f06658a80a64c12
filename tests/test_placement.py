"""Placement fragments match the pools they target, on every pool of every shipped stack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuplane.config import ConfigError, namespace_of, parse_config
from gpuplane.config.model import StackConfig
from gpuplane.plan import Plan, load
from gpuplane.scheduling.placement import placement, pod

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
    ("stack", "pool", "gpus", "message"),
    [
        ("gcp-standard", "inference", 2, "inference nodes offer 1 to 1 nvidia.com/gpu, not 2"),
        ("gcp-standard", "training", 9, "training nodes offer 1 to 8 nvidia.com/gpu, not 9"),
        ("gcp-standard", "nope", 1, "no GPU pool 'nope' in this stack (pools: inference, training)"),
    ],
)
def test_placement_errors(stack: str, pool: str, gpus: int, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        placement(config(stack), pool, gpus)
    assert [m for _, m in info.value.problems] == [message]


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
    ]
    assert tolerations(taints) == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true", "effect": "NoExecute"},
        {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
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
