"""The deploy simulator's autoscaling rules: a KEDA ScaledObject's Prometheus query names only series the cluster's
integration scrapes, with labels that path writes, and its scale target exists.

- GPU series: dcgm-exporter's, scraped by the cluster's `GpuMonitoring` (its registered `integration` output); the
  names are its default counters that gpuplane reads (`monitoring.rules.METRICS_USED`, checked against
  dcgm-exporter's counter lists by tests/test_reference.py), the labels those of the integration's label model
  (`monitoring.labels`): a canonical workload label stored elsewhere (GKE Managed Prometheus' `namespace`, which
  holds the exporter's namespace) is refused.
- Any other series: a scrape in the plan must collect it from pods of the ScaledObject's namespace: a PodMonitor
  (prometheus-operator pkg/prometheus/promcfg.go `generatePodMonitorConfig`: `namespace`, `container`, `pod`,
  `endpoint`, `job` = `<namespace>/<name>`, `instance`, plus its relabelings), a PodMonitoring (prometheus-engine
  pod_config.go: `project_id`, `location`, `cluster`, `namespace`, `job` = its name, `instance`, plus its metadata
  labels) or the scrape job a `GpuAutoscaler` outputs for scrape-config (its relabel targets, `job`, `instance`).
  The query's `job`, when it names one, must be that scrape's, and only the scrape's target labels may be
  selected (an app's own labels are not known here).
What it cannot know: the series an app really exports (a misspelt serving metric name still passes), and scrapes
a Prometheus gets from elsewhere (a ServiceMonitor on a Service of the pods, your own scrape configs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ...autoscaling.queries import Selector, selectors
from ...autoscaling.render import SCALE_TARGET
from ...monitoring.labels import WORKLOAD, LabelModel, label_model
from ...monitoring.rules import METRIC_SETS, METRICS_USED
from ..mocks_engine import kubernetes_name
from ..runner import PlannedResource
from .graph import DeployGraph, at_path, provider_urn

SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
MONITORING = "gpuplane:monitoring:GpuMonitoring"
AUTOSCALER = "gpuplane:autoscaling:GpuAutoscaler"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")

EXPORTER_LABELS = frozenset(
    {
        "gpu",
        "UUID",
        "device",
        "modelName",
        "Hostname",
        "pci_bus_id",
        "DCGM_FI_DRIVER_VERSION",
        "GPU_I_ID",
        "GPU_I_PROFILE",
    }
)
"""Labels dcgm-exporter puts on a GPU's series itself (NVIDIA/dcgm-exporter internal/pkg/rendermetrics, the
device and MIG attributes); the workload labels come from the label model."""
PODMONITORING_METADATA = ("container", "pod", "top_level_controller_name", "top_level_controller_type")
"""A PodMonitoring's metadata target labels when it names none (prometheus-engine pod_types.go, kubebuilder default)."""


def _map(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def gpu_series(model: LabelModel) -> frozenset[str]:
    m = METRIC_SETS[model.metrics]
    return frozenset({*METRICS_USED, m.util, m.util_node}) if model.metrics == "dcgm" else frozenset({m.util})


def gpu_labels(model: LabelModel) -> frozenset[str]:
    """Labels a GPU series carries on this path; a canonical workload label stored under another name is left out:
    it holds something else (GMP: the exporter's namespace)."""
    shadowed = {label for label in WORKLOAD if model.stored(label) != label}
    stored = {model.stored(label) for label in WORKLOAD}
    base = {model.node, model.cluster, model.region, "job", "instance", METRIC_SETS[model.metrics].gpu_label}
    return frozenset((base | stored | set(model.extra) | EXPORTER_LABELS) - shadowed)


@dataclass(frozen=True)
class Scrape:
    """A scrape of pods on one cluster: where, which pods, its `job` and the labels it writes."""

    source: str
    namespaces: frozenset[str] | None
    """Namespaces it looks in (None: any)."""
    selector: Mapping[str, str]
    job: str | None
    """Its `job` label (None: taken from a pod label, so any)."""
    labels: frozenset[str]


def _relabel_targets(rules: Any, key: str) -> set[str]:
    return {
        str(r[key])
        for r in rules or []
        if isinstance(r, Mapping) and r.get(key) and str(r.get("action", "replace")).lower() == "replace"
    }


def _san(label: str) -> str:
    """A label name as Prometheus discovery spells it in `__meta_kubernetes_pod_label_<name>`."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", label)


def _selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Whether pods with `labels` match a scrape's selector (keys compared as discovery sanitises them)."""
    have = {_san(k): v for k, v in labels.items()}
    return all(have.get(_san(k)) == v for k, v in selector.items())


def _pod_monitor(r: PlannedResource) -> Scrape:
    md, spec = r.inputs.get("metadata") or {}, r.inputs.get("spec") or {}
    ns, name = str(md.get("namespace", "default")), str(md.get("name", r.name))
    selector = _map(at_path(spec, "namespaceSelector"))
    namespaces = None if selector.get("any") else frozenset(selector.get("matchNames") or [ns])
    labels = {"namespace", "container", "pod", "job", "endpoint", "instance"}
    for ep in spec.get("podMetricsEndpoints") or []:
        labels |= _relabel_targets(ep.get("relabelings"), "targetLabel")
    labels |= {_san(str(label)) for label in spec.get("podTargetLabels") or []}
    job = None if spec.get("jobLabel") else f"{ns}/{name}"
    return Scrape(r.urn, namespaces, _map(at_path(spec, "selector.matchLabels")), job, frozenset(labels))


def _pod_monitoring(r: PlannedResource) -> Scrape:
    md, spec = r.inputs.get("metadata") or {}, r.inputs.get("spec") or {}
    ns, name = str(md.get("namespace", "default")), str(md.get("name", r.name))
    metadata = at_path(spec, "targetLabels.metadata")
    labels = {"project_id", "location", "cluster", "namespace", "job", "instance"}
    labels |= set(metadata if isinstance(metadata, list) else PODMONITORING_METADATA)
    for ep in spec.get("endpoints") or []:
        labels |= _relabel_targets(ep.get("metricRelabeling"), "targetLabel")
    return Scrape(r.urn, frozenset({ns}), _map(at_path(spec, "selector.matchLabels")), name, frozenset(labels))


def _jobs(source: str, text: str) -> Iterator[Scrape]:
    """The pod scrape jobs of a `scrape_configs` YAML (a `GpuAutoscaler`'s `scrape_config` output)."""
    for job in yaml.safe_load(text) or []:
        relabels = job.get("relabel_configs") or []
        sds = [sd for sd in job.get("kubernetes_sd_configs") or [] if sd.get("role") == "pod"]
        if not sds:
            continue
        names = [n for sd in sds for n in _list(at_path(sd, "namespaces.names"))]
        keep = {
            str(r["source_labels"][0]).removeprefix("__meta_kubernetes_pod_label_"): re.sub(r"\\(.)", r"\1", r["regex"])
            for r in relabels
            if r.get("action") == "keep"
            and len(r.get("source_labels") or []) == 1
            and str(r["source_labels"][0]).startswith("__meta_kubernetes_pod_label_")
        }
        labels = {"job", "instance"} | _relabel_targets(relabels, "target_label")
        yield Scrape(source, frozenset(names) or None, keep, str(job["job_name"]), frozenset(labels))


def scrapes(g: DeployGraph, provider: str, parent: str | None) -> list[Scrape]:
    """The pod scrapes on the cluster of `provider`, and the scrape jobs the ScaledObject's own component outputs."""
    out = [
        (_pod_monitor if r.type == POD_MONITOR else _pod_monitoring)(r)
        for r in g.plan.resources
        if r.type in (POD_MONITOR, POD_MONITORING) and provider_urn(r.provider) == provider
    ]
    owner = g.by_urn.get(parent or "")
    if owner is not None and owner.type == AUTOSCALER:
        text = (g.plan.registered_outputs.get(owner.urn) or {}).get("scrape_config")
        if isinstance(text, str) and text:
            out += list(_jobs(owner.urn, text))
    return out


def _k8s_providers(g: DeployGraph, urn: str) -> set[str]:
    return {
        provider_urn(g.by_urn[d].provider) or ""
        for d in g.descendants(urn)
        if g.by_urn[d].custom and g.by_urn[d].type.startswith("kubernetes:")
    }


def _lineage(g: DeployGraph, urn: str) -> list[str]:
    out, at = [], g.by_urn.get(urn)
    while at is not None and at.parent:
        out.append(at.parent)
        at = g.by_urn.get(at.parent)
    return out


def monitoring_of(g: DeployGraph, so: PlannedResource) -> PlannedResource | None:
    """The `GpuMonitoring` of the ScaledObject's cluster: the one whose Kubernetes objects share its provider, else
    (scrape-config puts nothing in the cluster) the closest one in the component tree that has none."""
    provider = provider_urn(so.provider) or ""
    found = [m for m in g.plan.by_type(MONITORING)]
    same = [m for m in found if provider in _k8s_providers(g, m.urn)]
    if same:
        return same[0]
    bare = [m for m in found if not _k8s_providers(g, m.urn)]
    mine = _lineage(g, so.urn)
    return max(bare, key=lambda m: len(set(_lineage(g, m.urn)) & set(mine)), default=None)


def _pods(g: DeployGraph, provider: str) -> list[tuple[str, Mapping[str, str]]]:
    """(namespace, pod template labels) of every workload on the cluster."""
    out: list[tuple[str, Mapping[str, str]]] = []
    for r in g.plan.resources:
        kind = r.type.rsplit(":", 1)[-1]
        if r.type.startswith("kubernetes:apps/") and kind in WORKLOADS and provider_urn(r.provider) == provider:
            labels = _map(at_path(r.inputs, "spec.template.metadata.labels"))
            out.append((str(at_path(r.inputs, "metadata.namespace") or "default"), labels))
    return out


def target_of(g: DeployGraph, so: PlannedResource) -> PlannedResource | None:
    ref = _map(at_path(so.inputs, "spec.scaleTargetRef"))
    kind = str(ref.get("kind") or "Deployment")
    version = str(ref.get("apiVersion") or "apps/v1")
    ns = str(at_path(so.inputs, "metadata.namespace") or "default")
    for r in g.plan.by_type(f"kubernetes:{version}:{kind}"):
        if (
            provider_urn(r.provider) == provider_urn(so.provider)
            and str(at_path(r.inputs, "metadata.namespace") or "default") == ns
            and kubernetes_name(r.inputs.get("metadata"), r.name) == str(ref.get("name"))
        ):
            return r
    return None


def _external(so: PlannedResource) -> bool:
    return _map(at_path(so.inputs, "metadata.annotations")).get(SCALE_TARGET) == "external"


def check_scale_targets(g: DeployGraph) -> Iterator[tuple[str, str, str, str]]:
    for so in g.plan.by_type(SCALED_OBJECT):
        if target_of(g, so) is None and not _external(so):
            ref = _map(at_path(so.inputs, "spec.scaleTargetRef"))
            yield (
                "scale-target-exists",
                so.urn,
                f"it scales {ref.get('kind', 'Deployment')} {ref.get('name')!r}, which nothing in this plan creates on "
                "its cluster and namespace: KEDA would scale nothing",
                f"create the Deployment in the plan, or annotate the ScaledObject {SCALE_TARGET}: external when it "
                "exists already",
            )


def _serving_problem(
    g: DeployGraph, so: PlannedResource, sel: Selector, found: list[Scrape], pods: list[tuple[str, Mapping[str, str]]]
) -> str | None:
    ns = str(at_path(so.inputs, "metadata.namespace") or "default")
    job = next((v for k, op, v in sel.matchers if k == "job" and op == "="), None)
    target = target_of(g, so)
    mine = _map(at_path(target.inputs, "spec.template.metadata.labels")) if target else None

    def selects(s: Scrape) -> bool:
        if job is None:  # no job: it must be the scaled pods' own scrape
            return mine is None or _selects(s.selector, mine)
        return _external(so) or any(
            (s.namespaces is None or pns in s.namespaces) and _selects(s.selector, labels) for pns, labels in pods
        )

    here = [s for s in found if (s.namespaces is None or ns in s.namespaces) and (job is None or s.job in (job, None))]
    hits = [s for s in here if selects(s)]
    if not hits:
        what = f" with job {job!r}" if job else ""
        return (
            f"the query names {sel.metric}, which no scrape on this cluster collects{what} from pods in namespace "
            f"{ns} (scrapes here: {', '.join(sorted(str(s.job) for s in found)) or 'none'})"
        )
    bad = sel.labels - hits[0].labels
    if bad:
        return (
            f"the query selects {sel.metric} by {sorted(bad)}, which its scrape ({hits[0].source.rsplit('::', 1)[-1]}) "
            f"does not write (it writes {sorted(hits[0].labels)})"
        )
    return None


def check_scaler_queries(g: DeployGraph) -> Iterator[tuple[str, str, str, str]]:
    for so in g.plan.by_type(SCALED_OBJECT):
        provider = provider_urn(so.provider) or ""
        monitoring = monitoring_of(g, so)
        integration = (g.plan.registered_outputs.get(monitoring.urn) or {}).get("integration") if monitoring else None
        model = label_model("", str(integration)) if integration else None
        found = scrapes(g, provider, so.parent)
        pods = _pods(g, provider)
        for t in _list(at_path(so.inputs, "spec.triggers")):
            if t.get("type") != "prometheus":
                continue
            query = str(at_path(t, "metadata.query") or "")
            sels, grouping = selectors(query)
            problems = []
            for sel in sels:
                if sel.metric.startswith("DCGM_") or (model is not None and sel.metric in gpu_series(model)):
                    if model is None:
                        problems.append(f"the query names {sel.metric}, but no GpuMonitoring scrapes GPU metrics here")
                    elif sel.metric not in gpu_series(model):
                        problems.append(f"{sel.metric} is not among the DCGM series gpuplane's exporter serves")
                    elif sel.labels - gpu_labels(model):
                        carried = sorted(gpu_labels(model))
                        problems.append(
                            f"the query selects {sel.metric} by {sorted(sel.labels - gpu_labels(model))}, which on "
                            f"{integration} no GPU series carries for its workload (they carry {carried})"
                        )
                else:
                    found_problem = _serving_problem(g, so, sel, found, pods)
                    if found_problem:
                        problems.append(found_problem)
            if grouping and sels and model is not None:
                known = gpu_labels(model) | {label for s in found for label in s.labels}
                if grouping - known:
                    problems.append(f"it groups by {sorted(grouping - known)}, which no scrape here writes")
            for p in problems:
                yield (
                    "scaler-query-scraped",
                    so.urn,
                    f"{p}: KEDA would read an empty result as 0 and never scale",
                    "query the series and labels the cluster's integration stores (monitoring.labels; GpuAutoscaler "
                    "writes such a query and adds the serving pods' scrape)",
                )
