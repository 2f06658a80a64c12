"""The tests' own matchers (tests/graph.py, from the Kubernetes API reference) and the deploy simulator's
agree on the API's corner cases, so a bug in either is caught by the other."""

from __future__ import annotations

from gpuplane.plan.deploy.scheduling import NodeShape, fits, tolerated

from .graph import matches, tolerates


def test_the_oracles_agree_with_the_simulator_on_their_corners() -> None:
    """The simulator's matchers (what `gpuplane plan --check` uses) hold to the oracles on the API's corner
    cases; a wrong effect, operator or empty key in either is caught here."""
    taint = ("nvidia.com/gpu", "present", "NoSchedule")
    cases = [
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}],
        [{"key": "nvidia.com/gpu", "value": "present"}],
        [{"key": "nvidia.com/gpu", "value": "other", "effect": "NoSchedule"}],
        [{"operator": "Exists"}],
        [{"operator": "Exists", "effect": "PreferNoSchedule"}],
        [{"key": "other", "operator": "Exists"}],
        [],
    ]
    for tolerations in cases:
        assert tolerated(tolerations, taint) == tolerates(tolerations, taint), tolerations
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]},
                    {
                        "matchExpressions": [
                            {"key": "gpu", "operator": "Exists"},
                            {"key": "spot", "operator": "NotIn", "values": ["true"]},
                        ]
                    },
                ]
            }
        }
    }
    for labels in ({"pool": "a"}, {"pool": "b"}, {"gpu": "l4"}, {"gpu": "l4", "spot": "true"}, {}):
        shape = NodeShape("node", {k: frozenset({v}) for k, v in labels.items()})
        assert fits({"affinity": affinity}, shape) == matches(affinity, labels), labels


DCGM_EXPORTER_SERVICE_LABELS = {
    "app.kubernetes.io/name": "dcgm-exporter",
    "app.kubernetes.io/instance": "dcgm-exporter",
    "app.kubernetes.io/component": "dcgm-exporter",
}
"""The labels monitors can select the dcgm-exporter chart's (4.8.2) Service by, for release `dcgm-exporter`
with no nameOverride, from its templates (NVIDIA/dcgm-exporter deployment/templates/_helpers.tpl: name = chart
name, instance = release name, component "dcgm-exporter"; the Service also carries chart, version and
managed-by labels, and the pods name, instance and component). A mocked plan cannot show them (the chart
renders them)."""


def test_the_exporter_labels_gpuplane_selects_are_the_charts() -> None:
    from gpuplane.nvidia import dcgm

    assert dcgm.service_labels() == DCGM_EXPORTER_SERVICE_LABELS
    assert dcgm.pod_labels() == {
        k: DCGM_EXPORTER_SERVICE_LABELS[k] for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance")
    }
