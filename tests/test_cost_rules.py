"""What the GPU cost rules say, checked with `promtool test rules` on every integration's stored labels.

The pools, prices and expected dollars are written here by hand (a whole-GPU pool at $4/GPU-h, a 4-way
time-sliced pool at $2, a MIG pool of 7 instances at $7, a pool without a price), and the series are stored
the way each collector stores them (test_alert_semantics.STORED; kube-state-metrics under GKE Managed
Prometheus keeps the pod's namespace in `exported_namespace`, pod_config.go). Nothing here is read from the
rules: a lost phase filter, a share weighed as a whole GPU or a window that does not hold fails by value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.runtime.sync_await import _sync_await

import gpuplane
from gpuplane.args.checks import ArgsError
from gpuplane.args.inputs import GpuType, SharingStrategy
from gpuplane.config import parse_flat
from gpuplane.config.monitoring import MonitoringConfig
from gpuplane.monitoring.cost import CostSettings, PoolCost, ksm_label, node_matchers
from gpuplane.monitoring.rules import rule_groups, rules_file_yaml
from gpuplane.monitoring.wiring import settings_for, stack_cost
from gpuplane.plan import load
from gpuplane.stack.capacity import capacity

from .engines import engine
from .test_alert_semantics import KEYS, STORED, kind_of, selector
from .test_library import karpenter_pools
from .test_library import run as run_program
from .test_promtool import promtool_test


def _pool(name: str, price: float | None, units: int = 1, series: int = 1) -> PoolCost:
    return PoolCost(name, price, units, series, ({"key": "gpuplane.io/pool", "operator": "In", "values": [name]},))


COST = CostSettings(
    "c1",
    (_pool("whole", 4.0), _pool("shared", 2.0, units=4), _pool("mig", 7.0, units=7, series=7), _pool("free", None)),
)
NODES = {"n1": ("whole", "nvidia_com_gpu", 2), "n2": ("shared", "nvidia_com_gpu", 4)}
NODES |= {
    "n3": ("mig", "nvidia_com_mig_1g_10gb", 7),
    "n4": ("whole", "nvidia_com_gpu", 2),
    "n5": ("free", "nvidia_com_gpu", 1),
}
PODS = [  # namespace, pod, node, resource, units, phase
    ("ml", "train-0", "n1", "nvidia_com_gpu", 1, "Running"),
    ("ml", "nb-0", "n2", "nvidia_com_gpu", 1, "Running"),
    ("team-b", "infer-0", "n3", "nvidia_com_mig_1g_10gb", 1, "Running"),
    ("team-b", "done-0", "n1", "nvidia_com_gpu", 1, "Succeeded"),  # finished: holds nothing
    ("team-b", "free-0", "n5", "nvidia_com_gpu", 1, "Running"),  # on the unpriced pool
]
UTIL = {  # pod -> utilisation: busy; idle after 10 minutes of work; idle throughout
    "train-0": "95x40",
    "nb-0": "80x4 2x35",
    "infer-0": "1x40",
}
KSM = {"job": "kube-state-metrics", "instance": "10.0.0.5:8080"}


def _ksm_pod(kind: str, namespace: str, pod: str) -> dict[str, str]:
    """kube-state-metrics' pod labels as stored: GMP (either collection) keeps the scraping monitor's `namespace`."""
    if kind.startswith("gmp"):
        return {**KSM, "namespace": "gmp-public", "exported_namespace": namespace, "pod": pod}
    return {**KSM, "namespace": namespace, "pod": pod}


def _dcgm(stored: dict[str, Any], node: str, namespace: str, pod: str) -> dict[str, str]:
    idle = dict(stored["idle"])
    node_label = "node" if "node" in idle else "kubernetes_node"
    workload = {
        k: (namespace if "namespace" in k else pod if k == "pod" else v) for k, v in stored["allocated"].items()
    }
    return {**idle, node_label: node, **workload}


def series(kind: str) -> list[dict[str, str]]:
    out = []
    for node, (pool, resource, units) in NODES.items():
        out.append(
            {
                "series": selector("kube_node_labels", {**KSM, "node": node, ksm_label("gpuplane.io/pool"): pool}),
                "values": "1x40",
            }
        )
        labels = {**KSM, "node": node, "resource": resource, "unit": "integer"}
        out.append({"series": selector("kube_node_status_capacity", labels), "values": f"{units}x40"})
    for namespace, pod, node, resource, units, phase in PODS:
        who = _ksm_pod(kind, namespace, pod)
        requests = {**who, "container": "main", "node": node, "resource": resource, "unit": "integer"}
        out.append({"series": selector("kube_pod_container_resource_requests", requests), "values": f"{units}x40"})
        for p in ("Pending", "Running", "Succeeded"):
            out.append(
                {"series": selector("kube_pod_status_phase", {**who, "phase": p}), "values": f"{int(p == phase)}x40"}
            )
        if pod in UTIL:
            labels = _dcgm(STORED[kind], node, namespace, pod)
            out.append({"series": selector("DCGM_FI_DEV_GPU_UTIL", labels), "values": UTIL[pod]})
    return out


def samples_at(record: str, at: str, rows: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
    return {
        "expr": record,
        "eval_time": at,
        "exp_samples": [{"labels": selector(record, labels), "value": v} for labels, v in rows],
    }


def samples(record: str, rows: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
    return samples_at(record, "35m", rows)


EXPECTED = [
    samples(
        "gpuplane:gpu_cost_usd_per_hour:by_pod",
        [
            ({"cluster": "c1", "pool": "whole", "namespace": "ml", "pod": "train-0"}, 4.0),
            ({"cluster": "c1", "pool": "shared", "namespace": "ml", "pod": "nb-0"}, 0.5),
            ({"cluster": "c1", "pool": "mig", "namespace": "team-b", "pod": "infer-0"}, 1.0),
        ],
    ),
    samples(
        "gpuplane:gpu_cost_usd_per_hour:by_namespace",
        [({"cluster": "c1", "namespace": "ml"}, 4.5), ({"cluster": "c1", "namespace": "team-b"}, 1.0)],
    ),
    samples(
        "gpuplane:gpu_capacity_cost_usd_per_hour:by_pool",
        [
            ({"cluster": "c1", "pool": "whole"}, 16.0),
            ({"cluster": "c1", "pool": "shared"}, 2.0),
            ({"cluster": "c1", "pool": "mig"}, 7.0),
        ],
    ),
    samples(
        "gpuplane:gpu_unallocated_cost_usd_per_hour:by_pool",
        [
            ({"cluster": "c1", "pool": "whole"}, 12.0),
            ({"cluster": "c1", "pool": "shared"}, 1.5),
            ({"cluster": "c1", "pool": "mig"}, 6.0),
        ],
    ),
    samples("gpuplane:gpu_empty_node_cost_usd_per_hour:by_pool", [({"cluster": "c1", "pool": "whole"}, 8.0)]),
    # nb-0's GPU went idle at 5m: 30 minutes later the whole (time-shared) GPU counts; infer-0's MIG slice is 1/7.
    samples(
        "gpuplane:gpu_idle_allocated_cost_usd_per_hour:by_namespace",
        [
            ({"cluster": "c1", "pool": "shared", "namespace": "ml"}, 2.0),
            ({"cluster": "c1", "pool": "mig", "namespace": "team-b"}, 1.0),
        ],
    ),
]


def run(tmp_path: Path, platform: str, integration: str, kind: str, expected: list[dict[str, Any]]) -> str:
    settings = settings_for(platform, MonitoringConfig(integration=integration), None, COST)  # type: ignore[arg-type]
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(settings)))
    case = {"interval": "1m", "input_series": series(kind), "promql_expr_test": expected}
    doc = {"rule_files": ["gpu.rules.yml"], "evaluation_interval": "1m", "tests": [case]}
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool_test(tmp_path)
    return "" if out.returncode == 0 else out.stdout + out.stderr


DCGM_KEYS = [k for k in KEYS if kind_of(*k) != "device-plugin"]


@pytest.mark.parametrize(("platform", "integration"), DCGM_KEYS, ids=[f"{p}-{i}" for p, i in DCGM_KEYS])
def test_cost_rules_give_the_same_dollars_on_every_integration(platform: str, integration: str, tmp_path: Path) -> None:
    engine("promtool")
    assert run(tmp_path, platform, integration, kind_of(platform, integration), EXPECTED) == ""


def test_idle_cost_waits_for_the_whole_window(tmp_path: Path) -> None:
    """At 33m the 30-minute window still holds nb-0's busy samples (up to 4m): only the MIG slice is idle."""
    engine("promtool")
    early = {**EXPECTED[-1], "eval_time": "33m", "exp_samples": EXPECTED[-1]["exp_samples"][1:]}
    assert run(tmp_path, "gke-standard", "scrape-config", "scrape", [early]) == ""


def test_node_matchers_read_affinity_operators() -> None:
    exprs = [
        {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["gpu-a", "gpu.b"]},
        {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]},
        {"key": "nvidia.com/gpu.present", "operator": "Exists"},
        {"key": "cloud.google.com/gke-spot", "operator": "DoesNotExist"},
    ]
    assert node_matchers(exprs) == (
        'label_karpenter_sh_nodepool=~"gpu-a|gpu\\.b", label_karpenter_sh_capacity_type!~"spot", '
        'label_nvidia_com_gpu_present!="", label_cloud_google_com_gke_spot=""'
    )


@pytest.mark.parametrize("stack", ["aws-managed", "aws-karpenter", "gcp-standard", "gcp-nap"])
def test_rule_prices_are_the_capacity_summary_prices(stack: str) -> None:
    """A pool's price series times its GPUs at its ceiling is the capacity summary's $/h at max (pools
    without reservations), so the two can never disagree."""
    cfg = parse_flat(load(stack).flat_config())
    prices = {p.pool: p.usd_per_gpu_hour for p in stack_cost(cfg).pools}
    checked = 0
    for row in capacity(cfg):
        if row.reserved_gpus or row.usd_per_hour_at_max is None:
            continue
        assert prices[row.pool] is not None
        assert abs(prices[row.pool] * row.gpus_at_max - row.usd_per_hour_at_max) <= 0.01 * row.max_nodes, row
        checked += 1
    assert checked


def test_your_program_prices_your_pools(tmp_path: Path) -> None:
    """A program of its own: pools from a pool component, their prices by hand; the rules price each pool's
    units (a MIG 1g.10gb instance is a seventh of an A100) and select its nodes by the pool's own affinity."""
    got: dict[str, Any] = {}

    def program() -> None:
        pools = karpenter_pools(
            [
                {"name": "l4", "gpu": GpuType.L4, "max_nodes": 3},
                {
                    "name": "slices",
                    "gpu": GpuType.A100_80GB,
                    "gpus_per_node": 8,
                    "max_nodes": 1,
                    "sharing": {"strategy": SharingStrategy.MIG, "profile": "1g.10gb"},
                },
            ]
        )
        l4, slices = pools.gpu_nodes
        mon = gpuplane.GpuMonitoring(
            "mon",
            {
                "cluster": "mine",
                "monitoring": {"integration": "install"},
                "gpu_prices": [
                    {"nodes": l4, "usd_per_gpu_hour": 0.8},
                    {"nodes": slices, "usd_per_gpu_hour": 5.0},
                ],
            },
        )
        got["rules"], got["cost"] = mon.prometheus_rules, mon.gpu_cost

    regs = run_program(program)
    rules = yaml.safe_load(_sync_await(got["rules"].future()))
    (prices,) = [g for g in rules["groups"] if g["name"] == "gpuplane-gpu-prices"]
    units = {r["labels"]["pool"]: r["expr"] for r in prices["rules"] if r["record"] == "gpuplane:gpu_units_per_gpu"}
    assert units == {"l4": "vector(1)", "slices": "vector(7)"}  # an A100's 1g.10gb MIG instances (NVIDIA MIG guide)
    members = [r["expr"] for r in prices["rules"] if r["record"] == "gpuplane:node_pool:info"]
    assert all('label_karpenter_sh_nodepool=~"' in e for e in members), members
    (values,) = [r.inputs["values"] for r in regs if r.name == "mon-kube-prometheus-stack"]
    # kube-state-metrics exposes the node labels the pool matchers read, and only those.
    (allow,) = values["kube-state-metrics"]["metricLabelsAllowlist"]
    keys = allow.removeprefix("nodes=[").removesuffix("]").split(",")
    read = {m.split("=")[0].rstrip("!") for e in members for m in e[e.index("{") + 1 : -2].split(", ")}
    assert {"label_" + k.replace(".", "_").replace("/", "_").replace("-", "_") for k in keys} == read
    assert _sync_await(got["cost"].future())["kubeStateMetrics"].startswith("set by gpuplane")


def test_bad_prices_are_named_before_anything_registers() -> None:
    def program() -> None:
        gpuplane.GpuMonitoring(
            "mon",
            {
                "cluster": "mine",
                "gpu_prices": [
                    {"nodes": {"pool": "a"}, "usd_per_gpu_hour": -1},
                    {"usd_per_gpu_hour": 2.0},  # type: ignore[typeddict-item]
                    {
                        "nodes": {
                            "pool": "m",
                            "resource": "nvidia.com/gpu",
                            "labels": {},
                            "taints": [],
                            "sharing": {"strategy": "mig", "profile": "1g.10gb"},
                        },
                        "usd_per_gpu_hour": 2.0,
                    },
                ],
            },
        )

    with pytest.raises(ArgsError) as info:
        run_program(program)
    text = str(info.value)
    for path in ("gpu_prices[0].usd_per_gpu_hour", "gpu_prices[1].nodes", "gpu_prices[2].units_per_gpu"):
        assert path in text, text


def test_dashboard_cost_panels_read_recorded_series() -> None:
    from gpuplane.monitoring.dashboard import dashboard
    from gpuplane.monitoring.wiring import rule_settings

    cfg = parse_flat(load("gcp-standard").flat_config())
    settings = rule_settings(cfg)
    recorded = {r["record"] for g in rule_groups(settings) for r in g["rules"] if "record" in r}
    panels = [p for p in dashboard(settings)["panels"] if p["fieldConfig"]["defaults"]["unit"] == "currencyUSD"]
    assert len(panels) == 5
    assert {p["targets"][0]["expr"] for p in panels} <= recorded


def test_a_node_matching_two_pools_belongs_to_the_more_specific(tmp_path: Path) -> None:
    """An on-demand L4 class names only the accelerator, a spot L4 class the accelerator and spot (GKE
    Autopilot and NAP place by those labels): a spot L4 node matches both. It must count once, in the spot pool,
    or every `on (node)` join fails with a many-to-many match."""
    engine("promtool")
    accelerator = {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-l4"]}
    spot = {"key": "cloud.google.com/gke-spot", "operator": "In", "values": ["true"]}
    cost = CostSettings(
        "c1", (PoolCost("l4", 1.0, 1, 1, (accelerator,)), PoolCost("l4-spot", 0.4, 1, 1, (accelerator, spot)))
    )
    settings = settings_for("gke-autopilot", MonitoringConfig(integration="scrape-config"), None, cost)
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(settings)))
    nodes = {"od": {}, "sp": {ksm_label("cloud.google.com/gke-spot"): "true"}}
    series_ = []
    for node, extra in nodes.items():
        labels = {**KSM, "node": node, ksm_label("cloud.google.com/gke-accelerator"): "nvidia-l4", **extra}
        series_.append({"series": selector("kube_node_labels", labels), "values": "1x10"})
        cap = {**KSM, "node": node, "resource": "nvidia_com_gpu", "unit": "integer"}
        series_.append({"series": selector("kube_node_status_capacity", cap), "values": "1x10"})
    expected = [
        samples_at(
            "gpuplane:node_pool:info",
            "5m",
            [
                ({"cluster": "c1", "node": "od", "pool": "l4"}, 1),
                ({"cluster": "c1", "node": "sp", "pool": "l4-spot"}, 1),
            ],
        ),
        samples_at(
            "gpuplane:gpu_capacity_cost_usd_per_hour:by_pool",
            "5m",
            [({"cluster": "c1", "pool": "l4"}, 1.0), ({"cluster": "c1", "pool": "l4-spot"}, 0.4)],
        ),
    ]
    case = {"interval": "1m", "input_series": series_, "promql_expr_test": expected}
    doc = {"rule_files": ["gpu.rules.yml"], "evaluation_interval": "1m", "tests": [case]}
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
