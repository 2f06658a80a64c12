"""Multi-region fleets: the spread within quota, per-region graphs, and the capacity summary vs the graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.catalog import GPUS
from gpuplane.config.model import StackConfig
from gpuplane.plan import Plan
from gpuplane.stack.fleet import allocate, spread

from .conftest import FLEETS, STACKS, config_problems, examples, load_stack_config
from .graph import RELEASE


@settings(max_examples=examples(300))
@given(
    total=st.integers(0, 200),
    per_node=st.sampled_from([1, 2, 4, 8]),
    rooms=st.lists(st.integers(0, 80), min_size=1, max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_spread_is_deterministic_within_quota_and_exact(
    total: int, per_node: int, rooms: list[int], order: Any
) -> None:
    regions = [f"r{i}" for i in range(len(rooms))]
    order.shuffle(regions)
    room = {f"r{i}": n for i, n in enumerate(rooms)}
    capacity = sum(n // per_node * per_node for n in room.values())
    try:
        first = spread(total, per_node, regions, room)
    except ValueError as exc:
        assert total % per_node or total > capacity
        assert "not a whole number" in str(exc) or f"at most {capacity}" in str(exc)
        return
    assert first == spread(total, per_node, regions, room), "deterministic"
    assert sum(first.values()) == total and total <= capacity
    for region, n in first.items():
        assert 0 < n <= room[region] and n % per_node == 0
    # Preference order: a region only gets GPUs once every earlier region is as full as it can be.
    for i, region in enumerate(regions):
        if first.get(region):
            for earlier in regions[:i]:
                assert room[earlier] // per_node * per_node == first.get(earlier, 0)


def test_fleet_that_cannot_fit_fails_clearly() -> None:
    raw = {
        **{k.removeprefix("gpuplane:"): v for k, v in load_stack_config("gcp-fleet").items()},
    }
    raw["fleet"] = {**raw["fleet"], "totals": {"inference": 100, "training": 12}}
    problems = config_problems(raw)
    assert (
        problems["gpuplane:fleet.totals.inference"]
        == "100 GPUs do not fit: at most 56 within the regions' quota and availability"
    )
    assert problems["gpuplane:fleet.totals.training"] == "12 GPUs is not a whole number of 8-GPU nodes"


def test_region_without_a_share_fails_clearly() -> None:
    raw = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config("aws-fleet").items()}
    raw["fleet"] = {**raw["fleet"], "totals": {"inference": 8, "training": 8}}
    problems = config_problems(raw)
    assert (
        problems["gpuplane:fleet.regions[1].region"]
        == "us-west-2 gets no GPUs (earlier regions hold every total); remove it"
    )
    assert problems["gpuplane:fleet.regions[2].region"].startswith("eu-central-1 gets no GPUs")


def test_pool_totals_must_name_pools() -> None:
    raw = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config("aws-fleet").items()}
    raw["fleet"] = {**raw["fleet"], "totals": {"inferense": 8}}
    want = "no GPU pool named 'inferense' (did you mean 'inference'?)"
    assert config_problems(raw) == {"gpuplane:fleet.totals": want}


def gpus_in_graph(plan: Plan) -> dict[tuple[str, str], int]:
    """(cluster, pool) -> most GPUs the planned resources allow, read from the graph alone."""
    out: dict[tuple[str, str], int] = {}
    for r in plan.by_type("gcp:container/nodePool:NodePool"):
        nc = r.inputs["nodeConfig"]
        if nc.get("guestAccelerators"):
            cluster = nc["labels"]["gpuplane.io/cluster"]
            out[(cluster, r.inputs["name"])] = (
                r.inputs["autoscaling"]["totalMaxNodeCount"] * nc["guestAccelerators"][0]["count"]
            )
    for r in plan.by_type("eks:index:ManagedNodeGroup"):
        labels = r.inputs["labels"]
        if "gpuplane.io/pool" in labels:
            gpu = GPUS[labels["gpuplane.io/gpu"]]
            per = {gpu.aws.instances[t] for t in r.inputs["instanceTypes"]}  # type: ignore[union-attr]
            assert len(per) == 1
            out[(labels["gpuplane.io/cluster"], labels["gpuplane.io/pool"])] = (
                r.inputs["scalingConfig"]["maxSize"] * per.pop()
            )
    for r in plan.resources:
        if r.inputs.get("kind") == "NodePool":
            labels = r.inputs["spec"]["template"]["metadata"]["labels"]
            out[(labels["gpuplane.io/cluster"], labels["gpuplane.io/pool"])] = int(
                r.inputs["spec"]["limits"]["nvidia.com/gpu"]
            )
    return out


def nap_limits(plan: Plan) -> dict[str, dict[str, int]]:
    return {
        c.inputs["name"]: {x["resourceType"]: x["maximum"] for x in c.inputs["clusterAutoscaling"]["resourceLimits"]}
        for c in plan.by_type("gcp:container/cluster:Cluster")
        if "resourceLimits" in c.inputs.get("clusterAutoscaling", {})
    }


@pytest.mark.parametrize("stack", STACKS)
def test_summary_matches_the_graph(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    rows = plan.outputs["capacity"]["rows"]
    graph = gpus_in_graph(plan)
    limits = nap_limits(plan)
    for row in rows:
        if (row["cluster"], row["pool"]) in graph:
            assert graph[(row["cluster"], row["pool"])] == row["gpusAtMax"], row
        elif row["cluster"] in limits:  # NAP: the class's ceiling is inside its GPU type's limit
            gpu = GPUS[row["gpu"]]
            assert gpu.gcp is not None and limits[row["cluster"]][gpu.gcp.accelerator] >= row["gpusAtMax"]
        else:  # Autopilot: no GPU resources to check against
            assert load_stack_config(stack)["gpuplane:platform"] == "gke-autopilot"
    assert len(graph) == len([r for r in rows if (r["cluster"], r["pool"]) in graph])
    assert plan.outputs["capacity"]["totals"]["gpusAtMax"] == sum(r["gpusAtMax"] for r in rows)


def floors_and_slots_in_graph(plan: Plan) -> dict[tuple[str, str], tuple[int, int]]:
    """(cluster, pool) -> (GPUs running at the floor, schedulable slots at max), from the graph alone:
    node-pool minima, GKE sharing/partition settings, the operator's device-plugin ConfigMap and MIG labels."""
    import yaml

    out: dict[tuple[str, str], tuple[int, int]] = {}
    for r in plan.by_type("gcp:container/nodePool:NodePool"):
        nc = r.inputs["nodeConfig"]
        if not nc.get("guestAccelerators"):
            continue
        acc = nc["guestAccelerators"][0]
        per_gpu = acc.get("gpuSharingConfig", {}).get("maxSharedClientsPerGpu", 1)
        if "gpuPartitionSize" in acc:
            per_gpu = GPUS[nc["labels"]["gpuplane.io/gpu"]].mig_profiles[acc["gpuPartitionSize"]]
        floor = r.inputs["autoscaling"]["totalMinNodeCount"] * acc["count"]
        slots = r.inputs["autoscaling"]["totalMaxNodeCount"] * acc["count"] * per_gpu
        out[(nc["labels"]["gpuplane.io/cluster"], r.inputs["name"])] = (floor, slots)
    configs: dict[str, dict[str, str]] = {}
    for r in plan.resources:
        if r.inputs.get("kind") == "ConfigMap" and "device-plugin" in r.inputs["metadata"]["name"]:
            configs[r.parent or ""] = r.inputs["data"]
    data = next(iter(configs.values()), {})

    def per_gpu(labels: dict[str, str]) -> int:
        if "nvidia.com/mig.config" in labels:
            profile = labels["nvidia.com/mig.config"].removeprefix("all-")
            return GPUS[labels["gpuplane.io/gpu"]].mig_profiles[profile]
        if "nvidia.com/device-plugin.config" in labels:
            sharing = yaml.safe_load(data[labels["nvidia.com/device-plugin.config"]])["sharing"]
            (mechanism,) = sharing.values()
            return int(mechanism["resources"][0]["replicas"])
        return 1

    for r in plan.by_type("eks:index:ManagedNodeGroup"):
        labels = r.inputs["labels"]
        if "gpuplane.io/pool" in labels:
            gpu = GPUS[labels["gpuplane.io/gpu"]]
            n = gpu.aws.instances[r.inputs["instanceTypes"][0]]  # type: ignore[union-attr]
            sc = r.inputs["scalingConfig"]
            key = (labels["gpuplane.io/cluster"], labels["gpuplane.io/pool"])
            out[key] = (sc["minSize"] * n, sc["maxSize"] * n * per_gpu(labels))
    for r in plan.resources:
        if r.inputs.get("kind") == "NodePool":
            labels = r.inputs["spec"]["template"]["metadata"]["labels"]
            gpus = int(r.inputs["spec"]["limits"]["nvidia.com/gpu"])
            out[(labels["gpuplane.io/cluster"], labels["gpuplane.io/pool"])] = (0, gpus * per_gpu(labels))
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_slots_and_idle_floor_match_the_graph(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    graph = floors_and_slots_in_graph(plan)
    for row in plan.outputs["capacity"]["rows"]:
        if (row["cluster"], row["pool"]) in graph:
            floor, slots = graph[(row["cluster"], row["pool"])]
            assert (row["idleFloorGpus"], row["slotsAtMax"]) == (floor, slots), row
    assert plan.outputs["capacity"]["totals"]["idleFloorGpus"] == 0, "every shipped pool scales to zero"


@pytest.mark.parametrize("stack", FLEETS)
def test_fleet_regions_stay_within_quota(stack: str, plan_of: Callable[..., Plan]) -> None:
    raw = load_stack_config(stack)
    plan = plan_of(stack)
    quotas = {r["region"]: r.get("quota", {}) for r in raw["gpuplane:fleet"]["regions"]}
    used: dict[tuple[str, str], int] = {}
    for row in plan.outputs["capacity"]["rows"]:
        used[(row["region"], row["gpu"])] = used.get((row["region"], row["gpu"]), 0) + row["gpusAtMax"]
    for (region, gpu), n in used.items():
        assert n <= quotas[region].get(gpu, 10**9), (region, gpu, n)
    totals = raw["gpuplane:fleet"]["totals"]
    for pool, total in totals.items():
        assert sum(r["gpusAtMax"] for r in plan.outputs["capacity"]["rows"] if r["pool"] == pool) == total
    assert len(quotas) >= 3 and set(plan.outputs["regions"]) == set(quotas)


@pytest.mark.parametrize("stack", FLEETS)
def test_one_cluster_per_region_with_its_own_provider(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    regions = plan.outputs["regions"]
    cloud = "gcp" if stack.startswith("gcp") else "aws"
    providers = [r for r in plan.resources if r.type == f"pulumi:providers:{cloud}"]
    assert sorted(p.inputs["region"] for p in providers) == sorted(regions)
    clusters = plan.by_type("gcp:container/cluster:Cluster") or plan.by_type("eks:index:Cluster")
    assert len(clusters) == len(regions)
    per_region = {region: 0 for region in regions}
    for r in plan.resources:
        for region in regions:
            if f"-{region}" in r.name:
                per_region[region] += 1
    counts = set(per_region.values())
    assert all(n > 10 for n in per_region.values()), per_region
    # Resource counts differ only where the spread gave a region fewer pools.
    assert len(counts) <= 2, per_region
    (fleet,) = plan.by_type("gpuplane:index:GpuFleet")
    platforms = [r for r in plan.resources if r.parent == fleet.urn]
    assert len(platforms) == len(regions)


@pytest.mark.parametrize("stack", FLEETS)
def test_fleet_monitoring_names_cluster_and_region(stack: str, plan_of: Callable[..., Plan]) -> None:
    import yaml

    plan = plan_of(stack)
    jobs = yaml.safe_load(plan.outputs["scrapeConfig"])
    assert len(jobs) == len(plan.outputs["regions"])
    seen = set()
    for job in jobs:
        static = {
            r["target_label"]: r["replacement"]
            for r in job["relabel_configs"]
            if "replacement" in r and "source_labels" not in r
        }
        seen.add((static["cluster"], static["region"]))
        assert static["cluster"].endswith(static["region"])
    assert {region for _, region in seen} == set(plan.outputs["regions"])
    for r in plan.by_type(RELEASE):
        assert (
            r.inputs["chart"] != "kube-prometheus-stack"
            or r.inputs["values"]["prometheus"]["prometheusSpec"]["externalLabels"]["region"]
        )


@settings(max_examples=examples(60))
@given(
    quotas=st.lists(
        st.fixed_dictionaries({"l4": st.integers(0, 24), "a100-40gb": st.integers(0, 24)}), min_size=3, max_size=3
    ),
    inference=st.integers(0, 40),
    training=st.sampled_from([0, 8, 16, 24, 32]),
    fixed=st.integers(0, 3),
)
def test_allocate_keeps_every_region_within_quota(
    quotas: list[dict[str, int]], inference: int, training: int, fixed: int
) -> None:
    """Several pools share one GPU type's quota (a fixed pool plus a spread one): never above quota."""
    from gpuplane.config import ConfigError, parse_config
    from gpuplane.stack.fleet import allocate

    regions = ["us-central1", "europe-west4", "asia-southeast1"]
    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "f"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "fleet": {
            "regions": [{"region": r, "quota": q} for r, q in zip(regions, quotas, strict=True)],
            "totals": {"inference": inference, "training": training},
        },
        "gpuPools": [
            {"name": "always", "gpu": "l4", "maxNodes": max(fixed, 1)},
            {"name": "inference", "gpu": "l4", "maxNodes": 1},
            {"name": "training", "gpu": "a100-40gb", "gpusPerNode": 8, "maxNodes": 1},
        ],
    }
    try:
        cfg = parse_config(raw)
    except ConfigError as exc:
        assert all(path.startswith("gpuplane:fleet") for path, _ in exc.problems), exc.problems
        return
    alloc, problems = allocate(cfg)
    assert not problems and alloc == allocate(cfg)[0], "deterministic"
    for region, quota in zip(regions, quotas, strict=True):
        for gpu, pools in (("l4", ("always", "inference")), ("a100-40gb", ("training",))):
            used = sum(alloc[p].get(region, 0) for p in pools)
            assert used <= quota[gpu], (region, gpu, used, quota[gpu])
    assert sum(alloc["inference"].values()) == inference and sum(alloc["training"].values()) == training


# --- allocate on exact examples --------------------------------------------------------------------
# The fleet's GPU allocation on exact examples, worked out by hand from its documented rule (docs/fleets.md):
# fixed-size pools take `maxNodes x gpusPerNode` in every region first; then each `totals` pool is spread over the
# regions in order, whole nodes only, within what quota is left and where the catalog offers the GPU (H200 on GCP:
# us-central1, us-east4, europe-west1, asia-south1). A region without a quota for a GPU is unlimited for it.
#
# `allocate` is called on configs the config rules would refuse, to see each problem it reports (the Hypothesis
# property in test_fleet.py only ever sees configs without problems).


def cfg(regions: list[tuple[str, dict[str, int]]], totals: dict[str, int], pools: list[dict[str, Any]]) -> StackConfig:
    return StackConfig.model_validate(
        {
            "platform": "gke-standard",
            "cluster": {"name": "f"},
            "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
            "fleet": {"regions": [{"region": r, "quota": q} for r, q in regions], "totals": totals},
            "gpuPools": pools,
        }
    )


def pool(name: str, gpu: str = "h100", per_node: int = 8, nodes: int = 1) -> dict[str, Any]:
    return {"name": name, "gpu": gpu, "gpusPerNode": per_node, "maxNodes": nodes}


def test_fixed_pools_first_then_totals_in_region_order_within_what_is_left() -> None:
    # a: 8 per region (us-central1 16 -> 8 left; us-east4 8 -> 0 left, exactly its quota: no problem).
    # b: 8 spread: us-central1 has 8 left -> all there. c: 8 more: nothing left anywhere -> does not fit.
    config = cfg(
        [("us-central1", {"h100": 16}), ("us-east4", {"h100": 8})],
        {"b": 8, "c": 8, "nope": 8},
        [pool("b"), pool("a"), pool("c")],
    )
    alloc, problems = allocate(config)
    assert alloc == {"a": {"us-central1": 8, "us-east4": 8}, "b": {"us-central1": 8}}
    assert problems == [
        (("fleet", "totals", "nope"), "no GPU pool named 'nope'"),
        (("fleet", "totals", "c"), "8 GPUs do not fit: at most 0 within the regions' quota and availability"),
    ]


def test_a_fixed_pool_over_quota_is_reported_per_region() -> None:
    config = cfg([("us-central1", {"h100": 16}), ("us-east4", {"h100": 8})], {}, [pool("a", nodes=2)])
    alloc, problems = allocate(config)
    assert alloc == {"a": {"us-central1": 16, "us-east4": 16}}
    assert problems == [(("fleet", "regions"), "a needs 16 h100 in us-east4, quota left 8")]


def test_a_region_that_does_not_offer_the_gpu_is_skipped_and_reported() -> None:
    # H200 is not offered in europe-west4: the fixed pool is reported there and still placed in us-central1.
    config = cfg([("europe-west4", {}), ("us-central1", {})], {}, [pool("a", gpu="h200")])
    alloc, problems = allocate(config)
    assert alloc == {"a": {"us-central1": 8}}
    assert problems == [(("gpuPools", 0, "gpu"), "h200 is not offered in europe-west4 (catalog)")]


def test_totals_skip_regions_without_the_gpu_and_treat_no_quota_as_unlimited() -> None:
    # 24 H200: europe-west4 does not offer it (room 0), us-central1 has no H200 quota (unlimited): all 24 there.
    config = cfg([("europe-west4", {"l4": 8}), ("us-central1", {"l4": 8})], {"t": 24}, [pool("t", gpu="h200")])
    assert allocate(config) == ({"t": {"us-central1": 24}}, [])


def test_totals_fill_earlier_regions_first_in_whole_nodes() -> None:
    # 20 L4 in 4-GPU nodes: us-central1 has room 10 -> 8 (two nodes), us-east4 12 -> the remaining 12.
    config = cfg([("us-central1", {"l4": 10}), ("us-east4", {"l4": 12})], {"t": 20}, [pool("t", gpu="l4", per_node=4)])
    assert allocate(config) == ({"t": {"us-central1": 8, "us-east4": 12}}, [])


@pytest.mark.parametrize("length, refused", [(40, False), (41, True)])
def test_cluster_name_plus_region_is_at_most_40_characters(length: int, refused: bool) -> None:
    """The region's cluster is named `NAME-REGION`; EKS and GKE cluster names allow 100 and 40 characters (GKE's
    is the tighter, and the fleet check uses it for both clouds)."""
    raw = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config("gcp-fleet").items()}
    longest = max((r["region"] for r in raw["fleet"]["regions"]), key=len)
    raw["cluster"] = {**raw["cluster"], "name": "c" * (length - len(longest) - 1)}
    where = f"gpuplane:fleet.regions[{[r['region'] for r in raw['fleet']['regions']].index(longest)}].region"
    if refused:
        assert config_problems(raw)[where] == "cluster name + region exceeds 40 characters"
    else:
        from gpuplane.config import parse_config

        parse_config(raw)


@pytest.mark.parametrize("stack", FLEETS)
def test_fleet_stack_outputs_are_per_region(stack: str, plan_of: Callable[..., Plan]) -> None:
    """A fleet's outputs: the platform, its regions in config order, each region's cluster outputs (without the
    per-cluster ones gathered fleet-wide), every kubeconfig as one secret, one scrape job per cluster, one rule
    file (the same rules on every cluster)."""
    import yaml

    cfg = load_stack_config(stack)
    regions = [r["region"] for r in cfg["gpuplane:fleet"]["regions"]]
    out = plan_of(stack).outputs
    assert out["platform"] == cfg["gpuplane:platform"]
    assert out["regions"] == regions
    assert sorted(out["clusters"]) == sorted(regions)  # a map (the engine keeps no key order)
    for region, outputs in out["clusters"].items():
        assert outputs, region
        assert not {"kubeconfig", "scrapeConfig", "prometheusRules", "platform"} & set(outputs), region
    assert out["kubeconfigs"] == "[secret]"
    name = cfg["gpuplane:cluster"]["name"]
    jobs = yaml.safe_load(out["scrapeConfig"])
    assert len(jobs) == len(regions)
    assert len({j["job_name"] for j in jobs}) == len(regions)
    assert all(any(f"{name}-{r}" in yaml.safe_dump(j) for j in jobs) for r in regions)
    rules = yaml.safe_load(out["prometheusRules"])
    assert {g["name"] for g in rules["groups"]}


@pytest.mark.parametrize("stack", FLEETS)
def test_each_region_config_is_an_ordinary_stack_with_its_share(stack: str) -> None:
    """`region_configs`: per fleet region, the pools with a share there (and only those), each capped at its share
    in whole nodes (minNodes at most that); the cluster named NAME-REGION; no fleet left; the cloud's region
    (and on GCP the zones that offer the pools' GPUs, unless the region names its own)."""
    from gpuplane.catalog import lookup
    from gpuplane.catalog.availability import GCP_ZONES
    from gpuplane.config import parse_config
    from gpuplane.stack.fleet import region_configs

    raw = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config(stack).items()}
    cfg = parse_config(raw)
    alloc, _ = allocate(cfg)
    got = dict(region_configs(cfg))
    assert list(got) == [r.region for r in cfg.fleet.regions]  # type: ignore[union-attr]
    for r in cfg.fleet.regions:  # type: ignore[union-attr]
        one = got[r.region]
        assert one.fleet is None
        assert one.cluster.name == f"{cfg.cluster.name}-{r.region}"
        expected = {
            p.name: alloc[p.name][r.region] // p.gpusPerNode for p in cfg.gpuPools if alloc[p.name].get(r.region)
        }
        assert {p.name: p.maxNodes for p in one.gpuPools} == expected, r.region
        floors = {p.name: p.minNodes for p in cfg.gpuPools}
        assert all(p.minNodes == min(floors[p.name], p.maxNodes) for p in one.gpuPools), r.region
        cloud = one.gcp or one.aws
        assert cloud is not None and cloud.region == r.region
        if one.gcp is not None:
            assert one.gcp.zones, r.region
            offered = set().union(
                *(GCP_ZONES[lookup(p.gpu).gcp.accelerator][r.region] for p in one.gpuPools)  # type: ignore[union-attr]
            )
            assert set(one.gcp.zones) == set(r.zones or offered), r.region


@pytest.mark.parametrize("stack", ["gcp-standard", "aws-managed"])
def test_a_stack_without_a_fleet_is_its_own_region(stack: str) -> None:
    from gpuplane.config import parse_config
    from gpuplane.stack.fleet import region_configs

    cfg = parse_config({k.removeprefix("gpuplane:"): v for k, v in load_stack_config(stack).items()})
    region = (cfg.gcp or cfg.aws).region  # type: ignore[union-attr]
    assert region_configs(cfg) == [(region, cfg)]


# --- spread, region configs and the fleet component on exact examples ------------------------------------------
# Expected values worked out by hand. Zones and regions from the GPU catalog's availability table
# (catalog/availability.py, GCP "GPU regions and zones"): L4 (nvidia-l4) in us-central1 a/b/c, not in us-east5;
# H100 (nvidia-h100-80gb) in us-central1 a/c and us-east5 a; A4X (nvidia-gb200) has no verified zones at all.


def test_spread_gives_a_region_missing_from_room_nothing() -> None:
    """`spread` is public (docs/components.md, "Pure functions worth calling directly"): a region with no `room`
    entry has no room, in whole nodes of any size, and the "do not fit" message counts it as 0."""
    assert spread(3, 1, ["a", "b"], {"b": 5}) == {"b": 3}
    assert spread(8, 4, ["a", "b"], {"b": 8}) == {"b": 8}
    with pytest.raises(ValueError, match=r"^9 GPUs do not fit: at most 5 within the regions' quota and availability$"):
        spread(9, 1, ["a", "b"], {"b": 5})


def test_spread_places_single_gpu_nodes() -> None:
    # 1-GPU nodes: a region with room for one GPU takes one, the rest go on in order.
    assert spread(3, 1, ["a", "b"], {"a": 1, "b": 5}) == {"a": 1, "b": 2}
    assert spread(1, 1, ["a"], {"a": 5}) == {"a": 1}


def test_totals_of_single_gpu_nodes_skip_a_region_without_the_gpu() -> None:
    # L4 is not offered in us-east5 (catalog): no GPU there even in 1-GPU nodes; us-central1 has no quota: all 3.
    config = cfg([("us-east5", {}), ("us-central1", {})], {"t": 3}, [pool("t", gpu="l4", per_node=1)])
    assert allocate(config) == ({"t": {"us-central1": 3}}, [])


def test_region_configs_of_a_fleet_with_an_unlisted_region() -> None:
    """A validated fleet (allowUnlistedRegions) over us-east5 (no L4), us-central1 (2 L4 of quota) and us-south9
    (a region the catalog does not list: it has no say there, docs/config.md `allowUnlistedRegions`).
    3 L4 in 1-GPU nodes: us-east5 0, us-central1 2, us-south9 1. The fixed H100 pool: 1 node everywhere.
    A pool's floor (minNodes 2) is capped at its region's ceiling; GCP zones are those the catalog lists for the
    region's pools, none for a region it does not list (GKE's default zones then)."""
    from gpuplane.config import parse_config
    from gpuplane.stack.fleet import region_configs

    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "f"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "allowUnlistedRegions": True,
        "fleet": {
            "regions": [{"region": "us-east5"}, {"region": "us-central1", "quota": {"l4": 2}}, {"region": "us-south9"}],
            "totals": {"inference": 3},
        },
        "gpuPools": [
            {"name": "inference", "gpu": "l4", "minNodes": 2, "maxNodes": 2},
            {"name": "training", "gpu": "h100", "gpusPerNode": 8, "maxNodes": 1},
        ],
    }
    config = parse_config(raw)
    assert allocate(config) == (
        {
            "training": {"us-east5": 8, "us-central1": 8, "us-south9": 8},
            "inference": {"us-central1": 2, "us-south9": 1},
        },
        [],
    )
    got = {
        region: (
            one.cluster.name,
            one.gcp.region,  # type: ignore[union-attr]
            one.gcp.zones,  # type: ignore[union-attr]
            [(p.name, p.minNodes, p.maxNodes) for p in one.gpuPools],
        )
        for region, one in region_configs(config)
    }
    assert got == {
        "us-east5": ("f-us-east5", "us-east5", ["us-east5-a"], [("training", 0, 1)]),
        "us-central1": (
            "f-us-central1",
            "us-central1",
            ["us-central1-a", "us-central1-b", "us-central1-c"],
            [("inference", 2, 2), ("training", 0, 1)],
        ),
        "us-south9": ("f-us-south9", "us-south9", [], [("inference", 1, 1), ("training", 0, 1)]),
    }


NVL72 = {
    "name": "nvl",
    "gpu": "gb200",
    "gpusPerNode": 4,
    "maxNodes": 1,
    "capacity": ["reserved"],  # A4X is sold by reservation only
    "reservation": {"names": ["a4x"]},
}


def test_a_gpu_without_catalog_zones_leaves_each_fleet_regions_zones_to_gke() -> None:
    """A4X (GB200) has no zones in the catalog (not verified): the catalog has no say where it is offered, and each
    region's cluster gets no zones from it (GKE's default zones)."""
    from gpuplane.config import parse_config
    from gpuplane.stack.fleet import region_configs

    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "f", "kubernetesVersion": "1.35"},  # the DRA driver of A4X needs 1.34+
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "fleet": {
            "regions": [{"region": "us-central1", "quota": {"gb200": 4}}, {"region": "us-east4"}],
            "totals": {"nvl": 8},
        },
        "gpuPools": [NVL72],
    }
    config = parse_config(raw)
    assert allocate(config) == ({"nvl": {"us-central1": 4, "us-east4": 4}}, [])
    zones = {r: one.gcp.zones for r, one in region_configs(config)}  # type: ignore[union-attr]
    pools = {r: [(p.name, p.maxNodes) for p in one.gpuPools] for r, one in region_configs(config)}
    assert zones == {"us-central1": [], "us-east4": []}
    assert pools == {"us-central1": [("nvl", 1)], "us-east4": [("nvl", 1)]}


def test_zone_check_skips_a_gpu_without_catalog_zones_and_reports_the_others() -> None:
    # us-central1-f: the catalog lists L4 in us-central1-a/b/c only; A4X has no zones to judge by.
    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "f", "kubernetesVersion": "1.35"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1", "zones": ["us-central1-f"]},
        "gpuPools": [NVL72, {"name": "inference", "gpu": "l4", "maxNodes": 1}],
    }
    assert config_problems(raw) == {
        "gpuplane:gpuPools[1].gpu": "l4 is not offered in zones ['us-central1-f'] "
        "(catalog: ['us-central1-a', 'us-central1-b', 'us-central1-c'])"
    }


def test_gke_standard_without_zones_has_no_zone_problems() -> None:
    """No `gcp.zones`: GKE picks the region's default zones (docs/config.md), so there are none to check."""
    from gpuplane.config import parse_config

    raw = {
        "platform": "gke-standard",
        "cluster": {"name": "f"},
        "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
        "gpuPools": [{"name": "inference", "gpu": "l4", "maxNodes": 2}],
    }
    assert parse_config(raw).gcp.zones == []  # type: ignore[union-attr]


@pytest.mark.parametrize("platform, unknown", [("gke-standard", "gcp"), ("eks-managed", "aws")])
def test_a_stack_whose_location_is_unknown_is_one_region_without_a_name(platform: str, unknown: str) -> None:
    """A component given its cluster's location as an Output leaves the cloud section unknown
    (`parse_config(unknown=...)`, config/load.py UNKNOWABLE): no region to check the pools against, and the
    stack is its own single region, named "" (no stand-in)."""
    from gpuplane.config import parse_config
    from gpuplane.stack.fleet import region_configs, region_problems

    raw = {
        "platform": platform,
        "cluster": {"name": "f"},
        "gpuPools": [{"name": "inference", "gpu": "l4", "maxNodes": 1}],
    }
    config = parse_config(raw, unknown=(unknown,))
    assert config.gcp is None and config.aws is None
    assert region_problems(config) == []
    assert region_configs(config) == [("", config)]


def test_gpu_fleet_in_a_users_program_keeps_its_options_and_every_kubeconfig() -> None:
    """`fleet.build` from one's own Pulumi program (as tests/test_library.py runs components under mocks): the
    GpuFleet component takes the caller's options (here its parent), each region's platform sits under it, and
    `kubeconfigs` is one secret holding each region's kubeconfig, whose context is GKE's
    `gke_PROJECT_LOCATION_CLUSTER` (what `gcloud container clusters get-credentials` writes) for the region's
    cluster `NAME-REGION` (docs/fleets.md)."""
    import pulumi
    import yaml
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    from gpuplane.config import parse_config
    from gpuplane.plan.mocks import PlanMocks
    from gpuplane.plan.runner import install
    from gpuplane.plan.stackfile import StackFile
    from gpuplane.stack.fleet import build

    config = parse_config(
        {
            "platform": "gke-standard",
            "cluster": {"name": "f"},
            "gcp": {"project": "acme-ml-prod", "region": "us-central1"},
            "fleet": {"regions": [{"region": "us-central1", "quota": {"l4": 4}}, {"region": "us-east4"}]},
            "gpuPools": [{"name": "inference", "gpu": "l4", "maxNodes": 4}],
        }
    )
    outputs: dict[str, Any] = {}

    def program() -> None:
        mine = pulumi.ComponentResource("acme:index:Platform", "acme")
        outputs.update(build(config, "gpuplane.gcp.platform:build", opts=pulumi.ResourceOptions(parent=mine)))

    monitor = install(StackFile(project="lib", stack="test", config={}), PlanMocks())
    _sync_await(run_pulumi_func(program))
    regs = list(monitor.registrations)
    (mine,) = [r for r in regs if r.type == "acme:index:Platform"]
    (fleet,) = [r for r in regs if r.type == "gpuplane:index:GpuFleet"]
    assert fleet.parent == mine.urn
    assert fleet.urn == "urn:pulumi:test::lib::acme:index:Platform$gpuplane:index:GpuFleet::f"
    assert len([r for r in regs if r.parent == fleet.urn]) == 2  # one platform per region
    kubeconfigs = outputs["kubeconfigs"]
    assert _sync_await(kubeconfigs.is_secret())
    documents = _sync_await(kubeconfigs.future())
    assert sorted(documents) == ["us-central1", "us-east4"]
    for region, text in documents.items():
        assert yaml.safe_load(text)["current-context"] == f"gke_acme-ml-prod_{region}_f-{region}", region


def test_every_catalog_aws_family_has_regions() -> None:
    """Each AWS instance family of the GPU catalog has a row in the availability table: a family without one would
    be "not offered" in every region (`stack.fleet.offered`) and listed nowhere (`where_offered`)."""
    from gpuplane.catalog.availability import AWS_REGIONS

    families = {i.split(".")[0] for gpu in GPUS.values() if gpu.aws is not None for i in gpu.aws.instances}
    assert families - set(AWS_REGIONS) == set()
