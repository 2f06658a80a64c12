"""Hypothesis over the config space of both clouds and every platform: any shipped stack (fleets included) with
pools added from its cloud's catalog (any GPU, spot or not, shared or not), user taints on them and, on GKE
Standard, zones of the region, plans, passes the deploy simulator, and puts the NVIDIA software on every GPU
node (GKE node pools, EKS node groups, Karpenter and Auto Mode NodePools; GKE's auto-provisioners serve their
own), checked with the tests' own matchers written from the Kubernetes API reference (tests/graph.py).

The suite runs a bounded, derandomized set (8 examples); `benchmarks/property_bench.py`
runs the same properties randomized with many more examples (GPUPLANE_RANDOMIZE=1).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpuplane.catalog import GPUS, PLATFORMS
from gpuplane.catalog.availability import GCP_ZONES
from gpuplane.config import parse_flat
from gpuplane.plan import load
from gpuplane.plan.deploy import check, stated_crds
from gpuplane.plan.stackfile import StackFile

from .conftest import ROOT, STACKS, cached_plan, examples
from .graph import RELEASE, gpu_pool_taints, tolerates
from .test_upgrade_safety import pool_candidates, valid

EXPLORE = settings(
    max_examples=examples(8),
    suppress_health_check=list(HealthCheck),
)
"""Bounded and derandomized in the suite; randomized with many examples in the benchmark."""

USER_TAINTS = [
    {"key": "team", "value": "ml", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "training", "effect": "NoExecute"},
    {"key": "example.com/preemptible", "effect": "PreferNoSchedule"},
]


@st.composite
def stack_with_pools(draw: Any) -> tuple[str, dict[str, Any], list[str]]:
    """(base stack, config with added pools, the added pools' names)."""
    base = draw(st.sampled_from(STACKS))
    candidates = pool_candidates(base)
    assume(candidates)
    config = copy.deepcopy(load(base, ROOT).config)
    platform = PLATFORMS[config["gpuplane:platform"]]
    added = []
    for i in range(draw(st.integers(1, 2))):
        pool = copy.deepcopy(draw(st.sampled_from(candidates)))
        pool["name"] = f"prop{i}"
        if platform.fixed_pools:
            pool["taints"] = draw(st.lists(st.sampled_from(USER_TAINTS), max_size=2, unique_by=lambda t: t["key"]))
        region = (config.get("gpuplane:gcp") or {}).get("region")
        gpu = GPUS[pool["gpu"]]
        if platform.name == "gke-standard" and region and gpu.gcp and draw(st.booleans()):
            offered = GCP_ZONES.get(gpu.gcp.accelerator, {}).get(region, ())
            if offered:
                pool["zones"] = draw(st.lists(st.sampled_from(offered), min_size=1, unique=True))
        config["gpuplane:gpuPools"] = [*config["gpuplane:gpuPools"], pool]
        added.append(pool["name"])
    assume(valid(config))
    return base, config, added


@EXPLORE
@given(stack_with_pools())
def test_any_valid_config_deploys_with_the_gpu_software_on_every_gpu_node(case: Any) -> None:
    base, config, added = case
    sf = load(base, ROOT)
    stack = StackFile(project=sf.project, stack=sf.stack, config=config)
    plan = cached_plan(stack)
    violations = check(plan, stated_crds(parse_flat(stack.flat_config())))
    assert violations == [], "\n".join(str(v) for v in violations)
    pools = gpu_pool_taints(plan)
    daemonsets = [tolerations_of(r.inputs["chart"], r.inputs["values"]) for r in plan.by_type(RELEASE)]
    daemonsets = [t for t in daemonsets if t is not None]
    platform = PLATFORMS[config["gpuplane:platform"]]
    for name in added:
        if platform.name in ("gke-nap", "gke-autopilot"):
            continue  # GKE taints and serves its auto-provisioned nodes itself (held by the simulator above)
        assert name in pools, f"pool {name} has GKE node pools, EKS node groups or a Karpenter NodePool"
        assert daemonsets, "some GPU DaemonSet (gpu-operator, device plugin or dcgm-exporter) serves the pool"
        for tolerations in daemonsets:
            for taint in pools[name]:
                assert tolerates(tolerations, taint), (name, taint)


def tolerations_of(chart: str, values: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The tolerations of a chart's GPU-node DaemonSets (the charts' values keys), None for other charts."""
    if chart == "gpu-operator":
        return list(values["daemonsets"]["tolerations"])
    if chart in ("dcgm-exporter", "nvidia-device-plugin"):
        return list(values.get("tolerations", []))
    return None
