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
from .test_alert_semantics import DEVICE_PLUGIN, KEYS, STORED, kind_of, selector
from .test_library import karpenter_pools
from .test_library import run as run_program
from .test_promtool import promtool_test


def _pool(name: str, price: float | None, units: int = 1) -> PoolCost:
    return PoolCost(name, price, units, ({"key": "gpuplane.io/pool", "operator": "In", "values": [name]},))


COST = CostSettings(
    "c1",
    (
        _pool("whole", 4.0),
        _pool("shared", 2.0, units=4),
        _pool("mig", 7.0, units=7),
        _pool("free", None),
        _pool("spare", 3.0),
    ),
)
NODES = {  # node -> pool, resource, units it offers
    "n1": ("whole", "nvidia_com_gpu", 3),
    "n2": ("shared", "nvidia_com_gpu", 4),
    "n3": ("mig", "nvidia_com_mig_1g_10gb", 7),
    "n4": ("whole", "nvidia_com_gpu", 2),  # nothing on it: an empty GPU node
    "n5": ("free", "nvidia_com_gpu", 1),
    "n6": ("whole", "nvidia_com_gpu", 1),
    "n7": ("spare", "nvidia_com_gpu", 2),  # a priced pool nobody uses
}
PODS = [  # namespace, pod, node, resource, units, phase
    ("ml", "train-0", "n1", "nvidia_com_gpu", 1, "Running"),
    ("ml", "new-0", "n1", "nvidia_com_gpu", 1, "Running"),
    ("team-b", "pull-0", "n1", "nvidia_com_gpu", 1, "Pending"),  # on its node, pulling its image: holds its GPU
    ("ml", "nb-0", "n2", "nvidia_com_gpu", 1, "Running"),
    ("team-b", "infer-0", "n3", "nvidia_com_mig_1g_10gb", 1, "Running"),
    ("team-b", "done-0", "n1", "nvidia_com_gpu", 1, "Succeeded"),  # finished: holds nothing
    ("team-b", "queued-0", "", "nvidia_com_gpu", 1, "Pending"),  # not scheduled: holds nothing
    ("team-b", "free-0", "n5", "nvidia_com_gpu", 1, "Running"),  # on the unpriced pool
    ("ml", "idle-0", "n6", "nvidia_com_gpu", 1, "Running"),
    ("team-b", "gone-0", "n4", "nvidia_com_gpu", 1, "Succeeded"),  # idle until it ended at 20m
]
UTIL = {  # pod -> utilisation over 40 minutes
    "train-0": "95x40",  # busy
    "new-0": "_x19 1x20",  # started at 20m: idle since, but not for a whole window
    "idle-0": "80x4 2x35",  # idle from 5m
    "nb-0": "1x40",  # a share of a time-sliced GPU: dcgm-exporter shows the whole GPU under one pod
    "infer-0": "0x40",  # a MIG instance: DCGM reports 0 (or nothing) for MIG utilisation
    "gone-0": "1x20",  # its series ends at 20m: not held now, so not idle now
}
KSM = {"job": "kube-state-metrics", "instance": "10.0.0.5:8080"}
KSM_TWIN = {"job": "kube-state-metrics", "instance": "10.0.0.6:8080"}
"""A second kube-state-metrics replica: its series must count once (kubernetes-mixin: `max by` before `sum`)."""


def _ksm_pod(kind: str, namespace: str, pod: str, layout: str = "podmonitoring") -> dict[str, str]:
    """kube-state-metrics' pod labels as stored. A GMP PodMonitoring with `targetLabels.metadata: []` (docs/cost.md
    asks for it) still sets `namespace` to its own, so the pod's lands in `exported_namespace` (pod_config.go);
    Google's kube-state-metrics example scrapes with a ClusterPodMonitoring whose `targetLabels.metadata` is empty,
    which keeps kube-state-metrics' own."""
    if kind.startswith("gmp") and layout == "podmonitoring":
        return {**KSM, "namespace": "gmp-public", "exported_namespace": namespace, "pod": pod}
    return {**KSM, "namespace": namespace, "pod": pod}


def _dcgm(stored: dict[str, Any], node: str, namespace: str, pod: str) -> dict[str, str]:
    idle = dict(stored["idle"])
    node_label = "node" if "node" in idle else "kubernetes_node"
    workload = {
        k: (namespace if "namespace" in k else pod if k == "pod" else v) for k, v in stored["allocated"].items()
    }
    return {**idle, node_label: node, **workload}


def series(kind: str, layout: str = "podmonitoring") -> list[dict[str, str]]:
    out = []
    for node, (pool, resource, units) in NODES.items():
        # kube-state-metrics' name for the node label gpuplane.io/pool (utils.go labelName)
        out.append(
            {
                "series": selector("kube_node_labels", {**KSM, "node": node, "label_gpuplane_io_pool": pool}),
                "values": "1x40",
            }
        )
        for ksm in (KSM, KSM_TWIN) if node == "n1" else (KSM,):  # a second replica (or scrape) says it again
            labels = {**ksm, "node": node, "resource": resource, "unit": "integer"}
            out.append({"series": selector("kube_node_status_capacity", labels), "values": f"{units}x40"})
    for namespace, pod, node, resource, units, phase in PODS:
        who = _ksm_pod(kind, namespace, pod, layout)
        requests = {**who, "container": "main", "node": node, "resource": resource, "unit": "integer"}
        out.append({"series": selector("kube_pod_container_resource_requests", requests), "values": f"{units}x40"})
        if pod == "train-0":  # the second replica's copy of the same request
            twin = {**requests, **KSM_TWIN}
            out.append({"series": selector("kube_pod_container_resource_requests", twin), "values": f"{units}x40"})
        for p in ("Pending", "Running", "Succeeded"):
            out.append(
                {"series": selector("kube_pod_status_phase", {**who, "phase": p}), "values": f"{int(p == phase)}x40"}
            )
        if pod in UTIL:  # GKE's device plugin (Autopilot) serves duty_cycle per container
            stored, metric = (
                (DEVICE_PLUGIN, "duty_cycle") if kind == "device-plugin" else (STORED[kind], "DCGM_FI_DEV_GPU_UTIL")
            )
            out.append({"series": selector(metric, _dcgm(stored, node, namespace, pod)), "values": UTIL[pod]})
    return out


def samples_at(record: str, at: str, rows: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
    return {
        "expr": record,
        "eval_time": at,
        "exp_samples": [{"labels": selector(record, labels), "value": v} for labels, v in rows],
    }


def samples(record: str, rows: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
    return samples_at(record, "35m", rows)


# $4 a GPU (whole), $2 a GPU in 4 shares ($0.5 each), $7 a GPU in 7 MIG instances ($1 each), $3 a GPU (spare).
EXPECTED = [
    samples(
        "gpuplane:gpu_cost_usd_per_hour:by_pod",
        [
            ({"pool": "whole", "namespace": "ml", "pod": "train-0"}, 4.0),
            ({"pool": "whole", "namespace": "ml", "pod": "new-0"}, 4.0),
            ({"pool": "whole", "namespace": "team-b", "pod": "pull-0"}, 4.0),
            ({"pool": "whole", "namespace": "ml", "pod": "idle-0"}, 4.0),
            ({"pool": "shared", "namespace": "ml", "pod": "nb-0"}, 0.5),
            ({"pool": "mig", "namespace": "team-b", "pod": "infer-0"}, 1.0),
        ],
    ),
    samples(
        "gpuplane:gpu_cost_usd_per_hour:by_namespace", [({"namespace": "ml"}, 12.5), ({"namespace": "team-b"}, 5.0)]
    ),
    samples(
        "gpuplane:gpu_cost_usd_per_hour:by_pool",
        [({"pool": "whole"}, 16.0), ({"pool": "shared"}, 0.5), ({"pool": "mig"}, 1.0)],
    ),
    samples(
        "gpuplane:gpu_capacity_cost_usd_per_hour:by_pool",
        [({"pool": "whole"}, 24.0), ({"pool": "shared"}, 2.0), ({"pool": "mig"}, 7.0), ({"pool": "spare"}, 6.0)],
    ),
    samples(
        "gpuplane:gpu_unallocated_cost_usd_per_hour:by_pool",
        [({"pool": "whole"}, 8.0), ({"pool": "shared"}, 1.5), ({"pool": "mig"}, 6.0), ({"pool": "spare"}, 6.0)],
    ),
    samples("gpuplane:gpu_empty_node_cost_usd_per_hour:by_pool", [({"pool": "whole"}, 8.0), ({"pool": "spare"}, 6.0)]),
    # idle-0 went idle at 5m and held its GPU all along; new-0 only since 20m; shares and MIG are not judged.
    samples(
        "gpuplane:gpu_idle_allocated_cost_usd_per_hour:by_namespace", [({"pool": "whole", "namespace": "ml"}, 4.0)]
    ),
]


def run(
    tmp_path: Path,
    platform: str,
    integration: str,
    kind: str,
    expected: list[dict[str, Any]],
    layout: str = "podmonitoring",
) -> str:
    settings = settings_for(platform, MonitoringConfig(integration=integration), None, COST)  # type: ignore[arg-type]
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(settings)))
    case = {"interval": "1m", "input_series": series(kind, layout), "promql_expr_test": expected}
    doc = {"rule_files": ["gpu.rules.yml"], "evaluation_interval": "1m", "tests": [case]}
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool_test(tmp_path)
    return "" if out.returncode == 0 else out.stdout + out.stderr


@pytest.mark.parametrize(("platform", "integration"), KEYS, ids=[f"{p}-{i}" for p, i in KEYS])
def test_cost_rules_give_the_same_dollars_on_every_integration(platform: str, integration: str, tmp_path: Path) -> None:
    engine("promtool")
    assert run(tmp_path, platform, integration, kind_of(platform, integration), EXPECTED) == ""


def test_gmp_with_googles_kube_state_metrics_example_keeps_the_namespace(tmp_path: Path) -> None:
    """Google's kube-state-metrics ClusterPodMonitoring adds no target labels, so `namespace` stays kube-state-metrics'
    and there is no `exported_namespace` (prometheus-engine examples/kube-state-metrics): same dollars."""
    engine("promtool")
    assert run(tmp_path, "gke-standard", "gke-managed", "gmp", EXPECTED, layout="clusterpodmonitoring") == ""


def test_idle_cost_waits_for_the_whole_window(tmp_path: Path) -> None:
    """At 33m the 30-minute window still holds idle-0's busy samples (up to 4m): nothing is idle yet."""
    engine("promtool")
    early = {**EXPECTED[-1], "eval_time": "33m", "exp_samples": []}
    assert run(tmp_path, "gke-standard", "scrape-config", "scrape", [early]) == ""


def test_kube_state_metrics_snake_cases_node_label_keys() -> None:
    """kube-state-metrics internal/store/utils.go `labelName`: invalid characters become `_`, then `toSnakeCase`
    (`([a-z0-9])([A-Z])` -> `${1}_${2}`, lower case)."""
    assert ksm_label("eks.amazonaws.com/capacityType") == "label_eks_amazonaws_com_capacity_type"
    assert ksm_label("karpenter.k8s.aws/instance-gpu-name") == "label_karpenter_k8s_aws_instance_gpu_name"
    assert ksm_label("cloud.google.com/gke-nodepool") == "label_cloud_google_com_gke_nodepool"


def test_no_rule_sets_a_label_gkes_rule_evaluator_sets() -> None:
    """GKE's rule evaluator refuses a rule that already sets `cluster`, `location` or `project_id`
    (prometheus-engine pkg/operator/apis/monitoring/v1/rules_config.go `setLabel`)."""
    for stack in ("gcp-standard", "gcp-fleet", "gcp-autopilot", "aws-karpenter"):
        cfg = parse_flat(load(stack).flat_config())
        for group in rule_groups(settings_for(cfg.platform, cfg.monitoring, None, stack_cost(cfg))):
            for rule in group["rules"]:
                assert not {"cluster", "location", "project_id"} & set(rule.get("labels", {})), (stack, rule)


def test_node_matchers_select_what_the_affinity_selects(tmp_path: Path) -> None:
    """The matchers parse (PromQL strings take Go escapes: a regex `\\.` is written `\\\\.`) and select the nodes
    the node-affinity would (Kubernetes API reference, NodeSelectorRequirement operators)."""
    engine("promtool")
    exprs = [
        {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["gpu-a", "gpu.b"]},
        {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]},
        {"key": "nvidia.com/gpu.present", "operator": "Exists"},
        {"key": "cloud.google.com/gke-spot", "operator": "DoesNotExist"},
    ]
    pool, od, present = (
        "label_karpenter_sh_nodepool",
        "label_karpenter_sh_capacity_type",
        "label_nvidia_com_gpu_present",
    )
    nodes = {
        "yes-a": {pool: "gpu-a", od: "on-demand", present: "true"},
        "yes-b": {pool: "gpu.b", od: "on-demand", present: "true"},
        "dot": {pool: "gpuxb", od: "on-demand", present: "true"},  # `.` is a literal dot
        "spot": {pool: "gpu-a", od: "spot", present: "true"},
        "absent": {pool: "gpu-a", od: "on-demand"},
        "gke-spot": {pool: "gpu-a", od: "on-demand", present: "true", "label_cloud_google_com_gke_spot": "true"},
    }
    input_series = [
        {"series": selector("kube_node_labels", {"node": n, **labels}), "values": "1"} for n, labels in nodes.items()
    ]
    expr = f"max by (node) (kube_node_labels{{{node_matchers(exprs)}}})"
    test = {
        "expr": expr,
        "eval_time": "0m",
        "exp_samples": [{"labels": f'{{node="{n}"}}', "value": 1} for n in ("yes-a", "yes-b")],
    }
    doc = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": input_series, "promql_expr_test": [test]}],
    }
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


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
        "c1", (PoolCost("l4", 1.0, 1, (accelerator,)), PoolCost("l4-spot", 0.4, 1, (accelerator, spot)))
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
                ({"node": "od", "pool": "l4"}, 1),
                ({"node": "sp", "pool": "l4-spot"}, 1),
            ],
        ),
        samples_at(
            "gpuplane:gpu_capacity_cost_usd_per_hour:by_pool",
            "5m",
            [({"pool": "l4"}, 1.0), ({"pool": "l4-spot"}, 0.4)],
        ),
    ]
    case = {"interval": "1m", "input_series": series_, "promql_expr_test": expected}
    doc = {"rule_files": ["gpu.rules.yml"], "evaluation_interval": "1m", "tests": [case]}
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("stack", ["gcp-fleet", "aws-fleet"])
def test_a_fleets_rules_know_every_pool_of_every_region(stack: str) -> None:
    """One rules file serves every cluster of the fleet: built from any region's, it prices the pools that run
    only in other regions too (gcp-fleet's us-east4 and aws-fleet's eu-central-1 have no `training`)."""
    from gpuplane.monitoring.wiring import fleet_rules, rule_settings
    from gpuplane.stack.fleet import region_configs

    cfg = parse_flat(load(stack).flat_config())
    regions = [c for _, c in region_configs(cfg)]
    for rcfg in regions:
        rules = fleet_rules(rules_file_yaml(rule_groups(rule_settings(rcfg))), regions)
        (prices,) = [g for g in yaml.safe_load(rules)["groups"] if g["name"] == "gpuplane-gpu-prices"]
        members = {r["labels"]["pool"] for r in prices["rules"] if r["record"] == "gpuplane:node_pool:info"}
        assert members == {p.name for p in cfg.gpuPools}, rcfg.cluster.name


def test_a_pool_that_names_itself_keeps_its_nodes(tmp_path: Path) -> None:
    """A NAP ComputeClass's spot node carries the accelerator, `gke-spot` and the class label: it belongs to the
    class (only the class's pods run there), not to a spot class of the same accelerator listed before it."""
    engine("promtool")
    accelerator = {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-l4"]}
    spot = {"key": "cloud.google.com/gke-spot", "operator": "In", "values": ["true"]}
    klass = {"key": "cloud.google.com/compute-class", "operator": "In", "values": ["gpuplane-l4-flex"]}
    cost = CostSettings(
        "c1", (PoolCost("l4", 1.0, 1, (accelerator, spot)), PoolCost("l4-flex", 2.0, 1, (accelerator, klass)))
    )
    settings = settings_for("gke-nap", MonitoringConfig(integration="scrape-config"), None, cost)
    (tmp_path / "gpu.rules.yml").write_text(rules_file_yaml(rule_groups(settings)))
    acc, spot_, cls = (
        ksm_label(k)
        for k in ("cloud.google.com/gke-accelerator", "cloud.google.com/gke-spot", "cloud.google.com/compute-class")
    )
    nodes = {
        "spot": {acc: "nvidia-l4", spot_: "true"},
        "flex": {acc: "nvidia-l4", spot_: "true", cls: "gpuplane-l4-flex"},
    }
    input_series = [
        {"series": selector("kube_node_labels", {**KSM, "node": n, **labels}), "values": "1x10"}
        for n, labels in nodes.items()
    ]
    expected = [
        samples_at(
            "gpuplane:node_pool:info",
            "5m",
            [({"node": "spot", "pool": "l4"}, 1), ({"node": "flex", "pool": "l4-flex"}, 1)],
        )
    ]
    doc = {
        "rule_files": ["gpu.rules.yml"],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": input_series, "promql_expr_test": expected}],
    }
    (tmp_path / "gpu.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool_test(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
