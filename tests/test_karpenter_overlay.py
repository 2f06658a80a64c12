"""Karpenter and shared GPUs: a NodeOverlay per sharing class declares what its nodes advertise.

Karpenter models one `nvidia.com/gpu` per physical GPU and nothing else (aws/karpenter-provider-aws
pkg/providers/instancetype/types.go `computeCapacity`). A pod asking for `nvidia.com/mig-1g.5gb` then
fits no instance type and stays Pending; time-sliced replicas get a GPU each, so Karpenter launches
`replicas` times too many nodes. The NodeOverlay (karpenter.sh/v1alpha1) adds the capacity.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from gpuplane.catalog import GPUS
from gpuplane.plan import Plan, StackFile
from gpuplane.scheduling.placement import placement

from .conftest import load_stack_config, need_reference, stack_with
from .graph import RELEASE, kube_objects

SHARED_POOLS: list[dict[str, Any]] = [
    {"name": "inference", "gpu": "l4", "maxNodes": 4, "sharing": {"strategy": "time-slicing", "replicas": 4}},
    {
        "name": "notebooks",
        "gpu": "a100-40gb",
        "gpusPerNode": 8,
        "maxNodes": 1,
        "sharing": {"strategy": "mig", "migProfile": "1g.5gb"},
    },
    {"name": "training", "gpu": "h100", "gpusPerNode": 8, "maxNodes": 2, "sharing": {"strategy": "mps", "replicas": 2}},
    {"name": "whole", "gpu": "l4", "maxNodes": 2},
]


def shared_stack() -> StackFile:
    return stack_with("aws-karpenter", gpuPools=SHARED_POOLS)


def objects(plan: Plan, kind: str) -> dict[str, Any]:
    return {r.inputs["metadata"]["name"]: r for r in kube_objects(plan) if r.inputs["kind"] == kind}


def overlay_specs(plan: Plan) -> list[dict[str, Any]]:
    return [r.inputs for r in objects(plan, "NodeOverlay").values()]


def expected_capacity(pool: dict[str, Any]) -> dict[str, str]:
    """What the device plugin advertises on one node of the class (from the config and the catalog)."""
    s, gpus = pool["sharing"], pool.get("gpusPerNode", 1)
    if s["strategy"] == "mig":
        return {f"nvidia.com/mig-{s['migProfile']}": str(gpus * GPUS[pool["gpu"]].mig_profiles[s["migProfile"]])}
    return {"nvidia.com/gpu": str(gpus * s["replicas"])}


@pytest.mark.parametrize("stack", ["aws-karpenter", "shared"])
def test_every_sharing_class_declares_its_capacity(stack: str, plan_of: Callable[..., Plan]) -> None:
    sf = shared_stack() if stack == "shared" else stack_with("aws-karpenter")
    pools = {p["name"]: p for p in sf.config["gpuplane:gpuPools"]}
    plan = plan_of(sf)
    overlays = {o["spec"]["requirements"][0]["values"][0]: o for o in overlay_specs(plan)}
    assert set(overlays) == {n for n, p in pools.items() if "sharing" in p}, "one overlay per sharing class, no other"
    nodepools = objects(plan, "NodePool")
    for name, overlay in overlays.items():
        spec = overlay["spec"]
        assert overlay["apiVersion"] == "karpenter.sh/v1alpha1"
        assert spec["capacity"] == expected_capacity(pools[name])
        req = {r["key"]: (r["operator"], r["values"]) for r in spec["requirements"]}
        assert req["karpenter.sh/nodepool"] == ("In", [name]) and name in nodepools
        assert req["karpenter.k8s.aws/instance-gpu-count"] == ("In", [str(pools[name].get("gpusPerNode", 1))])


@pytest.mark.parametrize("stack", ["aws-karpenter", "shared"])
def test_each_class_pod_fits_a_node_karpenter_would_launch(stack: str, plan_of: Callable[..., Plan]) -> None:
    """What gpuplane's pod fragment asks for fits the capacity Karpenter models for the class: the
    instance type's `nvidia.com/gpu` (one per GPU) with the class's overlay applied on top (it replaces
    the resources it names: kubernetes-sigs/karpenter pkg/cloudprovider/types.go `ApplyCapacityOverlay`)."""
    from gpuplane.config import parse_flat

    sf = shared_stack() if stack == "shared" else stack_with("aws-karpenter")
    cfg = parse_flat(sf.flat_config())
    overlays = {o["spec"]["requirements"][0]["values"][0]: o["spec"]["capacity"] for o in overlay_specs(plan_of(sf))}
    for pool in cfg.gpuPools:
        model = {"nvidia.com/gpu": pool.gpusPerNode} | {k: int(v) for k, v in overlays.get(pool.name, {}).items()}
        asks = placement(cfg, pool.name)["resources"]["limits"]
        assert all(model.get(res, 0) >= int(n) for res, n in asks.items()), (pool.name, asks, model)
        if pool.sharing is not None:  # one node takes as many one-slot pods as its class advertises
            (res,) = asks
            assert str(model[res]) == expected_capacity(pool.model_dump(exclude_none=True))[res]


def test_time_sliced_nodepool_limits_count_replicas(plan_of: Callable[..., Plan]) -> None:
    """Karpenter subtracts the (overlaid) instance capacity from `spec.limits`: a time-sliced node counts
    GPUs x replicas, so the limit must too, or the class stops at maxNodes / replicas nodes."""
    plan = plan_of(shared_stack())
    nodepools = objects(plan, "NodePool")
    for p in SHARED_POOLS:
        s = p.get("sharing") or {}
        replicas = s.get("replicas", 1) if s.get("strategy") != "mig" else 1
        limit = nodepools[p["name"]].inputs["spec"]["limits"]["nvidia.com/gpu"]
        assert limit == str(p["maxNodes"] * p.get("gpusPerNode", 1) * replicas), p["name"]


def test_overlays_wait_for_their_crd_and_the_gate(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(shared_stack())
    releases = {r.inputs["name"]: r for r in plan.by_type(RELEASE)}
    crd, ctrl = releases["karpenter-crd"], releases["karpenter"]
    assert ctrl.inputs["values"]["settings"]["featureGates"]["nodeOverlay"] is True
    overlays = objects(plan, "NodeOverlay")
    assert overlays
    for r in overlays.values():
        assert crd.urn in r.dependencies and ctrl.urn in r.dependencies, r.urn


def test_the_gate_does_not_depend_on_sharing(plan_of: Callable[..., Plan]) -> None:
    """Adding or removing a sharing class leaves the controller's values alone (no controller restart)."""
    raw = load_stack_config("aws-karpenter")
    plain = copy.deepcopy(raw["gpuplane:gpuPools"])
    for p in plain:
        p.pop("sharing", None)
    a = plan_of(stack_with("aws-karpenter", gpuPools=plain))
    b = plan_of(stack_with("aws-karpenter"))
    (va,) = [r.inputs["values"] for r in a.by_type(RELEASE) if r.inputs["name"] == "karpenter"]
    (vb,) = [r.inputs["values"] for r in b.by_type(RELEASE) if r.inputs["name"] == "karpenter"]
    assert va == vb and not objects(a, "NodeOverlay") and objects(b, "NodeOverlay")


def test_overlays_validate_against_the_crd_and_its_cel_rules(plan_of: Callable[..., Plan]) -> None:
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    overlays = objects(plan_of(shared_stack()), "NodeOverlay")
    assert len(overlays) == 3
    for name, r in overlays.items():
        obj = r.inputs
        schema = crd_schema(ref, obj["apiVersion"], obj["kind"])
        assert not schema_errors(obj, schema), (name, schema_errors(obj, schema))
        failures, evaluated = cel_results(obj, schema)
        assert not failures, (name, failures)
        assert evaluated >= 4, "capacity and requirements rules were evaluated"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["capacity"].update({"cpu": "1"}), "invalid resource restricted"),
        (lambda s: s["requirements"].append({"key": "x", "operator": "In", "values": []}), "'In' must have a value"),
        (lambda s: s.update({"price": "1", "priceAdjustment": "-10%"}), "cannot set both"),
    ],
)
def test_cel_checks_catch_a_bad_overlay(change: Callable[[dict[str, Any]], None], message: str) -> None:
    from gpuplane.aws.karpenter_render import gpu_overlay
    from gpuplane.config import parse_flat

    from .crds import cel_results, crd_schema

    ref = need_reference()
    cfg = parse_flat(shared_stack().flat_config())
    obj = gpu_overlay(cfg.gpuPools[0])
    assert obj is not None
    change(obj["spec"])
    failures, _ = cel_results(obj, crd_schema(ref, obj["apiVersion"], obj["kind"]))
    assert any(message in f for f in failures), failures
