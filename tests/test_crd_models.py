"""Custom resources against validators generated from their published CRDs, in any clone.

`tests/test_kubernetes_objects.py` checks the same objects against the CRD files in `../shared/reference`
(strict unknown fields and CEL rules) where they exist, which only CI has. These checks need only the
npm packages pinned in tests/node/package.json (see docs/testing.md for what each side covers).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gpuplane.catalog import PLATFORMS
from gpuplane.plan import Plan

from .conftest import STACKS, load_stack_config, on_bottlerocket, stack_with
from .crd_models import Validators, kinds, node_or_skip
from .graph import kube_objects
from .summary import record
from .test_compute_class import compute_class_stack
from .test_karpenter_overlay import shared_stack
from .test_kubernetes_objects import BUILTIN_GROUPS

CI_ONLY = {
    "monitoring.googleapis.com/v1 PodMonitoring": "no npm package carries GKE Managed Prometheus's CRDs",
    "monitoring.googleapis.com/v1 ClusterPodMonitoring": "no npm package carries GKE Managed Prometheus's CRDs",
    **{
        f"kueue.x-k8s.io/v1beta2 {kind}": "no npm package carries Kueue's CRDs (CRDs and CEL: tests/test_kueue.py)"
        for kind in (
            "ResourceFlavor",
            "ClusterQueue",
            "LocalQueue",
            "Topology",
            "AdmissionCheck",
            "ProvisioningRequestConfig",
        )
    },
}
"""Custom resources gpuplane emits that only the CRD files in ../shared/reference check, and why."""
OWN_SCHEMA = {
    "networking.gke.io/v1 Network": "tests/schemas/networking.gke.io.yaml (Google publishes no CRD file)",
    "networking.gke.io/v1 GKENetworkParamSet": "tests/schemas/networking.gke.io.yaml (Google publishes no CRD file)",
}
"""Custom resources checked in any clone against the schema this repository writes from Google's reference
(tests/test_multinode.py), so neither an npm validator nor CI's CRD files apply."""

CASES = [
    (stack, integration)
    for stack in STACKS
    for integration in PLATFORMS[load_stack_config(stack)["gpuplane:platform"]].integrations
]
EXTRA = {
    "aws-karpenter+bottlerocket": lambda: on_bottlerocket("aws-karpenter"),
    "aws-karpenter+sharing": shared_stack,
    "gcp-nap+compute-class": lambda: compute_class_stack("gcp-nap"),
    "gcp-autopilot+compute-class": lambda: compute_class_stack("gcp-autopilot"),
}
"""Variants beyond the shipped stacks: the other NVIDIA image (two volumes), every GPU sharing mode
(one NodeOverlay per sharing class), and GPU classes with a ComputeClass (reserved, flex-start, spot)."""

SEEN: Counter[str] = Counter()

# pytest-xdist: one worker runs the module, so the coverage check at its end sees every case.
pytestmark = pytest.mark.xdist_group("crd-models")


@pytest.fixture(scope="session")
def validators() -> Iterator[Validators]:
    v = Validators(node_or_skip())
    yield v
    v.close()


@pytest.fixture(scope="module")
def covered() -> set[str]:
    return set(kinds())


def check(plan: Plan, validators: Validators, covered: set[str]) -> int:
    custom = [r for r in kube_objects(plan) if r.inputs["apiVersion"] not in BUILTIN_GROUPS]
    names = [f"{r.inputs['apiVersion']} {r.inputs['kind']}" for r in custom]
    unknown = set(names) - covered - set(CI_ONLY) - set(OWN_SCHEMA)
    assert not unknown, f"a new custom resource kind: add a validator or a CI_ONLY entry: {sorted(unknown)}"
    checked = [r for r, n in zip(custom, names, strict=True) if n in covered]
    SEEN.update(n for n in names if n in covered)
    errors = validators.errors([r.inputs for r in checked])
    bad = {r.urn: e for r, e in zip(checked, errors, strict=True) if e}
    assert not bad, bad
    return len(checked)


@pytest.mark.parametrize(("stack", "integration"), CASES)
def test_custom_resources_match_their_crd_models(
    stack: str, integration: str, plan_of: Callable[..., Plan], validators: Validators, covered: set[str]
) -> None:
    check(plan_of(stack_with(stack, monitoring={"integration": integration})), validators, covered)


@pytest.mark.parametrize("variant", sorted(EXTRA))
def test_variants_match_their_crd_models(
    variant: str, plan_of: Callable[..., Plan], validators: Validators, covered: set[str]
) -> None:
    assert check(plan_of(EXTRA[variant]()), validators, covered)


def test_every_kind_the_models_cover_was_checked(covered: set[str]) -> None:
    """Runs after the cases above (file order, one worker): each kind the models cover was emitted."""
    if not SEEN:
        pytest.skip("the cases above were deselected")
    assert covered <= set(SEEN), f"never emitted, so never checked: {covered - set(SEEN)}"
    record("CRD models (npm)", ", ".join(f"{k}: {n}" for k, n in sorted(SEEN.items())))


BAD: list[tuple[dict[str, Any], str]] = [
    (
        {
            "apiVersion": "cloud.google.com/v1",
            "kind": "ComputeClass",
            "metadata": {"name": "x"},
            "spec": {"priorities": [{"gpu": {"type": "nvidia-l4", "count": 1}}], "whenUnsatisfiable": "Wait"},
        },
        "/spec/whenUnsatisfiable",
    ),
    (
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "x"},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "d"},
                        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Inn", "values": ["spot"]}],
                    }
                }
            },
        },
        "/spec/template/spec/requirements/0/operator",
    ),
    (
        {
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": "x"},
            "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "metadataOptions": {"httpTokens": "always"}},
        },
        "/spec/metadataOptions/httpTokens",
    ),
    (
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {"name": "x"},
            "spec": {"selector": {}, "endpoints": [{"port": "m", "interval": "15 seconds"}]},
        },
        "/spec/endpoints/0/interval",
    ),
    (
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": "x"},
            "spec": {"groups": [{"rules": [{"alert": "A", "expr": "up"}]}]},
        },
        "/spec/groups/0",
    ),
]


def test_the_models_reject_bad_objects(validators: Validators) -> None:
    for (obj, path), errors in zip(BAD, validators.errors([o for o, _ in BAD]), strict=True):
        assert any(e.startswith(path) for e in errors), (obj["kind"], path, errors)
