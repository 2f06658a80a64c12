"""The rightsizing rules as pure functions (workload names, GPU models, shapes that fit, confidence, prices,
pool floors, settings), and its queries on every integration's labels with `promtool test rules`: the same
answers whatever label the integration stores the node and the workload's namespace in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.catalog import GPUS
from gpuplane.catalog.availability import PRICES
from gpuplane.config import parse_flat
from gpuplane.config.model import StackConfig
from gpuplane.errors import InputError
from gpuplane.monitoring.labels import LabelModel, all_models
from gpuplane.monitoring.rules import METRIC_SETS
from gpuplane.plan import load
from gpuplane.rightsize.observe import PoolUse, Workload, pool_use
from gpuplane.rightsize.query import POOL, USAGE, PoolNodes, Window, pool_queries, series_queries
from gpuplane.rightsize.recommend import advise, advise_pool, in_region
from gpuplane.rightsize.report import parse_at, settings
from gpuplane.rightsize.rules import COMPUTE_TFLOPS, Need, fitting_shapes, gpu_of_model, verdict, workload_name

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
    }
    assert {m: gpu_of_model(m) for m in names} == names
    assert gpu_of_model("Radeon") is None
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


def workload(
    gpu: str = "h100", memory: float | None = 6.0, util: float = 11.0, pool: str = "finetune", **kw: Any
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
    inference = next(p for p in cfg.gpuPools if p.name == "inference").model_copy(update={"minNodes": 3})
    floor = advise_pool(cfg, "us-east-1", inference, PoolUse(peak_nodes=3, peak_busy_nodes=1, peak_gpus=1))
    spot = round(PRICES["g5.2xlarge"] * 0.4, 3)
    assert (floor.floor, floor.recommended_floor) == (3, 1)
    assert floor.usd_per_month_saved == round(2 * spot * 730, 2)
    assert any("lower it to 1" in a for a in floor.advice)
    ceiling = advise_pool(cfg, "us-east-1", inference.model_copy(update={"minNodes": 0}), PoolUse(4, 4, 4))
    assert ceiling.recommended_floor is None and ceiling.usd_per_month_saved == 0
    assert any("costs nothing unless reached" in a for a in ceiling.advice)
    reached = advise_pool(cfg, "us-east-1", inference, PoolUse(10, 10, 10))
    assert any("pods may have waited" in a for a in reached.advice)


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
    for args, argument in (
        (("7days", None, []), "--window"),
        (("5m", None, []), "--window"),
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


def _peak(g: fx.Gpu) -> float:
    return g.util + 1


def _memory_gib(g: fx.Gpu) -> float:
    return 2.0 * (HELD.index(g) + 1)


def _key_labels(model: LabelModel, g: fx.Gpu) -> dict[str, str]:
    """The labels a per-GPU answer carries: `query.series_key`, canonical workload names."""
    assert g.workload is not None
    out = {model.cluster: fx.CLUSTER, model.node: g.node, METRIC_SETS[model.metrics].gpu_label: g.gpu}
    if model.metrics == "dcgm":
        out |= {k: v for k, v in g.extra if k.startswith("GPU_I_")} | {"modelName": "NVIDIA A100"}
    return out | {"namespace": g.workload[0], "pod": g.workload[1]}


def query_tests(model: LabelModel) -> dict[str, Any]:
    usage = USAGE[model.metrics]
    util = METRIC_SETS[model.metrics].util
    held = {fx.selector(util, fx.stored(model, g)): g for g in HELD}
    inputs = [  # every series the label model stores; a held GPU's utilisation peaks once
        {"series": s, "values": f"{v:g}x20" if s not in held else f"{v:g}x9 {_peak(held[s]):g} {v:g}x9"}
        for s, v in fx.series(model)
    ]
    inputs += [
        {"series": fx.selector(usage.memory, fx.stored(model, g)), "values": f"{_memory_gib(g) * usage.per_gib:.0f}x20"}
        for g in HELD
    ]
    inputs += [
        {"series": fx.selector("kube_node_labels", {"cluster": fx.CLUSTER, "node": n, POOL_LABEL: p}), "values": "1x20"}
        for n, p in POOLS.items()
    ]
    pools = [PoolNodes(p, ({"key": "gpuplane.io/pool", "operator": "In", "values": [p]},)) for p in ("a", "b")]
    queries = series_queries(model, [fx.CLUSTER], WINDOW) | pool_queries(model, [fx.CLUSTER], WINDOW, pools)

    def expect(name: str, samples: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
        exp = [{"labels": fx.selector("", labels), "value": v} for labels, v in samples]
        return {"expr": queries[name], "eval_time": "25m", "exp_samples": exp}

    held_by_pool = {"a": (3, 2), "b": (2, 2)}  # GPUs (MIG instances) held, busy nodes; a shared GPU counts once
    return {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [
            expect("utilPeak", [(_key_labels(model, g), _peak(g)) for g in HELD]),
            expect("memoryPeakGib", [(_key_labels(model, g), _memory_gib(g)) for g in HELD]),
            expect("samples", [(_key_labels(model, g), 21) for g in HELD]),
            expect("peakGpus", [({"cluster": fx.CLUSTER, POOL: p}, n) for p, (n, _) in held_by_pool.items()]),
            expect("peakBusyNodes", [({"cluster": fx.CLUSTER, POOL: p}, b) for p, (_, b) in held_by_pool.items()]),
            expect("peakNodes", [({"cluster": fx.CLUSTER, POOL: p}, 2) for p in held_by_pool]),
        ],
    }


def test_queries_give_the_same_answers_on_every_integration(tmp_path: Path) -> None:
    models = all_models()
    tests = {"rule_files": [], "evaluation_interval": "1m", "tests": [query_tests(m) for m in models.values()]}
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert {m.metrics for m in models.values()} == set(USAGE) and GPUS
