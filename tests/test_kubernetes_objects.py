"""Every Kubernetes object gpuplane emits validates against the Kubernetes OpenAPI schema (strict)."""

from __future__ import annotations

import re
from collections.abc import Callable

import kubernetes_validate
import pytest

from gpuplane.catalog import PLATFORMS
from gpuplane.catalog.platforms import Source
from gpuplane.plan import Plan

from .conftest import STACKS, load_stack_config, schema_version
from .graph import kube_objects

K8S_VERSION = schema_version("gcp-standard")
"""For objects built outside a stack: the shipped stacks' minor (each stack's own objects use its own)."""


BUILTIN_GROUPS = ("v1", "apps/v1", "rbac.authorization.k8s.io/v1", "batch/v1", "resource.k8s.io/v1")


@pytest.mark.parametrize("stack", STACKS)
def test_emitted_objects_validate(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    objects = [r for r in kube_objects(plan) if r.inputs["apiVersion"] in BUILTIN_GROUPS]
    for r in objects:
        obj = r.inputs
        assert obj["metadata"].get("name"), f"{r.urn} has no explicit name (names must be deterministic)"
        try:
            kubernetes_validate.validate(obj, schema_version(stack), strict=True)
        except kubernetes_validate.ValidationError as exc:  # pragma: no cover - failure path
            pytest.fail(f"{r.urn}: {exc}")
        # Pod Security Admission labels: OpenAPI leaves labels free-form, the admission plugin does not.
        psa = {k: v for k, v in obj["metadata"].get("labels", {}).items() if k.startswith(PSA_PREFIX)}
        assert all(k.removeprefix(PSA_PREFIX) in PSA_MODES and v in PSA_LEVELS for k, v in psa.items()), psa
        if obj["kind"] == "Namespace":
            assert f"{PSA_PREFIX}enforce" in psa, f"{r.urn} has no Pod Security level"


PSA_PREFIX = "pod-security.kubernetes.io/"
PSA_MODES = {"enforce", "audit", "warn"}
PSA_LEVELS = {"privileged", "baseline", "restricted"}
"""The Pod Security Admission modes and levels (k8s.io/pod-security-admission `api.Level`)."""


def test_bottlerocket_node_classes_validate(plan_of: Callable[..., Plan]) -> None:
    """The other NVIDIA image maps two volumes: its EC2NodeClasses still match the published CRD."""
    from .conftest import need_reference, on_bottlerocket
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    classes = [r for r in kube_objects(plan_of(on_bottlerocket("aws-karpenter"))) if r.inputs["kind"] == "EC2NodeClass"]
    assert classes
    for r in classes:
        assert len(r.inputs["spec"]["blockDeviceMappings"]) == 2, r.urn
        schema = crd_schema(ref, r.inputs["apiVersion"], r.inputs["kind"])
        assert not schema_errors(r.inputs, schema), f"{r.urn}: {schema_errors(r.inputs, schema)}"
        assert not cel_results(r.inputs, schema)[0], r.urn


def test_validator_rejects_a_bad_object() -> None:
    bad = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hardd": {}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


CR_CASES = [
    (stack, integration)
    for stack in STACKS
    for integration in PLATFORMS[load_stack_config(stack)["gpuplane:platform"]].integrations
    if integration != "scrape-config"
    and PLATFORMS[load_stack_config(stack)["gpuplane:platform"]].metrics != Source.PLATFORM
]


@pytest.mark.parametrize(("stack", "integration"), CR_CASES)
def test_custom_resources_validate_against_published_crds(
    stack: str, integration: str, plan_of: Callable[..., Plan]
) -> None:
    from .conftest import need_reference, stack_with
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    plan = plan_of(stack_with(stack, monitoring={"integration": integration}))
    custom = [r for r in kube_objects(plan) if r.inputs["apiVersion"] not in BUILTIN_GROUPS]
    assert custom, "the integration emits custom resources"
    for r in custom:
        obj = r.inputs
        schema = crd_schema(ref, obj["apiVersion"], obj["kind"])
        assert not schema_errors(obj, schema), f"{r.urn}: {schema_errors(obj, schema)}"
        failures, _ = cel_results(obj, schema)
        assert not failures, f"{r.urn}: CEL rules failed: {failures}"


def test_crd_checks_catch_bad_objects() -> None:
    from .conftest import need_reference
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    sm = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "x"},
        "spec": {"selector": {}, "endpoints": [{"port": "m", "intervall": "15s"}]},
    }
    assert schema_errors(sm, crd_schema(ref, sm["apiVersion"], sm["kind"]))
    pm = {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": {"name": "x"},
        "spec": {"selector": {}, "endpoints": [{"port": "m", "interval": "10s", "timeout": "20s"}]},
    }
    schema = crd_schema(ref, pm["apiVersion"], pm["kind"])
    failures, evaluated = cel_results(pm, schema)
    assert evaluated > 0 and failures, "timeout > interval must break the CRD's CEL rule"


DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
"""k8s.io/apimachinery pkg/util/validation IsDNS1123Subdomain (at most 253) and IsDNS1123Label (at most 63): the
API server's name check of every custom resource (apiextensions-apiserver's validator calls
ValidateObjectMetaAccessor with NameIsDNSSubdomain) and of most built-in kinds; namespaces are labels."""


@pytest.mark.parametrize("stack", STACKS)
def test_every_object_names_itself_as_the_api_server_accepts(stack: str, plan_of: Callable[..., Plan]) -> None:
    """Custom resources included (the OpenAPI schemas leave metadata to the API server): an explicit name (no
    auto-naming, so names are deterministic) that is a lowercase DNS-1123 subdomain, in a DNS-1123 namespace."""
    for r in kube_objects(plan_of(stack)):
        md = r.inputs["metadata"]
        name = md.get("name")
        assert isinstance(name, str) and len(name) <= 253 and DNS_SUBDOMAIN.fullmatch(name), (r.urn, name)
        namespace = md.get("namespace")
        assert namespace is None or (len(namespace) <= 63 and DNS_LABEL.fullmatch(namespace)), (r.urn, namespace)
