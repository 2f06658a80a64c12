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
