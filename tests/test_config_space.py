"""Hypothesis over the GKE pool config space: valid configs plan into matching pools; invalid ones name the key."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.catalog import GPUS, gpus_on
from gpuplane.catalog.consumption import gcp_sold
from gpuplane.config import ConfigError, parse_config
from gpuplane.plan import plan_stack
from gpuplane.plan.stackfile import StackFile

from .conftest import examples
from .graph import RELEASE, gpu_node_pools, matches, node_taints, tolerates

GCP_GPUS = tuple(
    n
    for n in gpus_on("gcp")
    # A4X / A4X Max (GB200, GB300) come only from reservations (and need the DRA driver): not this fuzz's pools.
    if any({"on-demand", "spot"} & gcp_sold(m) for m in GPUS[n].gcp.machines)  # type: ignore[union-attr]
)


@st.composite
def gcp_pool(draw: Any, index: int) -> dict[str, Any]:
    gpu = GPUS[draw(st.sampled_from(GCP_GPUS))]
    assert gpu.gcp is not None
    counts = sorted(set(gpu.gcp.machines.values()) | set(gpu.gcp.attachable_counts))
    lo = draw(st.integers(0, 4))
    count = draw(st.sampled_from(counts))
    machine = gpu.gcp.default_machine(count)
    # Machines GCP does not sell on demand (A3 Ultra, A4) come as spot here.
    on_demand = machine is None or "on-demand" in gcp_sold(machine)
    return {
        "name": f"pool-{index}",
        "gpu": gpu.name,
        "gpusPerNode": count,
        "spot": draw(st.booleans()) if on_demand else True,
        "minNodes": lo,
        "maxNodes": draw(st.integers(max(lo, 1), lo + 16)),
    }


@st.composite
def gke_config(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 4))
    return {
        "platform": "gke-standard",
        "cluster": {"name": "fuzz"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},  # offers every GCP GPU of the catalog
        "gpuPools": [draw(gcp_pool(i)) for i in range(n)],
    }


@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.too_slow])
@given(gke_config())
def test_valid_pools_plan_into_matching_node_pools(raw: dict[str, Any]) -> None:
    plan = plan_stack(StackFile("gpuplane", "fuzz", {f"gpuplane:{k}": v for k, v in raw.items()}))
    planned = {p.inputs["name"]: p for p in gpu_node_pools(plan)}
    assert set(planned) == {p["name"] for p in raw["gpuPools"]}
    (release,) = plan.by_type(RELEASE)
    for want in raw["gpuPools"]:
        got = planned[want["name"]]
        gpu = GPUS[want["gpu"]]
        assert gpu.gcp is not None
        acc = got.inputs["nodeConfig"]["guestAccelerators"][0]
        assert acc["type"] == gpu.gcp.accelerator and acc["count"] == want["gpusPerNode"]
        assert gpu.gcp.allows(got.inputs["nodeConfig"]["machineType"], want["gpusPerNode"])
        assert got.inputs["autoscaling"]["totalMinNodeCount"] == want["minNodes"]
        assert got.inputs["autoscaling"]["totalMaxNodeCount"] == want["maxNodes"]
        assert matches(release.inputs["values"]["affinity"], got.inputs["nodeConfig"]["labels"])
        assert all(tolerates(release.inputs["values"]["tolerations"], t) for t in node_taints(got))


@given(st.integers(0, 50), st.integers(1, 50))
def test_max_below_min_always_names_the_key(lo: int, hi: int) -> None:
    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "fuzz"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},  # offers every GCP GPU of the catalog
        "gpuPools": [{"name": "p", "gpu": "l4", "minNodes": lo, "maxNodes": hi}],
    }
    try:
        parse_config(raw)
    except ConfigError as exc:
        assert hi < lo and dict(exc.problems) == {"gpuplane:gpuPools[0].maxNodes": f"must be >= minNodes ({lo})"}
    else:
        assert hi >= lo
