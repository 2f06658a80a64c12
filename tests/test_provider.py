"""The multi-language package: its inferred schema types and documents every exposed component, and the
YAML example program uses it as the schema says."""

from __future__ import annotations

import re
from typing import Any

import yaml
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema

from gpuplane.provider import COMPONENTS

from .conftest import ROOT

EXPOSED = {
    "GkeGpuNodePools": ({"cluster", "location", "nodeServiceAccount", "gpuPools"}, {"nodePoolNames", "gpuNodes"}),
    "EksGpuNodeGroups": ({"clusterName", "nodeRoleArn", "subnetIds", "gpuPools"}, {"nodeGroupNames", "gpuNodes"}),
    "KarpenterGpuNodePools": ({"clusterName", "nodeRole", "gpuPools"}, {"nodePoolNames", "gpuNodes"}),
    "GpuOperator": (set(), {"namespace", "releaseName"}),
    "DcgmExporter": ({"host"}, {"namespace", "releaseName", "serviceName"}),
}


def schema() -> dict[str, Any]:
    result = Analyzer("gpuplane").analyze(COMPONENTS)
    s = generate_schema(
        "gpuplane", "0.1.0", None, result["component_definitions"], result["type_definitions"], result["dependencies"]
    )
    doc: dict[str, Any] = s.to_json()
    return doc


def test_schema_types_and_documents_each_component() -> None:
    doc = schema()
    resources = doc["resources"]
    assert set(resources) == {f"gpuplane:index:{n}" for n in EXPOSED}
    for name, (required, outputs) in EXPOSED.items():
        r = resources[f"gpuplane:index:{name}"]
        assert r["isComponent"] is True and r["description"], name
        assert set(r.get("requiredInputs", [])) == required, name
        assert set(r["properties"]) == outputs, name
        for prop in [*r["inputProperties"].values(), *r["properties"].values()]:
            assert prop.get("description"), (name, prop)
            assert prop.get("type") or prop.get("$ref"), (name, prop)
        # No config-as-JSON: no input is a bare string that holds a document.
        assert not {"config", "configJson"} & set(r["inputProperties"])
    types = doc["types"]
    pool = types["gpuplane:index:GpuPoolArgs"]
    assert pool["properties"]["gpu"]["$ref"] == "#/types/gpuplane:index:GpuType"
    assert {e["value"] for e in types["gpuplane:index:GpuType"]["enum"]} >= {"l4", "a100-40gb", "h100"}
    assert all(p.get("description") for p in pool["properties"].values())
    assert pool["properties"]["sharing"]["$ref"] == "#/types/gpuplane:index:SharingArgs"


def test_enums_match_the_catalog() -> None:
    from gpuplane.catalog import GPUS, NODE_IMAGES
    from gpuplane.inputs import AmiType, GpuType

    assert [g.value for g in GpuType] == list(GPUS)
    assert [a.value for a in AmiType] == list(NODE_IMAGES)


def _check_value(doc: dict[str, Any], spec: dict[str, Any], value: Any, path: str) -> list[str]:
    """Problems of a YAML property value against its schema property (interpolations are not checked)."""
    if isinstance(value, str) and value.startswith("${"):
        return []
    ref = spec.get("$ref", "")
    if ref.startswith("#/types/"):
        t = doc["types"][ref.removeprefix("#/types/")]
        if "enum" in t:
            ok = value in {e["value"] for e in t["enum"]}
            return [] if ok else [f"{path}: {value!r} is not one of the enum"]
        return _check_object(doc, t, value, path)
    if spec.get("type") == "array":
        return [p for i, v in enumerate(value) for p in _check_value(doc, spec["items"], v, f"{path}[{i}]")]
    return []


def _check_object(doc: dict[str, Any], t: dict[str, Any], value: dict[str, Any], path: str) -> list[str]:
    props = t.get("inputProperties", t.get("properties", {}))
    problems = [f"{path}.{k}: not in the schema" for k in value if k not in props]
    problems += [f"{path}.{k}: required" for k in t.get("requiredInputs", t.get("required", [])) if k not in value]
    for k, v in value.items():
        if k in props:
            problems += _check_value(doc, props[k], v, f"{path}.{k}")
    return problems


def test_yaml_example_uses_the_package_as_its_schema_says() -> None:
    doc = schema()
    program = yaml.safe_load((ROOT / "examples" / "yaml-gke-pools" / "Pulumi.yaml").read_text())
    assert program["runtime"] == "yaml"
    mine = {k: r for k, r in program["resources"].items() if r["type"].startswith("gpuplane:")}
    assert {r["type"] for r in mine.values()} == {"gpuplane:index:GkeGpuNodePools", "gpuplane:index:DcgmExporter"}
    problems = [p for k, r in mine.items() for p in _check_object(doc, doc["resources"][r["type"]], r["properties"], k)]
    assert problems == []
    # Every `${resource.output...}` of a gpuplane resource names an output the schema has.
    text = (ROOT / "examples" / "yaml-gke-pools" / "Pulumi.yaml").read_text()
    for res, prop in re.findall(r"\$\{(\w+)\.(\w+)", text):
        if res in mine:
            assert prop in doc["resources"][mine[res]["type"]]["properties"], (res, prop)


def test_plugin_files_exist() -> None:
    assert (ROOT / "provider" / "PulumiPlugin.yaml").read_text().strip().endswith("runtime: python")
    assert "component_provider_host" in (ROOT / "provider" / "__main__.py").read_text()


def test_component_docs_are_generated_from_the_classes() -> None:
    from gpuplane.component_docs import reference

    text = (ROOT / "docs" / "components.md").read_text()
    assert text == reference(), "run python scripts/render_docs.py"
    for name in [*EXPOSED, "GpuPoolArgs", "GpuNodes", "GkeGpuPlatform", "GkeAutopilotPlatform", "EksGpuPlatform"]:
        assert f"### {name}" in text
    assert "| `nodeServiceAccount` | string (Input) | yes |" in text
