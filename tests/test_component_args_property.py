"""Hypothesis over every component's arguments: misspelt keys and Output values where plain ones are declared
give one `ArgsError` naming each such argument, before anything registers; an Output where an Input is
declared plans. Never a raw traceback."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

import gpuplane
from gpuplane.args.checks import ArgsError, plain_only
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.runner import install
from gpuplane.plan.stackfile import StackFile

from .conftest import examples

L4 = [{"name": "l4", "gpu": "l4", "max_nodes": 1}]
BASES: dict[str, tuple[Any, Any, dict[str, Any]]] = {
    "GkeGpuNodePools": (
        gpuplane.GkeGpuNodePools,
        gpuplane.GkeGpuNodePoolsArgs,
        {
            "cluster": "c",
            "location": "us-central1",
            "node_service_account": "n@p.iam.gserviceaccount.com",
            "gpu_pools": L4,
        },
    ),
    # Off the catalog's first region, with the pool's zones and a reservation there: an Output location must
    # leave the region unknown to the rules (never judge the zones against a stand-in region).
    "GkeGpuNodePools@europe-west4": (
        gpuplane.GkeGpuNodePools,
        gpuplane.GkeGpuNodePoolsArgs,
        {
            "cluster": "c",
            "location": "europe-west4",
            "node_service_account": "n@p.iam.gserviceaccount.com",
            "gpu_pools": [
                {
                    "name": "l4",
                    "gpu": "l4",
                    "max_nodes": 1,
                    "zones": ["europe-west4-a"],
                    "capacity": ["reserved", "on-demand"],
                    "reservation": {"zone": "europe-west4-a"},
                }
            ],
        },
    ),
    "EksGpuNodeGroups@eu-west-1": (
        gpuplane.EksGpuNodeGroups,
        gpuplane.EksGpuNodeGroupsArgs,
        {
            "cluster_name": "c",
            "node_role_arn": "arn:aws:iam::1:role/n",
            "subnet_ids": ["subnet-1"],
            "gpu_pools": [
                {
                    "name": "l4",
                    "gpu": "l4",
                    "max_nodes": 1,
                    "capacity": ["reserved"],
                    "reservation": {"ids": ["cr-0123456789abcdef0"], "zone": "eu-west-1a"},
                }
            ],
        },
    ),
    "EksGpuNodeGroups": (
        gpuplane.EksGpuNodeGroups,
        gpuplane.EksGpuNodeGroupsArgs,
        {"cluster_name": "c", "node_role_arn": "arn:aws:iam::1:role/n", "subnet_ids": ["subnet-1"], "gpu_pools": L4},
    ),
    "KarpenterGpuNodePools": (
        gpuplane.KarpenterGpuNodePools,
        gpuplane.KarpenterGpuNodePoolsArgs,
        {"cluster_name": "c", "node_role": "r", "gpu_pools": L4},
    ),
    "GpuOperator": (gpuplane.GpuOperator, gpuplane.GpuOperatorArgs, {"namespace": "gpu-operator"}),
    "DcgmExporter": (gpuplane.DcgmExporter, gpuplane.DcgmExporterArgs, {"host": "gke", "namespace": "m"}),
    "GpuMonitoring": (gpuplane.GpuMonitoring, gpuplane.GpuMonitoringArgs, {"cluster": "c", "region": "r"}),
    "KueueQueues": (
        gpuplane.KueueQueues,
        gpuplane.KueueQueuesArgs,
        {
            "gpu_nodes": [{"pool": "l4", "labels": {}, "taints": [], "resource": "nvidia.com/gpu", "ceiling": 4}],
            "teams": [{"name": "a", "quota": {"l4": 2}}],
        },
    ),
}


def attempt(component: Any, args: dict[str, Any]) -> tuple[list[str], ArgsError | None]:
    """Build `component` under fresh mocks: the types registered and the ArgsError, if any."""
    errors: list[ArgsError] = []
    monitor = install(StackFile("p", "s", {"gcp:project": "p", "aws:region": "us-east-1"}), PlanMocks())

    def program() -> None:
        try:
            component("x", args)
        except ArgsError as exc:
            errors.append(exc)

    _sync_await(run_pulumi_func(program))
    return [r.type for r in monitor.registrations], (errors[0] if errors else None)


@pytest.mark.parametrize("name", sorted(BASES))
def test_each_base_builds(name: str) -> None:
    component, _, args = BASES[name]
    types, error = attempt(component, copy.deepcopy(args))
    assert error is None and len(types) > 1, (name, error)


def misspell(key: str, how: int) -> str:
    """Drop a letter, double one or add an `s`: a typo (skipped when it happens to be a declared key)."""
    i = how % len(key)
    options = [key[:i] + key[i + 1 :], key[:i] + key[i] + key[i:], key + "s"]
    return options[how % 3] or key + "x"


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(BASES)),
    typos=st.lists(st.integers(0, 99), max_size=2),
    outputs=st.lists(st.integers(0, 99), max_size=2),
)
def test_misspelt_and_output_arguments_are_one_clear_error(name: str, typos: list[int], outputs: list[int]) -> None:
    component, cls, base = BASES[name]
    args = copy.deepcopy(base)
    declared = dict(cls.__annotations__)
    expect: set[str] = set()
    for n in outputs:  # any argument given, as an Output of itself
        key = sorted(args)[n % len(args)]
        args[key] = pulumi.Output.from_input(args[key])
        if plain_only(declared[key]):
            expect.add(key)
    for n in typos:
        candidates = sorted(k for k in args if k not in expect)
        if not candidates:
            continue
        key = candidates[n % len(candidates)]
        wrong = misspell(key, n)
        if wrong in declared:
            continue
        args[wrong] = args.pop(key)
        expect.add(wrong)
    types, error = attempt(component, args)
    if not expect:
        assert error is None, error  # Outputs where Inputs are declared: plans as the plain values do
        return
    assert error is not None, (name, sorted(expect))
    assert types == ["pulumi:pulumi:Stack"], types  # nothing registered, not even the component
    named = {p.split("[")[0].split(".")[0] for p, _ in error.problems}
    assert expect <= named, (expect, error.problems)
    assert "Traceback" not in str(error)
