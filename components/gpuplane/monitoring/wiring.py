"""From a stack's monitoring config to the `GpuMonitoring` component and the stack outputs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pulumi

from ..args.inputs import GpuAllocation
from ..catalog.health import HEALTH
from ..config.model import StackConfig
from ..config.monitoring import MonitoringConfig
from ..config.prices import gpu_price
from ..scheduling.placement import affinity_of, stack_gpu_nodes
from ..scheduling.sharing import slots_per_gpu
from ..text import yamltext
from .cost import KUBE_STATE_METRICS, PRICES_GROUP, CostSettings, PoolCost, cost_summary, price_group
from .labels import label_model
from .rules import ExporterPods, RuleSettings, rule_groups, rules_file_yaml
from .scrape import ScrapeTarget, stack_scrape_yaml
from .stack import GpuMonitoring, MonitoringSpec


def rule_settings(cfg: StackConfig, target: ScrapeTarget | None = None) -> RuleSettings:
    """Thresholds from the config; label names from the integration's label model (`labels.py`); the pools'
    prices for the cost rules."""
    return settings_for(cfg.platform, cfg.monitoring, target, stack_cost(cfg))


def stack_cost(cfg: StackConfig) -> CostSettings:
    """The stack's pools for the cost rules: each pool's price per GPU-hour from the capacity summary's price
    table, its units per GPU, and the node-affinity that selects its nodes (the placement helper's)."""
    pools = []
    for pool, nodes in zip(cfg.gpuPools, stack_gpu_nodes(cfg), strict=True):
        claims = nodes.get("allocation") == GpuAllocation.DRA
        pools.append(PoolCost(pool.name, gpu_price(cfg, pool), slots_per_gpu(pool), tuple(affinity_of(nodes)), claims))
    return CostSettings(cfg.cluster.name, tuple(pools))


def settings_for(
    platform: str, m: MonitoringConfig, target: ScrapeTarget | None = None, cost: CostSettings | None = None
) -> RuleSettings:
    """Rule settings of monitoring config `m` on `platform` (any string: the label model's overrides are
    per platform, the rest per integration) for the exporter `target`."""
    pods = None
    if target is not None and target.daemonset and m.integration in KUBE_STATE_METRICS:
        pods = ExporterPods(target.namespace, target.daemonset)
    return RuleSettings(
        labels=label_model(platform, m.integration),
        idle_window=m.idleWindow,
        idle_percent=m.idlePercent,
        temperature_celsius=m.temperatureCelsius,
        memory_ratio=m.memoryRatio,
        node_condition=HEALTH[platform].condition if platform in HEALTH else "",  # EKS's; GKE repair acts on none
        exporter_pods=pods,
        cost=cost,
    )


def identified(cfg: StackConfig, target: ScrapeTarget) -> ScrapeTarget:
    """The target with `cluster` and `region` labels for every series (GKE Managed Prometheus adds
    its own `cluster` and `location`)."""
    region = cfg.region
    return replace(target, static_labels={"cluster": cfg.cluster.name, "region": region})


def monitoring_outputs(cfg: StackConfig, target: ScrapeTarget) -> dict[str, Any]:
    """Stack outputs every platform exports: the scrape job and the rules file, ready to paste, and what the
    cost rules need."""
    target = identified(cfg, target)
    m = cfg.monitoring
    settings = rule_settings(cfg, target)
    return {
        "monitoringIntegration": m.integration,
        "scrapeConfig": stack_scrape_yaml(target, m.scrapeInterval, m.scrapeTimeout),
        "prometheusRules": rules_file_yaml(rule_groups(settings)),
        "gpuCost": cost_summary(settings.cost, m.integration),
    }


def gpu_monitoring(
    name: str, cfg: StackConfig, target: ScrapeTarget, exporter: pulumi.Resource, opts: pulumi.ResourceOptions
) -> GpuMonitoring:
    m = cfg.monitoring
    target = identified(cfg, target)
    args = MonitoringSpec(
        cluster=cfg.cluster.name,
        integration=m.integration,
        target=target,
        settings=rule_settings(cfg, target),
        selector_labels=m.selectorLabels,
        interval=m.scrapeInterval,
        timeout=m.scrapeTimeout,
        install_namespace=m.installNamespace,
        system=cfg.platform_spec.system_pods,
        prometheus_operator_crds=m.prometheusOperatorCrds,
    )
    return GpuMonitoring.from_spec(name, args, exporter, opts=opts)


def fleet_rules(rules: str, regions: list[StackConfig]) -> str:
    """One fleet's rules file: a region's (`rules`; its alerts and cost rules are the same in every region) with
    the pool and price series of every pool of the fleet, whichever regions it runs in. No rule names a cluster,
    so the file serves each cluster's Prometheus."""
    pools: dict[str, PoolCost] = {}
    for rcfg in regions:
        for p in stack_cost(rcfg).pools:
            pools.setdefault(p.pool, p)
    doc = yamltext.load(rules)
    cost = CostSettings(regions[0].cluster.name, tuple(pools.values()))
    doc["groups"] = [price_group(cost) if g["name"] == PRICES_GROUP else g for g in doc["groups"]]
    return rules_file_yaml(doc["groups"])
