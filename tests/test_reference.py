"""Checks against the published charts (../shared/reference), skipped clearly when it is absent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from gpuplane.pins import CHARTS
from gpuplane.plan import Plan

from .conftest import STACKS, need_reference
from .graph import RELEASE

# Chart.yaml in git does not carry the released version for these (see the reference README).
UNVERSIONED_IN_GIT = {"gpu-operator", "karpenter", "karpenter-crd"}
# (karpenter-crd has no copy in the reference folder; the karpenter chart in git says 1.13.0 at tag v1.14.1.)


# Values keys whose content is a Kubernetes object the chart copies with toYaml (a container
# SecurityContext, resources, affinity) or a command-line flag map (cluster-autoscaler extraArgs):
# their fields come from the Kubernetes API or the program's flags, not values.yaml.
KUBERNETES_TYPED = {"securityContext", "podSecurityContext", "resources", "affinity", "nodeSelector", "extraArgs"}


# Keys of a subchart's own values.yaml (not in the reference folder) that gpuplane sets through the parent:
# the pod placement keys of kube-prometheus-stack's grafana (grafana-community/helm-charts,
# charts/grafana/values.yaml) and kube-state-metrics (prometheus-community/helm-charts,
# charts/kube-state-metrics/values.yaml), both top-level `nodeSelector: {}` and `tolerations: []`.
SUBCHART_KEYS = {
    "kube-prometheus-stack": {
        "grafana": {"nodeSelector": {}, "tolerations": []},
        # prometheus-community/helm-charts charts/kube-state-metrics/values.yaml: `metricLabelsAllowlist: []`
        # (rendered as --metric-labels-allowlist by templates/deployment.yaml)
        "kube-state-metrics": {"nodeSelector": {}, "tolerations": [], "metricLabelsAllowlist": []},
    }
}


def with_subchart_keys(chart: str, defaults: dict[str, Any]) -> dict[str, Any]:
    out = dict(defaults)
    for sub, keys in SUBCHART_KEYS.get(chart, {}).items():
        out[sub] = {**keys, **(out.get(sub) or {})}
    return out


def missing_keys(ours: Any, defaults: Any, path: str = "") -> Iterator[str]:
    """Values paths we set that the chart's values.yaml does not have.

    Below a key whose default is not a non-empty map (a list, a scalar, `{}`), or that holds a
    Kubernetes object (`KUBERNETES_TYPED`), content is free-form.
    """
    if not isinstance(ours, dict):
        return
    for key, value in ours.items():
        here = f"{path}.{key}" if path else key
        if not isinstance(defaults, dict) or key not in defaults:
            yield here
        elif key in KUBERNETES_TYPED:
            continue
        elif isinstance(defaults[key], dict) and defaults[key]:
            yield from missing_keys(value, defaults[key], here)


RESTATED: dict[str, dict[str, Any]] = {
    # The reference folder has no KEDA chart. Restated from kedacore/charts @ cbb9bb8 ("prepare v2.20.2 release"):
    # keda/Chart.yaml, and the keda/values.yaml keys gpuplane sets, with their defaults there.
    "keda": {
        "Chart.yaml": {"version": "2.20.2", "appVersion": "2.20.2"},
        "values.yaml": {
            "nodeSelector": {},
            "tolerations": [],
            "crds": {"install": True, "additionalAnnotations": {}},
            "serviceAccount": {
                "operator": {
                    "create": True,
                    "name": "keda-operator",
                    "automountServiceAccountToken": True,
                    "annotations": {},
                }
            },
        },
    },
}
"""Chart files the reference folder lacks, restated here with their source (used only where the folder has none)."""


def chart_file(chart: str, name: str) -> dict[str, Any]:
    ref = need_reference()
    path = ref / "charts" / chart / name
    if not path.is_file() and chart in RESTATED:
        return dict(RESTATED[chart][name])
    return dict(yaml.safe_load(path.read_text()))


def chart_values(chart: str) -> dict[str, Any]:
    return chart_file(chart, "values.yaml")


@pytest.mark.parametrize("stack", STACKS)
def test_values_keys_exist_in_pinned_chart(stack: str, plan_of: Callable[..., Plan]) -> None:
    need_reference()
    for release in plan_of(stack).by_type(RELEASE):
        chart = release.inputs["chart"].rsplit("/", 1)[-1]  # OCI charts are addressed by URL
        if not release.inputs["values"]:
            continue
        defaults = with_subchart_keys(chart, chart_values(chart))
        bad = list(missing_keys(release.inputs["values"], defaults))
        assert not bad, f"{release.urn}: keys not in {release.inputs['chart']} values.yaml: {bad}"


@pytest.mark.parametrize("monitoring", [{"integration": "install"}, {"integration": "prometheus-operator"}])
def test_auto_mode_monitoring_keys_exist(monitoring: dict[str, str], plan_of: Callable[..., Plan]) -> None:
    """Auto Mode's system-pod tolerations and the CRD chart's values (no shipped stack sets both)."""
    need_reference()
    from .conftest import stack_with

    for release in plan_of(stack_with("aws-automode", monitoring=monitoring)).by_type(RELEASE):
        chart = release.inputs["chart"].rsplit("/", 1)[-1]
        bad = list(missing_keys(release.inputs["values"], with_subchart_keys(chart, chart_values(chart))))
        assert not bad, f"{release.urn}: {bad}"


def test_missing_keys_finds_typos() -> None:
    assert list(
        missing_keys({"service": {"prot": 1}, "tolerations": [1]}, {"service": {"port": 9400}, "tolerations": []})
    ) == ["service.prot"]


@pytest.mark.parametrize("key", sorted(set(CHARTS) - UNVERSIONED_IN_GIT))
def test_pins_match_published_chart(key: str) -> None:
    meta = chart_file(key, "Chart.yaml")
    assert str(meta["version"]) == CHARTS[key].version
    assert str(meta["appVersion"]) == CHARTS[key].app_version


def test_rules_use_only_default_dcgm_counters() -> None:
    """Every DCGM field the rules and dashboard read is in dcgm-exporter's default counter lists."""
    from gpuplane.monitoring.rules import METRICS_USED, RuleSettings, rule_groups

    ref = need_reference()
    for csv in ("default-counters.csv", "dcp-metrics-included.csv"):
        fields = {
            line.split(",")[0].strip()
            for line in (ref / "dcgm" / csv).read_text().splitlines()
            if line.strip() and not line.startswith("#")
        }
        assert set(METRICS_USED) <= fields, (csv, set(METRICS_USED) - fields)
    exprs = " ".join(r["expr"] for g in rule_groups(RuleSettings()) for r in g["rules"])
    import re

    assert set(re.findall(r"DCGM_FI_[A-Z_]+", exprs)) <= set(METRICS_USED)
