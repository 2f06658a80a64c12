"""The rightsizing rules as pure functions (workload names, GPU models, shapes that fit, confidence, prices,
pool floors, settings), and its queries on every integration's labels with `promtool test rules`: the same
answers whatever label the integration stores the node and the workload's namespace in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.catalog import GPUS
from gpuplane.catalog.availability import PRICES, SPOT_FRACTION
from gpuplane.config import parse_flat
from gpuplane.config.model import StackConfig
from gpuplane.config.prices import machine_of
from gpuplane.errors import InputError
from gpuplane.monitoring.cost import PoolCost
from gpuplane.monitoring.labels import SCRAPE_CONFIG, LabelModel, all_models
from gpuplane.monitoring.rules import METRIC_SETS
from gpuplane.plan import load
from gpuplane.rightsize import check_url
from gpuplane.rightsize.observe import PoolUse, Workload, held_gpus, owned, owners, pool_use
from gpuplane.rightsize.query import POOL, USAGE, Window, pool_queries, series_queries
from gpuplane.rightsize.recommend import advise, advise_pool, in_region
from gpuplane.rightsize.report import parse_at, pool_note, settings
from gpuplane.rightsize.rules import (
    COMPUTE_TFLOPS,
    GB_IN_GIB,
    MIG_UNLISTED_FRACTION,
    MIG_USABLE_GIB,
    USABLE_GIB,
    Need,
    fitting_shapes,
    gpu_of_model,
    verdict,
    workload_name,
)

from . import labelled_gpus as fx
from .conftest import ROOT
from .test_promtool import promtool_test


def config(stack: str) -> StackConfig:
    return parse_flat(load(stack, ROOT).flat_config())


@pytest.mark.parametrize(
    ("pod", "workload"),
    [
        ("chat-7d9f8b6c4d-x2m4q", "chat"),  # Deployment
        ("train-0", "train"),  # StatefulSet
        ("eval-8x2kq", "eval"),  # Job
        ("nightly-29012345-8x2kq", "nightly"),  # CronJob
        ("shard-3-8x2kq", "shard"),  # indexed Job
        ("notebook", "notebook"),  # bare pod
        ("my-model", "my-model"),  # vowels: not a random suffix
    ],
)
def test_workload_names_drop_controller_suffixes(pod: str, workload: str) -> None:
    assert workload_name(pod) == workload


def test_gpu_models_name_catalog_gpus() -> None:
    names = {
        "NVIDIA H100 80GB HBM3": "h100",
        "NVIDIA A100-SXM4-80GB": "a100-80gb",
        "NVIDIA A100-SXM4-40GB": "a100-40gb",
        "NVIDIA L4": "l4",
        "NVIDIA L40S": "l40s",
        "Tesla T4": "t4",
        "NVIDIA A10G": "a10g",
        "NVIDIA GB200": "gb200",
        "NVIDIA B200": "b200",
        "NVIDIA H200": "h200",
        "NVIDIA GH200 480GB": None,  # Grace Hopper carries an H100 (96 or 144 GB), no catalog GPU
        "Radeon": None,
    }
    assert {m: gpu_of_model(m) for m in names} == names
    assert set(COMPUTE_TFLOPS) <= set(GPUS)


def test_confidence_verdicts() -> None:
    assert verdict(7 * 24, 0.05) == "high"
    assert verdict(7 * 24, 0.06) == "medium"
    assert verdict(24, 0.2) == "medium"
    assert (verdict(23.9, 0.0), verdict(48, 0.21)) == ("low", "low")


def shapes(gpu: str, memory: float, util: float, platform: str = "gke-standard", gpus: int = 1) -> list[str]:
    from gpuplane.catalog import PLATFORMS

    p = PLATFORMS[platform]
    return [s.label for s in fitting_shapes(gpu, Need.of(memory, util, 0.2), p.cloud, p.sharing, gpus)]


def test_shapes_that_fit() -> None:
    """Every shape that holds the need (the price picks among them): MIG first in catalog order, other GPUs after."""
    assert shapes("h100", 6, 11)[:2] == ["mig 1g.10gb (h100)", "mig 1g.20gb (h100)"]
    assert "mig 1g.10gb (h100)" not in shapes("h100", 6, 12), "14.4% of the GPU needs a 2g slice"
    assert shapes("h100", 60, 97) == ["whole b200"], "only a bigger GPU holds it"
    assert shapes("h100", 6, 11, gpus=2) == [], "pods with several GPUs keep whole GPUs"
    assert shapes("a100-40gb", 15, 30)[:2] == ["mig 3g.20gb (a100-40gb)", "whole l4"], "GKE offers no 4g profiles"
    assert "mig 4g.20gb (a100-40gb)" not in shapes("a100-40gb", 15, 30, "eks-managed"), "one per GPU: no cheaper"
    assert shapes("h100", 15, 5, "eks-managed")[0] == "mig 1g.20gb (h100)", "EKS has them all; GKE too for H100"
    assert shapes("l4", 3, 20)[:2] == ["mps x4 (l4)", "whole t4"], "no MIG on an L4: a share, or another GPU"
    assert shapes("l4", 3, 20, "gke-autopilot")[0] == "time-slicing x4 (l4)", "Autopilot has no MPS"
    assert shapes("l40s", 3, 5, "eks-automode")[:2] == ["whole t4", "whole v100"], "Auto Mode shares nothing"
    assert "whole t4" not in shapes("l4", 3, 60), "60% of an L4's 121 TFLOPS, +20%, is more than a T4's 65"


def test_shapes_hold_the_usable_memory_not_the_nominal_gb() -> None:
    """`nvidia-smi mig -lgip` lists what a MIG instance holds (MIG user guide, "List GPU Instance Profiles":
    A100-40GB 1g.5gb 4.75 GiB; an H100's 1g.10gb 9.75 GiB); `nvidia-smi` reports 23034 MiB on an L4."""
    assert shapes("a100-40gb", 3.95, 5)[0] == "mig 1g.5gb (a100-40gb)", "3.95 GiB +20% = 4.74 <= 4.75"
    assert shapes("a100-40gb", 4.0, 5)[0] == "mig 2g.10gb (a100-40gb)", "4.0 GiB +20% = 4.8 > 4.75: not 1g.5gb"
    assert shapes("h100", 8.2, 5)[0] == "mig 1g.20gb (h100)", "8.2 GiB +20% = 9.84 > 9.75: not 1g.10gb"
    assert shapes("l4", 4.7, 5)[0] == "mps x3 (l4)", "23034 MiB / (4.7 GiB +20%) = 3.99: three, not 24 / 5.64 = 4"
    observed = fitting_shapes("l4", Need.of(3, 5, 0.2), "gcp", ("mps",), 1, observed_gib=10.0)
    assert observed[0].detail == "mps x2", "the exporter's FB_USED + FB_FREE (10 GiB) over 3.6 GiB: two"


def test_memory_tables_and_their_fallbacks() -> None:
    """Every listed MIG instance holds less than its nominal GB and no less than the unlisted rule gives;
    every listed whole GPU holds no less than its nominal GB read as decimal gigabytes (the rule for others)."""
    for gpu, profiles in MIG_USABLE_GIB.items():
        for profile, gib in profiles.items():
            nominal = float(profile.split(".")[1].removesuffix("gb"))
            assert nominal * MIG_UNLISTED_FRACTION <= gib < nominal, (gpu, profile)
        assert set(GPUS[gpu].mig_profiles) - set(profiles) <= {"3g.71gb", "4g.71gb"}, gpu
    for gpu, gib in USABLE_GIB.items():
        assert GPUS[gpu].memory_gib * GB_IN_GIB <= gib <= GPUS[gpu].memory_gib, gpu


def workload(
    gpu: str = "h100", memory: float | None = 6.0, util: float | None = 11.0, pool: str = "finetune", **kw: Any
) -> Workload:
    fields: dict[str, Any] = {
        "cluster": "ml-dws",
        "namespace": "research",
        "name": "ft",
        "pool": pool,
        "pool_from": "node label",
        "gpu": gpu,
        "mig": "",
        "pods": 1,
        "gpus_per_pod": 1,
        "util_peak": util,
        "util_p95": util,
        "memory_peak_gib": memory,
        "memory_total_gib": None,
        "samples": 100,
        "expected_samples": 100,
        "first": 0.0,
        "last": 24 * 3600.0,
        "gpu_hours": 24.0,
    }
    return Workload(**(fields | kw))


def test_advice_for_spot_only_unknown_and_several_gpus() -> None:
    cfg = config("gcp-standard")
    training = next(p for p in cfg.gpuPools if p.name == "training")
    w = workload("a100-40gb", 38, 95, "training")
    keep = advise(cfg, training, w, 0.2, False, 24)
    assert keep.action == "nothing-smaller" and keep.usd_per_month_saved == 0
    spot = advise(cfg, training, w, 0.2, True, 24)
    per_gpu = PRICES["a2-highgpu-8g"] / 8
    assert spot.action == "spot" and spot.target.spot
    assert spot.usd_per_month_saved == pytest.approx(730 * per_gpu * (1 - 0.35), rel=1e-3)
    assert advise(cfg, training, workload("a100-40gb", None, 5, "training"), 0.2, False, 24).action == "unknown"
    multi = advise(cfg, training, workload("a100-40gb", 4, 5, "training", gpus_per_pod=8), 0.2, False, 24)
    assert multi.action == "keep" and "NVLink" in multi.reason
    dws = config("gcp-dws")
    serving = next(p for p in dws.gpuPools if p.name == "serving")
    assert in_region(cfg, training, "t4") and not in_region(dws, serving, "t4"), "no T4 in us-east4"


def test_an_oversized_min_nodes_floor_is_priced_and_a_ceiling_is_not() -> None:
    cfg = config("aws-managed")
    inference = next(p for p in cfg.gpuPools if p.name == "inference").model_copy(update={"minNodes": 4})
    floor = advise_pool(cfg, "us-east-1", inference, PoolUse(peak_nodes=4, peak_busy_nodes=1, peak_gpus=1), 0.2)
    spot = round(PRICES["g5.2xlarge"] * SPOT_FRACTION["aws"], 3)
    assert (floor.floor, floor.recommended_floor) == (4, 2), "busy peak 1 node, +20%: a floor of 2 keeps the margin"
    assert floor.usd_per_month_saved == round(2 * spot * 730, 2)
    assert any("lower it to 2" in a for a in floor.advice)
    kept = advise_pool(cfg, "us-east-1", inference.model_copy(update={"minNodes": 2}), PoolUse(2, 1, 1), 0.2)
    assert kept.recommended_floor is None and kept.usd_per_month_saved == 0, "2 is the busy peak with its margin"
    idle = advise_pool(cfg, "us-east-1", inference, PoolUse(4, 0, 0), 0.2)
    assert idle.recommended_floor == 0, "nothing busy: no floor"
    ceiling = advise_pool(cfg, "us-east-1", inference.model_copy(update={"minNodes": 0}), PoolUse(4, 4, 4), 0.2)
    assert ceiling.recommended_floor is None and ceiling.usd_per_month_saved == 0
    assert any("costs nothing unless reached" in a for a in ceiling.advice)
    reached = advise_pool(cfg, "us-east-1", inference, PoolUse(10, 10, 10), 0.2)
    assert any("pods may have waited" in a for a in reached.advice)


def test_a_workload_on_spot_keeps_spot_and_is_priced_as_such() -> None:
    cfg = config("gcp-fleet")
    inference = next(p for p in cfg.gpuPools if p.name == "inference")
    assert inference.spot
    a = advise(cfg, inference, workload("l4", 3, 20, "inference"), 0.2, False, 24)
    l4_spot = round(PRICES["g2-standard-4"] * SPOT_FRACTION["gcp"], 3)
    assert (a.action, a.target.shape.detail, a.current.spot, a.target.spot) == ("share", "mps x4", True, True)
    assert a.target.usd_per_hour == pytest.approx(l4_spot / 4)
    assert "interruption-tolerant" not in a.reason, "it already runs on spot"


def test_your_own_rate_makes_the_spot_saving_unknown_and_says_so() -> None:
    """`gpuplane:prices.onDemand` is the rate you pay for the machine whatever the capacity type
    (`catalog.pricing.node_rate`), so spot costs the same: the advice says the saving is unknown."""
    base = config("gcp-standard")
    training = next(p for p in base.gpuPools if p.name == "training")
    machine = machine_of("gcp", training)
    cfg = base.model_copy(update={"prices": base.prices.model_copy(update={"onDemand": {machine: 30.0}})})
    a = advise(cfg, training, workload("a100-40gb", 38, 95, "training"), 0.2, True, 24)
    assert a.action == "nothing-smaller" and not a.target.spot
    assert f"spot saving on {machine} unknown: your gpuplane:prices.onDemand rate for it" in a.reason
    listed = advise(base, training, workload("a100-40gb", 38, 95, "training"), 0.2, True, 24)
    assert listed.action == "spot" and "unknown" not in listed.reason
    not_interruptible = advise(cfg, training, workload("a100-40gb", 38, 95, "training"), 0.2, False, 24)
    assert "spot saving" not in not_interruptible.reason, "spot is not asked about"


def test_a_mig_workload_is_decided_on_memory_with_its_utilisation_unknown() -> None:
    """dcgm-exporter reports no DCGM_FI_DEV_GPU_UTIL for MIG instances (or zeros): unknown, never 0. The
    workload is taken to use all of its instance's compute, so a smaller instance must have as many slices."""
    cfg = config("gcp-dws")
    finetune = next(p for p in cfg.gpuPools if p.name == "finetune")
    small = advise(cfg, finetune, workload("h100", 6, None, "finetune", mig="1g.20gb"), 0.2, False, 24)
    assert (small.action, small.target.shape.detail) == ("mig", "1g.10gb"), "1 slice either way; 7.2 <= 9.75 GiB"
    assert "utilisation unknown" in small.reason
    wide = advise(cfg, finetune, workload("h100", 6, None, "finetune", mig="3g.40gb"), 0.2, False, 24)
    assert wide.action == "keep", "3 slices of compute may be in use: a 1g.10gb would hold the memory only"
    assert "utilisation unknown" in wide.reason and "43% of the GPU" in wide.reason


def test_mig_instances_are_held_gpus_without_utilisation() -> None:
    """A MIG instance with memory series but no utilisation (or zeros) is a held GPU whose utilisation is unknown."""
    key = {"cluster": "c1", "kubernetes_node": "n1", "gpu": "0", "modelName": "NVIDIA H100 80GB HBM3"}
    mig = key | {"GPU_I_ID": "3", "GPU_I_PROFILE": "1g.10gb", "namespace": "ml", "pod": "nb-0"}
    whole = key | {"gpu": "1", "namespace": "ml", "pod": "train-0"}
    answers = {
        "memoryPeakGib": [(mig, 4.0), (whole, 30.0)],
        "utilPeak": [(mig, 0.0), (whole, 80.0)],
        "samples": [(mig, 100.0), (whole, 100.0)],
    }
    held = {h.pod: h for h in held_gpus(answers, SCRAPE_CONFIG)}
    assert (held["nb-0"].mig, held["nb-0"].util_peak, held["nb-0"].memory_peak_gib) == ("1g.10gb", None, 4.0)
    assert (held["train-0"].util_peak, held["train-0"].samples) == (80.0, 100)
    del answers["utilPeak"]
    assert [h.pod for h in held_gpus(answers, SCRAPE_CONFIG)] == ["nb-0", "train-0"], "memory alone says it was held"


def test_workloads_are_named_by_their_owners_where_kube_state_metrics_has_them() -> None:
    pod = {"cluster": "c1", "namespace": "ml"}
    answers = {
        "podOwners": [
            (pod | {"pod": "chat-6c9f7b8d4f-k2x7p", "owner_kind": "ReplicaSet", "owner_name": "chat-6c9f7b8d4f"}, 1.0),
            (pod | {"pod": "nightly-29012345-8x2kq", "owner_kind": "Job", "owner_name": "nightly-29012345"}, 1.0),
            (pod | {"pod": "ft-llama-master-0", "owner_kind": "PyTorchJob", "owner_name": "ft-llama"}, 1.0),
            (pod | {"pod": "bench-2024", "owner_kind": "<none>", "owner_name": "<none>"}, 1.0),
            ({"namespace": "ml", "pod": "eval-0", "owner_kind": "StatefulSet", "owner_name": "eval"}, 1.0),
        ],
        "replicaSetOwners": [
            (pod | {"replicaset": "chat-6c9f7b8d4f", "owner_kind": "Deployment", "owner_name": "chat"}, 1.0)
        ],
        "jobOwners": [(pod | {"job_name": "nightly-29012345", "owner_kind": "CronJob", "owner_name": "nightly"}, 1.0)],
    }
    assert owned(answers)["ReplicaSet"] == ["chat-6c9f7b8d4f"] and owned(answers)["Job"] == ["nightly-29012345"]
    assert owners(answers, "cluster", ["c1"]) == {
        ("c1", "ml", "chat-6c9f7b8d4f-k2x7p"): "chat",
        ("c1", "ml", "nightly-29012345-8x2kq"): "nightly",
        ("c1", "ml", "ft-llama-master-0"): "ft-llama",  # the name rule would say ft-llama-master
        ("c1", "ml", "bench-2024"): "bench-2024",  # no owner: its own workload (the name rule would say bench)
        ("c1", "ml", "eval-0"): "eval",  # no cluster label: the stack's one cluster
    }
    assert ("c1", "ml", "eval-0") not in owners(answers, "cluster", ["c1", "c2"]), "a fleet cannot place it"


def test_the_note_says_why_no_pool_was_compared() -> None:
    flag = "--metric-labels-allowlist=nodes=[cloud.google.com/gke-nodepool]"
    assert "has no kube_node_labels (kube-state-metrics)" in pool_note(SCRAPE_CONFIG, [], ["c1"], flag)
    unlabelled = [({"node": "n1"}, 1.0)]
    assert "no kube_node_labels matching a pool" in pool_note(SCRAPE_CONFIG, unlabelled, ["c1"], flag)
    fleet = pool_note(SCRAPE_CONFIG, unlabelled, ["c1", "c2"], flag)
    assert "kube_node_labels without a cluster label of the stack's clusters" in fleet and flag in fleet


def test_credentials_in_the_url_are_refused_and_never_echoed() -> None:
    for url in ("http://admin:s3cret@prometheus:9090", "ftp://admin:s3cret@prometheus"):
        with pytest.raises(InputError) as exc:
            check_url(url)
        assert "s3cret" not in str(exc.value) and "***@prometheus" in str(exc.value)
        assert exc.value.argument == "--prometheus"


def test_kube_state_metrics_without_a_cluster_label_counts_for_a_single_cluster_only() -> None:
    answers = {"peakNodes": [({POOL: "a"}, 3.0)], "peakBusyNodes": [({"cluster": "c1", POOL: "a"}, 1.0)]}
    assert pool_use(answers, "cluster", ["c1"]) == {("c1", "a"): PoolUse(3, 1, 0)}
    fleet = pool_use(answers, "cluster", ["c1", "c2"])
    assert fleet[("c1", "a")] == PoolUse(None, 1, 0) and fleet[("", "a")].peak_nodes == 3


def test_settings_refuse_bad_arguments() -> None:
    cfg = config("gcp-dws")
    s = settings(cfg, "7d", None, ["research", "prod/chat"], "2026-01-01T00:00:00Z", 0)
    assert (s.window.seconds, s.window.step, s.margin, s.at) == (604800, "300s", 0.2, 1767225600.0)
    assert s.tolerates("research", "x") and s.tolerates("prod", "chat") and not s.tolerates("prod", "web")
    assert settings(cfg, "1h", 10, [], "5", 0).window.step == "15s"
    assert settings(cfg, "90d", None, [], None, 0).window.step == "3858s", "90 days over 2016 steps"
    for args, argument in (
        (("7days", None, []), "--window"),
        (("5m", None, []), "--window"),
        (("91d", None, []), "--window"),
        (("1000000w", None, []), "--window"),
        (("7d", 150.0, []), "--margin"),
        (("7d", None, ["Research"]), "--interruptible"),
    ):
        with pytest.raises(InputError) as exc:
            settings(cfg, *args, None, 0)  # type: ignore[arg-type]
        assert exc.value.argument == argument
    with pytest.raises(InputError, match="no UTC offset"):
        parse_at("2026-01-01T00:00:00", 0)


# --- the queries on every integration's labels (promtool test rules) -----------------------------------

WINDOW = Window("30m", 1800, 60)
POOLS = {"gpu-1": "a", "gpu-2": "a", "gpu-3": "b", "gpu-4": "b"}
POOL_LABEL = "label_gpuplane_io_pool"
HELD = [g for g in fx.GPUS if g.workload]
TOTAL_GIB = 40.0


def _peak(g: fx.Gpu) -> float:
    return g.util + 1


def _memory_gib(g: fx.Gpu) -> float:
    return 2.0 * (HELD.index(g) + 1)


def _mig(g: fx.Gpu) -> bool:
    return any(k == "GPU_I_ID" for k, _ in g.extra)


def _key_labels(model: LabelModel, g: fx.Gpu) -> dict[str, str]:
    """The labels a per-GPU answer carries: `query.series_key`, canonical workload names."""
    assert g.workload is not None
    out = {model.cluster: fx.CLUSTER, model.node: g.node, METRIC_SETS[model.metrics].gpu_label: g.gpu}
    if model.metrics == "dcgm":
        out |= {k: v for k, v in g.extra if k.startswith("GPU_I_")} | {"modelName": "NVIDIA A100"}
    return out | {"namespace": g.workload[0], "pod": g.workload[1]}


def _pool(name: str, *exprs: tuple[str, str]) -> PoolCost:
    return PoolCost(name, None, 1, tuple({"key": k, "operator": "In", "values": [v]} for k, v in exprs))


def _series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    return {"series": fx.selector(metric, labels), "values": values}


def query_tests(model: LabelModel) -> dict[str, Any]:
    """The stored series of `labelled_gpus` on `model`, except that MIG instances have no utilisation series
    (dcgm-exporter writes none for them) but memory series like every held GPU."""
    usage = USAGE[model.metrics]
    util = METRIC_SETS[model.metrics].util
    held = {fx.selector(util, fx.stored(model, g)): g for g in HELD}
    inputs = [  # every series the label model stores but a MIG instance's; a held GPU's utilisation peaks once
        {"series": s, "values": f"{v:g}x20" if s not in held else f"{v:g}x9 {_peak(held[s]):g} {v:g}x9"}
        for s, v in fx.series(model)
        if "GPU_I_ID" not in s
    ]
    for g in HELD:
        used = _memory_gib(g) * usage.per_gib
        inputs.append(_series(usage.memory, fx.stored(model, g), f"{used:.0f}x20"))
        rest = TOTAL_GIB * usage.per_gib - (used if usage.memory in usage.total else 0)  # FB_FREE, or memory_total
        inputs += [_series(m, fx.stored(model, g), f"{rest:.0f}x20") for m in usage.total if m != usage.memory]
    inputs += [
        _series("kube_node_labels", {"cluster": fx.CLUSTER, "node": n, POOL_LABEL: p}, "1x20") for n, p in POOLS.items()
    ]
    pools = {fx.CLUSTER: [_pool(p, ("gpuplane.io/pool", p)) for p in ("a", "b")]}
    queries = series_queries(model, [fx.CLUSTER], WINDOW) | pool_queries(model, [fx.CLUSTER], WINDOW, pools)

    def expect(name: str, samples: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
        exp = [{"labels": fx.selector("", labels), "value": v} for labels, v in samples]
        return {"expr": queries[name], "eval_time": "25m", "exp_samples": exp}

    held_by_pool = {"a": (3, 2), "b": (2, 2)}  # GPUs (MIG instances) held, busy nodes; a shared GPU counts once
    return {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [
            expect("utilPeak", [(_key_labels(model, g), _peak(g)) for g in HELD if not _mig(g)]),
            expect("memoryPeakGib", [(_key_labels(model, g), _memory_gib(g)) for g in HELD]),
            expect("memoryTotalGib", [(_key_labels(model, g), TOTAL_GIB) for g in HELD]),
            expect("samples", [(_key_labels(model, g), 21) for g in HELD]),
            expect("first", [(_key_labels(model, g), 0) for g in HELD]),
            expect("last", [(_key_labels(model, g), 1200) for g in HELD]),
            expect("spanFirst", [({}, 0)]),
            expect("spanLast", [({}, 1200)]),
            expect("peakGpus", [({"cluster": fx.CLUSTER, POOL: p}, n) for p, (n, _) in held_by_pool.items()]),
            expect("peakBusyNodes", [({"cluster": fx.CLUSTER, POOL: p}, b) for p, (_, b) in held_by_pool.items()]),
            expect("peakNodes", [({"cluster": fx.CLUSTER, POOL: p}, 2) for p in held_by_pool]),
        ],
    }


def run_promtool(tmp_path: Path, tests: list[dict[str, Any]]) -> None:
    doc = {"rule_files": [], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_queries_give_the_same_answers_on_every_integration(tmp_path: Path) -> None:
    models = all_models()
    assert {m.metrics for m in models.values()} == set(USAGE)
    run_promtool(tmp_path, [query_tests(m) for m in models.values()])


NODE = {"cluster": "c1", "kubernetes_node": "n1", "gpu": "0", "modelName": "NVIDIA L4"}
"""One GPU on the scrape-config job's labels (`labels.SCRAPE_CONFIG`)."""


def test_samples_add_up_across_an_exporter_restart(tmp_path: Path) -> None:
    """A restarted exporter (new pod, new `instance`) splits a GPU's samples over two series: 11 + 10 = 21."""
    queries = series_queries(SCRAPE_CONFIG, ["c1"], WINDOW)
    held = NODE | {"namespace": "ml", "pod": "train-0"}
    inputs = [
        _series(metric, held | {"instance": instance}, values)
        for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED")
        for instance, values in (("10.0.0.1:9400", "50x10"), ("10.0.0.2:9400", "_x11 50x9"))
    ]
    exp = [{"labels": fx.selector("", held), "value": 21}]
    test = {"expr": queries["samples"], "eval_time": "25m", "exp_samples": exp}
    run_promtool(tmp_path, [{"interval": "1m", "input_series": inputs, "promql_expr_test": [test]}])


def test_a_peak_between_two_steps_still_counts(tmp_path: Path) -> None:
    """Steps of 20 minutes (a window of 2016 steps over four weeks is 20 minutes a step): a GPU held for three
    minutes between two steps is in the pool's peak, though an instant selector sees 5 minutes back only."""
    window = Window("2h", 7200, 1200)
    pools = {"c1": [_pool("a", ("gpuplane.io/pool", "a"))]}
    queries = pool_queries(SCRAPE_CONFIG, ["c1"], window, pools)
    inputs = [
        _series("DCGM_FI_DEV_FB_USED", NODE | {"namespace": "ml", "pod": "eval-8x2kq"}, "_x22 1024x2"),
        _series("kube_node_labels", {"cluster": "c1", "node": "n1", POOL_LABEL: "a"}, "1x119"),
    ]
    one = [{"labels": fx.selector("", {"cluster": "c1", POOL: "a"}), "value": 1}]
    tests = [{"expr": queries[q], "eval_time": "60m", "exp_samples": one} for q in ("peakGpus", "peakBusyNodes")]
    run_promtool(tmp_path, [{"interval": "1m", "input_series": inputs, "promql_expr_test": tests}])


ACCELERATOR, SPOT = "cloud.google.com/gke-accelerator", "cloud.google.com/gke-spot"
L4_SPOT = _pool("l4", (ACCELERATOR, "nvidia-l4"), (SPOT, "true"))
L4 = _pool("l4-standard", (ACCELERATOR, "nvidia-l4"))
"""Two GPU classes whose nodes overlap (as GKE Autopilot and NAP place them): a spot L4 node also names the L4
accelerator, so it matches both; it belongs to the more specific, spot one."""


def _node(cluster: str, node: str, spot: bool, with_cluster: bool = True) -> dict[str, str]:
    labels = {"node": node, "label_cloud_google_com_gke_accelerator": "nvidia-l4"}
    labels |= {"label_cloud_google_com_gke_spot": "true"} if spot else {}
    return _series("kube_node_labels", labels | ({"cluster": cluster} if with_cluster else {}), "1x20")


def _held(cluster: str, node: str, pod: str) -> dict[str, str]:
    labels = NODE | {"cluster": cluster, "kubernetes_node": node, "namespace": "serve", "pod": pod}
    return _series("DCGM_FI_DEV_FB_USED", labels, "1024x20")


def _per_pool(counts: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    return [{"labels": fx.selector("", {"cluster": c, POOL: p}), "value": n} for (c, p), n in counts.items()]


def pool_test(clusters: list[str], with_cluster: bool, expected: dict[tuple[str, str], int]) -> dict[str, Any]:
    """Clusters c1 and c2 in one Prometheus, each with a node `gke-n-0` (spot in c1, not in c2) and another
    (on-demand in c1, spot in c2), each node's GPU held; the stack is `clusters`."""
    inputs = [
        _node("c1", "gke-n-0", True, with_cluster),
        _node("c1", "gke-n-1", False, with_cluster),
        _node("c2", "gke-n-0", False),
        _node("c2", "gke-n-2", True),
        *(
            _held(c, n, f"chat-{i}")
            for i, (c, n) in enumerate([("c1", "gke-n-0"), ("c1", "gke-n-1"), ("c2", "gke-n-0")])
        ),
        _held("c2", "gke-n-2", "chat-3"),
    ]
    queries = pool_queries(SCRAPE_CONFIG, clusters, WINDOW, {c: [L4, L4_SPOT] for c in clusters})
    members = [
        {"labels": fx.selector("", {"cluster": c, "node": n, POOL: p}), "value": 1}
        for c, n, p in (
            [("c1", "gke-n-0", "l4"), ("c1", "gke-n-1", "l4-standard")]
            + ([("c2", "gke-n-0", "l4-standard"), ("c2", "gke-n-2", "l4")] if "c2" in clusters else [])
        )
    ]
    tests = [{"expr": queries["nodePools"], "eval_time": "10m", "exp_samples": members}]
    tests += [
        {"expr": queries[q], "eval_time": "10m", "exp_samples": _per_pool(expected)}
        for q in ("peakNodes", "peakBusyNodes", "peakGpus")
    ]
    return {"interval": "1m", "input_series": inputs, "promql_expr_test": tests}


def test_overlapping_pools_and_clusters_sharing_node_names(tmp_path: Path) -> None:
    """No node in two pools (the cost rules' `memberships`: most specific first), and each cluster's nodes in its
    own pools only, though another cluster in the same Prometheus has a node of the same name."""
    one = {("c1", "l4"): 1, ("c1", "l4-standard"): 1}
    both = one | {("c2", "l4"): 1, ("c2", "l4-standard"): 1}
    run_promtool(
        tmp_path,
        [
            pool_test(["c1"], True, one),
            pool_test(["c1", "c2"], True, both),
            pool_test(["c1"], False, one),  # kube-state-metrics without a cluster label: the stack's one cluster
        ],
    )
