"""GKE ComputeClasses for GPU classes on NAP and Autopilot (issue 16, item 1): reserved, flex-start and
fallback orders become a ComputeClass's priorities, and the placement helper selects that class.

Field names below are from Google's ComputeClass reference (cloud.google.com/v1;
docs.cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass). npm's @kubernetes-models/gke
4.6.2 validator (tests/test_crd_models.py) checks structure but its schema has no `reservations` or
`flexStart`, so every emitted field is also checked against this list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gpuplane.config import parse_config
from gpuplane.plan import Plan, deploy
from gpuplane.plan.deploy import scheduling
from gpuplane.plan.stackfile import StackFile
from gpuplane.scheduling.placement import placement

from .conftest import load_stack_config, stack_with
from .graph import kube_objects

REFERENCE_FIELDS: dict[str, set[str]] = {
    "": {"apiVersion", "kind", "metadata", "spec"},
    "spec": {"nodePoolAutoCreation", "priorities", "whenUnsatisfiable", "priorityDefaults", "activeMigration"},
    "spec.nodePoolAutoCreation": {"enabled"},
    "spec.priorities[]": {
        "machineFamily",
        "machineType",
        "gpu",
        "reservations",
        "flexStart",
        "spot",
        "maxRunDurationSeconds",
        "minCores",
        "minMemoryGb",
        "nodepools",
        "storage",
    },
    "spec.priorities[].gpu": {"type", "count", "driverVersion"},
    "spec.priorities[].reservations": {"affinity", "specific"},
    "spec.priorities[].reservations.specific[]": {"name", "project", "reservationBlock"},
    "spec.priorities[].flexStart": {"enabled", "nodeRecycling"},
}
"""Fields of Google's ComputeClass reference page (the parts gpuplane may write)."""
ENUMS = {
    "spec.whenUnsatisfiable": {"ScaleUpAnyway", "DoNotScaleUp"},
    "spec.priorities[].reservations.affinity": {"Specific", "AnyBestEffort", "None"},
}
"""Enum values of the reference page."""

POOLS: list[dict[str, Any]] = [
    {
        "name": "h100",
        "gpu": "h100",
        "gpusPerNode": 8,
        "maxNodes": 2,
        "capacity": ["reserved", "flex-start", "spot"],
        "reservation": {"names": ["h100-res", "projects/shared-proj/reservations/h100-shared"], "nodes": 1},
        "maxRunDuration": "24h",
    },
    {"name": "l4", "gpu": "l4", "gpusPerNode": 1, "maxNodes": 4, "capacity": ["reserved", "on-demand", "spot"]},
    {"name": "t4", "gpu": "t4", "gpusPerNode": 1, "maxNodes": 4, "spot": True},
]
"""Named reservations then flex-start then spot; any reservation (falling back to on-demand) then spot;
and a plain spot class, which keeps the platform's defaults (no ComputeClass)."""


def compute_class_stack(base: str) -> StackFile:
    """`base` (gcp-nap or gcp-autopilot) with the GPU classes above and smoke tests on."""
    return stack_with(base, gpuPools=POOLS, smokeTest={"enabled": True})


def classes(plan: Plan) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in kube_objects(plan) if r.inputs["kind"] == "ComputeClass"}


def walk(obj: Any, path: str = "") -> list[tuple[str, str]]:
    """(path, key) of every mapping key in `obj`, lists as `[]` (metadata's own content left out)."""
    out: list[tuple[str, str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((path, k))
            if path == "" and k == "metadata":
                continue
            out += walk(v, f"{path}.{k}" if path else k)
    elif isinstance(obj, list):
        for v in obj:
            out += walk(v, f"{path}[]")
    return out


BASES = ["gcp-nap", "gcp-autopilot"]


@pytest.mark.parametrize("base", BASES)
def test_priorities_follow_the_capacity_order(base: str, plan_of: Callable[..., Plan]) -> None:
    got = classes(plan_of(compute_class_stack(base)))
    assert sorted(got) == ["gpuplane-h100", "gpuplane-l4"]  # the plain spot class needs none
    h100 = got["gpuplane-h100"]["spec"]
    kinds = [next(k for k in ("reservations", "flexStart", "spot") if k in p) for p in h100["priorities"]]
    assert kinds == ["reservations", "flexStart", "spot"]
    first = h100["priorities"][0]
    assert first["reservations"] == {
        "affinity": "Specific",
        "specific": [{"name": "h100-res"}, {"name": "h100-shared", "project": "shared-proj"}],
    }
    assert first["gpu"] == {"type": "nvidia-h100-80gb", "count": 8} and first["machineType"] == "a3-highgpu-8g"
    assert h100["priorities"][1]["maxRunDurationSeconds"] == 24 * 3600
    assert h100["whenUnsatisfiable"] == "DoNotScaleUp"
    # AnyBestEffort already falls back to on-demand: [reserved, on-demand, spot] is two priorities.
    l4 = got["gpuplane-l4"]["spec"]["priorities"]
    assert [p.get("reservations") for p in l4] == [{"affinity": "AnyBestEffort"}, None] and l4[1]["spot"] is True
    # Standard clusters create node pools for a class only when told to; Autopilot always does.
    assert ("nodePoolAutoCreation" in h100) == (base == "gcp-nap")


@pytest.mark.parametrize("base", BASES)
def test_every_field_is_in_googles_reference(base: str, plan_of: Callable[..., Plan]) -> None:
    for name, obj in classes(plan_of(compute_class_stack(base))).items():
        unknown = [f"{p}.{k}" for p, k in walk(obj) if k not in REFERENCE_FIELDS.get(p, set())]
        assert not unknown, f"{name}: not in the ComputeClass reference: {unknown}"
        assert obj["spec"]["whenUnsatisfiable"] in ENUMS["spec.whenUnsatisfiable"]
        for p in obj["spec"]["priorities"]:
            if "reservations" in p:
                assert p["reservations"]["affinity"] in ENUMS["spec.priorities[].reservations.affinity"]


@pytest.mark.parametrize("base", BASES)
def test_placement_selects_the_class_and_fits_only_its_nodes(base: str, plan_of: Callable[..., Plan]) -> None:
    """The fragment selects the class by nodeSelector, and fits the nodes GKE makes for that class (labelled
    and tainted with it) but not another class's; the deploy simulator accepts the whole stack."""
    sf = compute_class_stack(base)
    plan = plan_of(sf)
    cfg = parse_config({k.split(":", 1)[1]: v for k, v in sf.config.items()})
    fragment = placement(cfg, "h100", gpus=8)
    assert fragment["nodeSelector"]["cloud.google.com/compute-class"] == "gpuplane-h100"
    assert {"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "gpuplane-h100"}.items() <= {
        **next(t for t in fragment["tolerations"] if t["key"] == "cloud.google.com/compute-class")
    }.items()
    shapes = [
        s
        for r in plan.resources
        if r.type == "kubernetes:cloud.google.com/v1:ComputeClass"
        for s in scheduling.NODE_SOURCES[r.type](r)
    ]
    own = [s for s in shapes if s.labels["cloud.google.com/compute-class"] == frozenset({"gpuplane-h100"})]
    other = [s for s in shapes if s not in own]
    assert len(own) == 3 and other
    assert all(scheduling.fits(fragment, s) for s in own)
    assert not any(scheduling.fits(fragment, s) for s in other)
    assert "cloud.google.com/compute-class" not in placement(cfg, "t4", gpus=1).get("nodeSelector", {})
    assert deploy.check(plan) == []


def test_the_shipped_nap_stack_has_no_compute_class(plan_of: Callable[..., Plan]) -> None:
    """Classes without `capacity` keep what they planned before (the golden files are unchanged)."""
    assert classes(plan_of("gcp-nap")) == {} and classes(plan_of("gcp-autopilot")) == {}


def test_the_nap_exporter_tolerates_its_classes_compute_class_taint(plan_of: Any) -> None:
    """GKE taints the nodes it creates for a ComputeClass with the class: a NAP exporter that only tolerates
    the GPU and spot taints would never run there (the simulator's daemonset rule fails it)."""
    from gpuplane.plan.deploy import check

    pools = load_stack_config("gcp-nap")["gpuplane:gpuPools"]
    flex = {k: v for k, v in pools[1].items() if k != "spot"} | {"capacity": ["flex-start"]}
    plan = plan_of(stack_with("gcp-nap", gpuPools=[flex, pools[0]]))
    (release,) = [r for r in plan.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "dcgm-exporter"]
    (cc,) = plan.by_type("kubernetes:cloud.google.com/v1:ComputeClass")
    taint = {"key": "cloud.google.com/compute-class", "value": cc.inputs["metadata"]["name"], "effect": "NoSchedule"}
    assert {**taint, "operator": "Equal"} in release.inputs["values"]["tolerations"]
    assert [v for v in check(plan) if v.rule == "daemonset-covers-its-nodes"] == []
