"""`gpuplane rightsize`: the settings from the command line, the queries against one Prometheus, and the
report the decisions make. The only module here that talks to a server (through `client.Prometheus`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ..catalog.availability import PRICE_SOURCE, SPOT_FRACTION
from ..config.model import GpuPool, StackConfig
from ..config.monitoring import duration_seconds
from ..errors import InputError
from ..monitoring.cost import CostSettings, allowlist_flag
from ..monitoring.labels import LabelModel, label_model
from ..monitoring.rules import METRIC_SETS
from ..monitoring.wiring import stack_cost
from ..stack.fleet import region_configs
from .client import Prometheus
from .observe import PoolUse, held_gpus, node_pools, owned, owners, pool_use, workloads
from .query import USAGE, PoolsByCluster, Window, owner_queries, pool_queries, presence_queries, series_queries
from .recommend import Advice, PoolAdvice, advise, advise_pool
from .rules import DEFAULT_MARGIN, RESOLUTION

_WINDOW = re.compile(r"^([1-9][0-9]*)(m|h|d|w)$")
_UNIT = {"m": 60, "h": 3600, "d": 86400, "w": 604800}
MIN_WINDOW = 600
MAX_WINDOW = 90 * 86400
"""Longest `--window`: a quarter, beyond the retention most Prometheus servers keep (15 days by default) and
the range over which the per-window subqueries (2016 steps) stay cheap to evaluate."""
_SCOPE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(/[a-z0-9]([-.a-z0-9]*[a-z0-9])?)?$")


@dataclass(frozen=True)
class Settings:
    """What the command line asks for."""

    window: Window
    at: float
    """Unix time the window ends at."""
    margin: float
    """Fraction over the peaks (0.2 = 20%)."""
    interruptible: tuple[str, ...]
    """`NAMESPACE` or `NAMESPACE/WORKLOAD` entries whose workloads tolerate interruption (spot)."""
    interval: float
    """The stack's scrape interval in seconds: samples expected per GPU-second."""

    def tolerates(self, namespace: str, workload: str) -> bool:
        return namespace in self.interruptible or f"{namespace}/{workload}" in self.interruptible


def parse_at(text: str | None, now: float) -> float:
    """`--at`: unix seconds or an ISO 8601 time with its offset (default: now)."""
    if text is None:
        return now
    try:
        return float(text)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{text!r} is neither unix seconds nor an ISO 8601 time", "--at") from None
    if parsed.tzinfo is None:
        raise InputError(f"{text!r} has no UTC offset (end it with Z or +00:00)", "--at")
    return parsed.timestamp()


def settings(
    cfg: StackConfig,
    window: str,
    margin_percent: float | None,
    interruptible: Sequence[str],
    at: str | None,
    now: float,
) -> Settings:
    """Checked settings (each bad argument an InputError naming it)."""
    m = _WINDOW.match(window)
    seconds = int(m[1]) * _UNIT[m[2]] if m else 0
    if seconds < MIN_WINDOW:
        raise InputError(
            f"{window!r} is not a window of at least 10m: a whole number and m, h, d or w (e.g. 7d, 24h, 90m)",
            "--window",
        )
    if seconds > MAX_WINDOW:
        raise InputError(f"{window!r} is longer than {MAX_WINDOW // 86400}d", "--window")
    margin = DEFAULT_MARGIN if margin_percent is None else margin_percent / 100
    if not 0 <= margin <= 1:
        raise InputError(f"{margin_percent:g} is not a percentage between 0 and 100", "--margin")
    bad = [s for s in interruptible if not _SCOPE.match(s)]
    if bad:
        raise InputError(f"{bad[0]!r} is not NAMESPACE or NAMESPACE/WORKLOAD", "--interruptible")
    interval = duration_seconds(cfg.monitoring.scrapeInterval)
    step = max(math.ceil(interval), math.ceil(seconds / RESOLUTION))
    return Settings(Window(window, seconds, step), parse_at(at, now), margin, tuple(interruptible), interval)


@dataclass(frozen=True)
class Report:
    stack: str
    url: str
    settings: Settings
    integration: str
    workloads: tuple[Advice, ...]
    pools: tuple[PoolAdvice, ...]
    notes: tuple[str, ...]
    prices: str
    """Where the prices come from."""
    queries: dict[str, str]
    """Name -> the PromQL sent (at the window's end)."""
    span: tuple[float, float] | None = None
    """First and last sample of the stack's GPU series in the window (what the server holds of it)."""

    @property
    def observed_hours(self) -> float:
        """Hours of the window the server holds GPU series for (savings are scaled from these to a month)."""
        if self.span is None:
            return self.settings.window.seconds / 3600
        first, last = self.span
        return min(self.settings.window.seconds, last - first + self.settings.interval) / 3600


def price_source(cfg: StackConfig) -> str:
    """The capacity summary's words for the prices (`gpuplane:prices`, or the catalog's dated estimate)."""
    spot = cfg.prices.spotFraction or SPOT_FRACTION[cfg.platform_spec.cloud]
    mine = "your prices (gpuplane:prices)" if cfg.prices.onDemand else f"estimate: {PRICE_SOURCE}"
    return f"{mine}; spot at {spot:g} x on-demand"


def window_end(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _no_data(prom: Prometheus, labels: LabelModel, clusters: list[str], s: Settings) -> InputError:
    """The error for a window in which the stack's clusters have no GPU series, saying what the server holds."""
    seen = sorted(
        m.get(labels.cluster, "")
        for m, _ in prom.query(presence_queries(labels, clusters, s.window)["gpuClusters"], s.at)
    )
    memory, util = USAGE[labels.metrics].memory, METRIC_SETS[labels.metrics].util
    found = (
        f"; it has {memory} or {util} for {labels.cluster} {', '.join(repr(c) for c in seen)}"
        if seen
        else f"; it holds no {memory} or {util} at all then"
    )
    stack = f'{{{labels.cluster}=~"{"|".join(clusters)}"}}'
    where = f"{memory}{stack} or {util}{stack}"
    return InputError(
        f"{prom.url} has no GPU series of this stack ({where}) in the {s.window.text} window ending "
        f"{window_end(s.at)}{found}",
        "--window",
    )


def pool_nodes(configs: Sequence[StackConfig]) -> tuple[PoolsByCluster, str]:
    """Each cluster's pools as the cost rules select their nodes, and the kube-state-metrics flag that exposes
    those node labels."""
    pools = {c.cluster.name: stack_cost(c).pools for c in configs}
    every = tuple(p for ps in pools.values() for p in ps)
    return pools, allowlist_flag(CostSettings("", every))


def pool_note(labels: LabelModel, ksm: list[tuple[dict[str, str], float]], clusters: list[str], flag: str) -> str:
    """Why no pool could be compared, from `presenceQueries.nodeLabels`' answer."""
    carried = {m.get(labels.cluster, "") for m, _ in ksm}
    if not ksm:
        missing = "no kube_node_labels (kube-state-metrics)"
    elif len(clusters) > 1 and not carried & set(clusters):
        missing = (
            f"kube_node_labels without a {labels.cluster} label of the stack's clusters (with {len(clusters)} "
            "clusters, their nodes cannot be told apart)"
        )
    else:
        missing = "no kube_node_labels matching a pool"
    return (
        f"no pool comparison: this Prometheus has {missing} in the window (kube-state-metrics exposes the node "
        f"labels that select the pools only with {flag}); workloads are matched to pools by their GPU model"
    )


def run(stack: str, cfg: StackConfig, prom: Prometheus, s: Settings) -> Report:
    """Query `prom` for the stack's GPU series over the window and decide."""
    integration = cfg.monitoring.integration
    labels = label_model(cfg.platform, integration)
    regions = region_configs(cfg)
    clusters = [r.cluster.name for _, r in regions]
    if not prom.query(presence_queries(labels, clusters, s.window)["stackGpus"], s.at):
        raise _no_data(prom, labels, clusters, s)
    selected, flag = pool_nodes([r for _, r in regions])
    queries = series_queries(labels, clusters, s.window) | pool_queries(labels, clusters, s.window, selected)
    answers = {name: prom.query(q, s.at) for name, q in queries.items()}
    span = (answers["spanFirst"][0][1], answers["spanLast"][0][1]) if answers["spanFirst"] else None
    nodes = node_pools(answers["nodePools"], labels.cluster, clusters)
    pools: dict[str, list[GpuPool]] = {r.cluster.name: list(r.gpuPools) for _, r in regions}
    held = held_gpus(answers, labels)
    # kube-state-metrics' owners: of the pods, then of their ReplicaSets and Jobs (two rounds)
    for pods, of in (([h.pod for h in held], {}), ([], None)):
        asked = owner_queries(labels, clusters, s.window, pods, owned(answers) if of is None else of)
        queries |= asked
        answers |= {name: prom.query(q, s.at) for name, q in asked.items()}
    found = workloads(held, nodes, pools, s.interval, owners(answers, labels.cluster, clusters))
    use = pool_use(answers, labels.cluster, clusters)
    by_cluster = {r.cluster.name: r for _, r in regions}
    report = Report(stack, prom.url, s, integration, (), (), (), price_source(cfg), queries, span)
    hours = report.observed_hours
    advices = []
    for w in found:
        rcfg = by_cluster[w.cluster]
        pool = next((p for p in rcfg.gpuPools if p.name == w.pool), None)
        advices.append(advise(rcfg, pool, w, s.margin, s.tolerates(w.namespace, w.name), hours))
    rows = []
    for region, rcfg in regions:
        for p in rcfg.gpuPools:
            seen: PoolUse | None = use.get((rcfg.cluster.name, p.name), PoolUse(0, 0, 0)) if nodes else None
            rows.append(advise_pool(rcfg, region, p, seen, s.margin))
    notes = []
    if not nodes:
        ksm = prom.query(presence_queries(labels, clusters, s.window)["nodeLabels"], s.at)
        notes.append(pool_note(labels, ksm, clusters, flag))
    if not found:
        notes.append("no GPU was held by a pod in the window: nothing to rightsize per workload")
    if hours < s.window.seconds / 3600 * 0.99:
        notes.append(
            f"the server holds {hours:.1f} h of GPU series of the {s.window.text} window (retention, or a newer "
            "cluster): savings are scaled to a month from those hours"
        )
    return Report(
        stack,
        prom.url,
        s,
        integration,
        tuple(advices),
        tuple(rows),
        tuple(notes),
        price_source(cfg),
        queries,
        span,
    )


__all__ = ["MAX_WINDOW", "Report", "Settings", "parse_at", "pool_note", "run", "settings"]
