"""The multi-language package: its inferred schema documents the exposed component."""

from __future__ import annotations

import json
from collections.abc import Callable

from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema

from gpuplane.plan import Plan
from gpuplane.provider import COMPONENTS

from .conftest import ROOT


def schema() -> dict[str, object]:
    result = Analyzer("gpuplane").analyze(COMPONENTS)
    s = generate_schema(
        "gpuplane", "0.1.0", None, result["component_definitions"], result["type_definitions"], result["dependencies"]
    )
    doc: dict[str, object] = s.to_json()
    return doc


def test_schema_documents_each_component() -> None:
    doc = schema()
    resources = doc["resources"]
    assert isinstance(resources, dict) and set(resources) == {"gpuplane:index:GpuPlatform"}
    r = resources["gpuplane:index:GpuPlatform"]
    assert r["isComponent"] is True and "GPU-ready Kubernetes" in r["description"]
    assert r["requiredInputs"] == ["config"] and "gpuplane:" in r["inputProperties"]["config"]["description"]
    outputs = r["properties"]
    assert set(outputs) == {"clusterName", "kubeconfig", "scrapeConfig", "prometheusRules"}
    assert all(p.get("description") for p in outputs.values())


def test_plugin_files_exist() -> None:
    assert (ROOT / "provider" / "PulumiPlugin.yaml").read_text().strip().endswith("runtime: python")
    assert "component_provider_host" in (ROOT / "provider" / "__main__.py").read_text()


def test_facade_builds_a_platform_under_mocks(plan_of: Callable[..., Plan]) -> None:
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    from gpuplane.plan.mocks import PlanMocks
    from gpuplane.plan.runner import install
    from gpuplane.plan.stackfile import StackFile
    from gpuplane.provider import GpuPlatform

    from .conftest import load_stack_config

    config = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config("gcp-standard").items()}
    monitor = install(StackFile(project="gpuplane", stack="facade", config={}), PlanMocks())
    _sync_await(run_pulumi_func(lambda: GpuPlatform("ml", {"config": json.dumps(config)})))
    types = [r.type for r in monitor.registrations]
    assert "gpuplane:index:GpuPlatform" in types and types.count("gcp:container/nodePool:NodePool") == 3
