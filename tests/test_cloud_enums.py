"""Every GKE enum value the plan sends is one the GKE API lists (container v1 discovery document)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import botocore.loaders as botocore_loaders
import pytest
from googleapiclient import discovery_cache as discovery

from gpuplane.plan import Plan

from .conftest import AWS_STACKS, GCP_STACKS

ROOTS = {"gcp:container/cluster:Cluster": "Cluster", "gcp:container/nodePool:NodePool": "NodePool"}
# Pulumi (Terraform) field names that differ from the API's, per API schema.
RENAMES = {
    ("Cluster", "clusterAutoscaling"): "autoscaling",
    ("ClusterAutoscaling", "autoProvisioningDefaults"): "autoprovisioningNodePoolDefaults",
    ("ClusterAutoscaling", "autoProvisioningLocations"): "autoprovisioningLocations",
    ("NodePool", "nodeConfig"): "config",
    ("NodeConfig", "guestAccelerators"): "accelerators",
    ("AcceleratorConfig", "type"): "acceleratorType",
    ("AcceleratorConfig", "count"): "acceleratorCount",
}


def gke_schemas() -> dict[str, Any]:
    doc = json.loads(discovery.get_static_doc("container", "v1"))
    return dict(doc["schemas"])


# Fields Pulumi flattens out of a nested API message: (schema, key) -> (API schema holding the key).
FLATTENED = {("MonitoringConfig", "enableComponents"): "MonitoringComponentConfig"}


def enum_fields(
    schemas: dict[str, Any], schema: str, value: Any, path: str
) -> Iterator[tuple[str, str, list[str], Any]]:
    """(path, schema.property, allowed values, value) for each enum-typed field present in `value`."""
    props = schemas[schema].get("properties", {})
    for key, item in value.items():
        api_key = RENAMES.get((schema, key), key)
        prop = props.get(api_key)
        if (schema, key) in FLATTENED:
            prop = schemas[FLATTENED[(schema, key)]]["properties"][key]
        if prop is None:
            continue
        items = item if isinstance(item, list) else [item]
        spec = prop.get("items", prop) if prop.get("type") == "array" else prop
        for i, v in enumerate(items):
            sub = f"{path}.{key}" + (f"[{i}]" if isinstance(item, list) else "")
            if "enum" in spec:
                yield sub, f"{schema}.{api_key}", spec["enum"], v
            elif "$ref" in spec and isinstance(v, dict):
                yield from enum_fields(schemas, spec["$ref"], v, sub)


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_gke_enum_values_are_api_values(stack: str, plan_of: Callable[..., Plan]) -> None:
    schemas = gke_schemas()
    plan = plan_of(stack)
    checked: set[str] = set()
    for r in plan.resources:
        root = ROOTS.get(r.type)
        if root is None:
            continue
        for path, field, allowed, value in enum_fields(schemas, root, r.inputs, r.name):
            assert value in allowed and not str(value).endswith("UNSPECIFIED"), (
                f"{r.urn}: {path}={value!r} not in {field} {allowed}"
            )
            checked.add(field)
    # The walk really reached the enum fields gpuplane sets.
    expected: set[str] = set()
    clusters = plan.by_type("gcp:container/cluster:Cluster")
    pools = plan.by_type("gcp:container/nodePool:NodePool")
    assert clusters, "every GCP stack has a GKE cluster"
    expected |= {"ReleaseChannel.channel"}
    if pools:
        expected |= {"WorkloadMetadataConfig.mode"}
    if any("monitoringConfig" in r.inputs for r in clusters):
        expected |= {"MonitoringConfig.enableComponents"}
    if any(r.inputs["nodeConfig"].get("guestAccelerators") for r in pools):
        expected |= {"NodeTaint.effect", "GPUDriverInstallationConfig.gpuDriverVersion"}
        expected |= {"NodePoolAutoscaling.locationPolicy"}
    if any("gpuSharingConfig" in a for r in pools for a in r.inputs["nodeConfig"].get("guestAccelerators", [])):
        expected |= {"GPUSharingConfig.gpuSharingStrategy"}
    if any("autoscalingProfile" in r.inputs.get("clusterAutoscaling", {}) for r in clusters):
        expected |= {"ClusterAutoscaling.autoscalingProfile"}
    assert expected <= checked, expected - checked


# Compute Engine resources gpuplane creates next to a GKE cluster: (resource type, input key) -> the
# compute v1 discovery document's (schema, property) whose enum lists the allowed values.
COMPUTE_ENUMS = {
    ("gcp:compute/routerNat:RouterNat", "natIpAllocateOption"): ("RouterNat", "natIpAllocateOption"),
    ("gcp:compute/routerNat:RouterNat", "sourceSubnetworkIpRangesToNat"): (
        "RouterNat",
        "sourceSubnetworkIpRangesToNat",
    ),
    ("gcp:compute/routerNat:RouterNat", "subnetworks[].sourceIpRangesToNats[]"): (
        "RouterNatSubnetworkToNat",
        "sourceIpRangesToNat",
    ),
    ("gcp:compute/routerNat:RouterNat", "logConfig.filter"): ("RouterNatLogConfig", "filter"),
}


def compute_values(obj: Any, path: list[str]) -> Iterator[Any]:
    if not path:
        yield obj
        return
    head, rest = path[0], path[1:]
    node = obj.get(head.removesuffix("[]")) if isinstance(obj, dict) else None
    if node is None:
        return
    for item in node if head.endswith("[]") else [node]:
        yield from compute_values(item, rest)


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_compute_enum_values_are_api_values(stack: str, plan_of: Callable[..., Plan]) -> None:
    schemas = json.loads(discovery.get_static_doc("compute", "v1"))["schemas"]
    plan = plan_of(stack)
    seen = set()
    for (typ, path), (schema, prop) in COMPUTE_ENUMS.items():
        spec = schemas[schema]["properties"][prop]
        allowed = spec.get("items", spec)["enum"]
        for r in plan.by_type(typ):
            for value in compute_values(r.inputs, path.split(".")):
                assert value in allowed, f"{r.urn}: {path}={value!r} not in compute {schema}.{prop} {allowed}"
                seen.add(path)
    if plan.by_type("gcp:compute/routerNat:RouterNat"):
        assert {"natIpAllocateOption", "sourceSubnetworkIpRangesToNat", "logConfig.filter"} <= seen, seen


# (resource type, input path) -> EKS API shape whose enum lists the allowed values.
EKS_ENUMS = {
    ("eks:index:ManagedNodeGroup", "amiType"): "AMITypes",
    ("eks:index:ManagedNodeGroup", "capacityType"): "CapacityTypes",
    ("eks:index:ManagedNodeGroup", "taints[].effect"): "TaintEffect",
    ("eks:index:Cluster", "authenticationMode"): "AuthenticationMode",
    ("eks:index:Cluster", "accessEntries.*.accessPolicies.*.accessScope.type"): "AccessScopeType",
}


def values_at(obj: Any, path: list[str]) -> Iterator[Any]:
    if not path:
        yield obj
        return
    head, rest = path[0], path[1:]
    if head.endswith("[]"):
        for item in (obj or {}).get(head[:-2], []):
            yield from values_at(item, rest)
    elif head == "*":
        for item in (obj or {}).values():
            yield from values_at(item, rest)
    elif isinstance(obj, dict) and head in obj:
        yield from values_at(obj[head], rest)


def botocore_enums_seen(service: str, table: dict[tuple[str, str], str], plan: Plan) -> set[str]:
    """Every value at a table's (type, input path) is in its botocore `service` shape's enum; the shapes reached."""
    shapes = botocore_loaders.Loader().load_service_model(service, "service-2")["shapes"]
    seen = set()
    for (typ, path), shape in table.items():
        allowed = shapes[shape]["enum"]
        for r in plan.by_type(typ):
            for value in values_at(r.inputs, path.split(".")):
                assert value in allowed, f"{r.urn}: {path}={value!r} not in {service} {shape} {allowed}"
                seen.add(shape)
    return seen


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_eks_enum_values_are_api_values(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    seen = botocore_enums_seen("eks", EKS_ENUMS, plan)
    # The walk reached the enum fields gpuplane sets.
    if plan.by_type("eks:index:Cluster"):
        assert {"AuthenticationMode", "AccessScopeType"} <= seen, seen
    if any("gpuplane.io/pool" in r.inputs["labels"] for r in plan.by_type("eks:index:ManagedNodeGroup")):
        assert {"AMITypes", "CapacityTypes", "TaintEffect"} <= seen, seen


# (resource type, input path) -> S3 API shape whose enum lists the allowed values (botocore s3 service-2).
S3_ENUMS = {
    (
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "rules[].applyServerSideEncryptionByDefault.sseAlgorithm",
    ): "ServerSideEncryption",
    ("aws:s3/bucketOwnershipControls:BucketOwnershipControls", "rule.objectOwnership"): "ObjectOwnership",
}


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_s3_enum_values_are_api_values(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    seen = botocore_enums_seen("s3", S3_ENUMS, plan)
    if plan.by_type("aws:s3/bucket:Bucket"):  # a store's bucket: the walk reached both fields
        assert seen == set(S3_ENUMS.values()), seen
