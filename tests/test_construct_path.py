"""Every component through the multi-language package's own construct path (`GpuplaneProvider.construct`,
what `pulumi up` of a YAML or TypeScript program calls), with inputs shaped as such a program sends them:
schema (camelCase) names, enums as their strings, every number a float. The graph it registers is the
Python program's: same URNs, inputs, providers and dependencies."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

import pulumi
import pytest
from pulumi.provider.experimental.analyzer import PropertyDefinition
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

import gpuplane
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.runner import install
from gpuplane.plan.stackfile import StackFile
from gpuplane.provider import GpuplaneProvider

from .test_platform_args import CLASSES, stack_args

PROVIDER = GpuplaneProvider()

L4 = {"name": "l4", "gpu": gpuplane.GpuType.L4, "max_nodes": 3, "min_nodes": 0, "disk_size_gb": 200}
SHARED = {
    "name": "shared",
    "gpu": "l4",
    "max_nodes": 2,
    "sharing": {"strategy": gpuplane.SharingStrategy.TIME_SLICING, "replicas": 4},
    "taints": [{"key": "team", "value": "vision", "effect": gpuplane.TaintEffect.NO_SCHEDULE}],
    "labels": {"acme.io/team": "vision"},
}
NODES = [
    {
        "pool": "l4",
        "labels": {"gpuplane.io/pool": "l4"},
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        "resource": "nvidia.com/gpu",
        "capacity": 1,
        "nodes": 3,
        "ceiling": 3,
    }
]
COMPONENTS: dict[str, dict[str, Any]] = {
    "GkeGpuNodePools": {
        "cluster": "projects/p-123456/locations/us-central1/clusters/research",
        "location": "us-central1",
        "project": "p-123456",
        "node_service_account": "nodes@p-123456.iam.gserviceaccount.com",
        "gpu_pools": [L4, {**SHARED, "capacity": [gpuplane.CapacityType.SPOT]}],
    },
    "EksGpuNodeGroups": {
        "cluster_name": "research",
        "node_role_arn": "arn:aws:iam::111122223333:role/nodes",
        "subnet_ids": ["subnet-0a", "subnet-0b"],
        "kubernetes_version": "1.34",
        "gpu_pools": [{**L4, "gpu": "a10g"}, SHARED],
    },
    "KarpenterGpuNodePools": {
        "cluster_name": "research",
        "node_role": "KarpenterNodeRole-research",
        "gpu_pools": [{**L4, "gpu": "l4"}, SHARED],
        "settings": {"consolidation_policy": "WhenEmpty", "consolidate_after": "60s"},
    },
    "GpuOperator": {"node_image": gpuplane.AmiType.AL2023_X86_64_NVIDIA, "gpu_nodes": NODES, "service_monitor": True},
    "DcgmExporter": {"host": gpuplane.ExporterHost.GKE, "gpu_nodes": NODES, "namespace": "metrics"},
    "NvidiaDraDriver": {
        "host": gpuplane.DraHostKind.EKS,
        "gpu_nodes": [{**NODES[0], "allocation": gpuplane.GpuAllocation.DRA}],
    },
    "GpuMonitoring": {
        "cluster": "research",
        "region": "us-central1",
        "exporter_namespace": "metrics",
        "monitoring": {"integration": gpuplane.MonitoringIntegration.PROMETHEUS_OPERATOR, "temperature_celsius": 85},
    },
    "KueueQueues": {
        "gpu_nodes": NODES,
        "teams": [{"name": "vision", "quota": {"l4": 2}}, {"name": "nlp", "quota": {"l4": 1}}],
        "cohort": "research",
    },
}
PLATFORM_STACKS = ["gcp-standard", "gcp-autopilot", "aws-karpenter", "aws-managed"]


def wire(value: Any, prop: PropertyDefinition) -> Any:
    """`value` as a YAML or TypeScript program sends it for schema property `prop`."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)  # the wire has one number type
    type_def = PROVIDER.get_type_definition(prop) if prop.ref else None
    if isinstance(value, Mapping):
        if type_def is not None and type_def.properties:
            return wire_object(value, type_def.properties, type_def.properties_mapping)
        inner = prop.additional_properties
        return {k: wire(v, inner) if inner else v for k, v in value.items()}
    if isinstance(value, list | tuple):
        assert prop.items is not None, prop
        return [wire(v, prop.items) for v in value]
    raise AssertionError(f"no wire form for {value!r}")


def wire_object(args: Mapping[str, Any], props: Mapping[str, PropertyDefinition], mapping: Mapping[str, str]) -> Any:
    schema_name = {py: schema for schema, py in mapping.items()}
    return {schema_name[k]: wire(v, props[schema_name[k]]) for k, v in args.items()}


def graph(program: Callable[[], Any]) -> list[tuple[Any, ...]]:
    monitor = install(
        StackFile(project="lib", stack="test", config={"gcp:project": "lib-project", "aws:region": "us-east-1"}),
        PlanMocks(),
    )
    _sync_await(run_pulumi_func(program))
    return sorted(
        ((r.urn, r.inputs, r.provider, tuple(sorted(r.dependencies))) for r in monitor.registrations), key=str
    )


def through_the_package(component: str, name: str, args: Mapping[str, Any]) -> Callable[[], None]:
    definition = PROVIDER._component_defs[component]
    inputs = wire_object(args, definition.inputs, definition.inputs_mapping)

    def program() -> None:
        PROVIDER.construct(name, f"gpuplane:index:{component}", inputs, pulumi.ResourceOptions())

    return program


CASES = [(c, c.lower(), a) for c, a in COMPONENTS.items()]
CASES += [(CLASSES[stack_args(s)[0]["platform"]].__name__, s, stack_args(s)[1]) for s in PLATFORM_STACKS]


@pytest.mark.parametrize(("component", "name", "args"), CASES, ids=[f"{c}-{n}" for c, n, _ in CASES])
def test_the_package_builds_what_the_python_program_builds(component: str, name: str, args: dict[str, Any]) -> None:
    cls = getattr(gpuplane, component)
    python = graph(lambda: cls(name, args))
    package = graph(through_the_package(component, name, args))
    assert len(python) > 3
    assert package == python


def test_every_exposed_component_is_driven_through_the_package() -> None:
    driven = {c for c, _, _ in CASES}
    assert driven == set(PROVIDER._component_defs)
