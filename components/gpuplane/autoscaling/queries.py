"""The PromQL a ScaledObject carries, written against the label model of the stack's integration, and the small
reader the deploy simulator uses to see which series and labels a query names.

KEDA's Prometheus scaler takes the first sample of an instant query and refuses a result of more than one series
("prometheus query ... returned multiple elements"); an empty result counts as 0 with `ignoreNullValues` (its
default) (kedacore/keda v2.20.2 pkg/scalers/prometheus_scaler.go `ExecutePromQuery`). So every query aggregates
to one series, without `by`.

- GPU kinds: dcgm-exporter puts the using pod's `namespace`/`pod` on a GPU's series only while a pod holds it
  (`monitoring.labels`), in the labels the integration stores them in (GKE Managed Prometheus: the namespace in
  `exported_namespace`). A Deployment's pods are `<name>-<ReplicaSet hash>-<suffix>`, matched by `pod_pattern`.
- Serving: the series of the scrape gpuplane adds for the serving pods, told apart by its `job` (`serving_job`),
  in the workload's namespace (every integration's pod scrape writes the pod's namespace as `namespace`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..monitoring.labels import LabelModel
from ..monitoring.rules import METRIC_SETS

ALPHANUMS = "[bcdfghjklmnpqrstvwxz2456789]"
"""The characters of generated name parts (apimachinery pkg/util/rand `alphanums`: no vowels, no 0, 1, 3)."""
POD_SUFFIX = f"-{ALPHANUMS}{{1,10}}-{ALPHANUMS}{{5}}"
"""A Deployment's pod names after its own: the ReplicaSet's pod-template hash (`SafeEncodeString` of a uint32: up to
10 characters; kubernetes pkg/controller/deployment/sync.go), then the pod's 5-character random suffix (apiserver
names.SimpleNameGenerator). Neither part holds a '-', so `vllm` never matches `vllm-large`'s pods, nor a Job's
(`vllm-warmup-x7k2p`) or a StatefulSet's (`vllm-router-0`)."""

FRESH = "1m"
"""GKE Managed Prometheus has no staleness ("Staleness is not supported in the Monarch backend", Managed Service for
Prometheus, PromQL differences): a gone pod's last sample would count for the whole 5-minute lookback. There every
selector reads `last_over_time(...[1m])` instead, so a pod stops counting a minute after its last scrape."""

GPU_MEMORY = {"dcgm": ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE")}
"""Metric set -> (used, free) framebuffer series (MiB), whose sum is the GPU's memory (`rules.METRIC_SETS`
`memory_ratio`)."""


def pod_pattern(deployment: str) -> str:
    """A regex (RE2, anchored by Prometheus) for the names of the Deployment's pods."""
    return f"{deployment}{POD_SUFFIX}"


def monitor_name(deployment: str) -> str:
    """The name of the scrape object (PodMonitor, PodMonitoring) for a workload's serving pods."""
    return f"{deployment}-metrics"


def serving_job(integration: str, namespace: str, deployment: str) -> str:
    """The `job` label of the serving pods' series: prometheus-operator names a PodMonitor's job
    `<namespace>/<name>` (pkg/prometheus/promcfg.go `generatePodMonitorConfig`); GKE Managed Prometheus names it
    after the PodMonitoring (prometheus-engine pod_config.go `endpointScrapeConfig`); gpuplane's scrape job takes the
    operator's form, so the two self-managed paths agree."""
    name = monitor_name(deployment)
    return name if integration == "gke-managed" else f"{namespace}/{name}"


def _selector(pairs: Iterable[tuple[str, str, str]]) -> str:
    return "{" + ", ".join(f'{k}{op}"{v}"' for k, op, v in pairs) + "}"


def _read(metric: str, sel: str, stale_free: bool) -> str:
    return f"last_over_time({metric}{sel}[{FRESH}])" if stale_free else f"{metric}{sel}"


def gpu_query(kind: str, model: LabelModel, namespace: str, deployment: str, cluster: str, gmp: bool = False) -> str:
    """The Deployment's GPUs' utilisation or memory (%), averaged over them (`gmp`: GKE Managed Prometheus)."""
    sel = _selector(
        [
            (model.stored("namespace"), "=", namespace),
            (model.stored("pod"), "=~", pod_pattern(deployment)),
            (model.cluster, "=", cluster),
        ]
    )
    if kind == "gpu-utilization":
        return f"avg({_read(METRIC_SETS[model.metrics].util, sel, gmp)})"
    used, free = (_read(m, sel, gmp) for m in GPU_MEMORY[model.metrics])
    return f"avg(100 * {used} / ({used} + {free}))"


def serving_query(metric: str, job: str, namespace: str, cluster: str, gmp: bool = False) -> str:
    """The serving metric summed over the pods of its scrape (`gmp`: GKE Managed Prometheus)."""
    sel = _selector([("namespace", "=", namespace), ("job", "=", job), ("cluster", "=", cluster)])
    return f"sum({_read(metric, sel, gmp)})"


# --- Reading a query back (the deploy simulator) -----------------------------------------------------------

_STRING = r'"(?:[^"\\]|\\.)*"'
_BRACES = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{((?:[^}\"]|" + _STRING + r")*)\}")
_MATCHER = re.compile(r"\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(" + _STRING + r")\s*,?")
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool"})


@dataclass(frozen=True)
class Selector:
    """One vector selector of a query: the metric and its label matchers (`(label, op, value)`)."""

    metric: str
    matchers: tuple[tuple[str, str, str], ...] = ()

    @property
    def labels(self) -> set[str]:
        return {k for k, _, _ in self.matchers}


def selectors(query: str) -> tuple[list[Selector], set[str]]:
    """The vector selectors of `query` and the label names its grouping clauses use. Covers the PromQL gpuplane
    writes and its usual neighbours (functions, aggregations, binary operators, grouping), not every form: a
    selector without a metric name (`{__name__=...}`) is read with metric `""`."""
    found: list[Selector] = []
    grouping = {label.strip() for m in _GROUPING.finditer(query) for label in m[2].split(",") if label.strip()}
    rest = _GROUPING.sub(" ", query)

    def take(m: re.Match[str]) -> str:
        matchers = tuple((k, op, v[1:-1]) for k, op, v in _MATCHER.findall(m[2]))
        found.append(Selector(m[1] or "", matchers))
        return " "

    rest = _BRACES.sub(take, rest)
    rest = re.sub(_STRING, " ", rest)
    rest = re.sub(r"\[[^\]]*\]", " ", rest)  # range and subquery durations
    for m in _NAME.finditer(rest):
        after = rest[m.end() :].lstrip()
        name = m[0]
        if name in KEYWORDS or after.startswith("(") or re.fullmatch(r"(offset|Inf|NaN|inf|nan)", name):
            continue
        if m.start() > 0 and (rest[m.start() - 1].isdigit() or rest[m.start() - 1] == "."):
            continue  # a number's exponent or unit (1e3)
        found.append(Selector(name))
    return found, grouping
