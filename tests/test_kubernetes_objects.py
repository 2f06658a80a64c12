"""Every Kubernetes object gpuplane emits validates against the Kubernetes OpenAPI schema (strict)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from components.plan import Plan

from .conftest import STACKS
from .graph import kube_objects

kubernetes_validate = pytest.importorskip("kubernetes_validate")
K8S_VERSION = "1.31.0"


@pytest.mark.parametrize("stack", STACKS)
def test_emitted_objects_validate(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    objects = list(kube_objects(plan))
    for r in objects:
        obj = r.inputs
        assert obj["metadata"].get("name"), f"{r.urn} has no explicit name (names must be deterministic)"
        try:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:  # pragma: no cover - failure path
            pytest.fail(f"{r.urn}: {exc}")


def test_validator_rejects_a_bad_object() -> None:
    bad = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hardd": {}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)
