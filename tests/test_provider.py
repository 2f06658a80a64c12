"""The multi-language package: its inferred schema types and documents every exposed component, and the
YAML example program uses it as the schema says."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from gpuplane.provider import PLACEMENT, GpuplaneProvider, package_schema

from .conftest import ROOT

EXPOSED = {
    "GkeGpuNodePools": ({"cluster", "nodeServiceAccount", "gpuPools"}, {"nodePoolNames", "gpuNodes"}),
    # `clusterName` and `subnetIds` may come from the `cluster` object instead (the component says which is missing)
    "EksGpuNodeGroups": ({"nodeRoleArn", "gpuPools"}, {"nodeGroupNames", "gpuNodes"}),
    "KarpenterGpuNodePools": ({"nodeRole", "gpuPools"}, {"nodePoolNames", "gpuNodes"}),
    "GpuOperator": (set(), {"namespace", "releaseName"}),
    "DcgmExporter": ({"host"}, {"namespace", "releaseName", "serviceName"}),
    "NvidiaDraDriver": ({"host", "gpuNodes"}, {"namespace", "releaseName"}),
    "KueueQueues": ({"gpuNodes", "teams"}, {"namespace", "queues", "flavors", "multikueueToken"}),
    "GpuMonitoring": ({"cluster"}, {"scrapeConfig", "prometheusRules", "integration", "gpuCost"}),
    "GkeGpuPlatform": (
        {"cluster", "gcp", "gpuPools"},
        {"clusterName", "endpoint", "kubeconfig", "gpuNodePools", "gpuNodes", "scrapeConfig", "prometheusRules"},
    ),
    "GkeAutopilotPlatform": (
        {"cluster", "gcp"},
        {"clusterName", "endpoint", "kubeconfig", "gpuNodes", "scrapeConfig", "prometheusRules"},
    ),
    "EksGpuPlatform": (
        {"cluster", "aws", "gpuPools"},
        {
            "clusterName",
            "kubeconfig",
            "oidcProviderArn",
            "vpcId",
            "gpuNodeGroups",
            "gpuNodes",
            "scrapeConfig",
            "prometheusRules",
        },
    ),
}
YAML_EXAMPLES = {
    "yaml-gke-pools": {"gpuplane:index:GkeGpuNodePools", "gpuplane:index:DcgmExporter"},
    "yaml-gke-platform": {"gpuplane:index:GkeGpuPlatform"},
}


def schema() -> dict[str, Any]:
    return package_schema()


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
    # Nested types are documented too, and every enumerable value is an enum.
    for token, t in types.items():
        assert t.get("description"), token
        for key, prop in t.get("properties", {}).items():
            assert prop.get("description"), (token, key)
    enums = {"kind": "GkePlatformKind", "integration": "MonitoringIntegration", "profile": "AutoscalingProfile"}
    platform = resources["gpuplane:index:GkeGpuPlatform"]["inputProperties"]
    assert platform["kind"]["$ref"].endswith(enums["kind"])
    assert types["gpuplane:index:MonitoringArgs"]["properties"]["integration"]["$ref"].endswith(enums["integration"])
    assert types["gpuplane:index:ClusterArgs"]["properties"]["releaseChannel"]["$ref"].endswith("ReleaseChannel")
    # Plain where an arg shapes the graph; an Input where a value comes from another resource.
    gcp, aws = types["gpuplane:index:GcpArgs"]["properties"], types["gpuplane:index:AwsArgs"]["properties"]
    assert platform["gpuPools"]["plain"] and platform["kind"]["plain"] and gcp["region"]["plain"]
    assert not {"plain"} & {*gcp["project"], *gcp["network"], *aws["vpcId"], *aws["privateSubnetIds"]}
    monitoring = resources["gpuplane:index:GpuMonitoring"]["inputProperties"]
    assert not monitoring["cluster"].get("plain") and not monitoring["region"].get("plain")


def test_enums_match_the_catalog() -> None:
    from gpuplane.args.inputs import AmiType, GpuType
    from gpuplane.catalog import GPUS, NODE_IMAGES

    assert [g.value for g in GpuType] == list(GPUS)
    assert [a.value for a in AmiType] == list(NODE_IMAGES)


def test_platform_kinds_match_the_matrix() -> None:
    """Each platform component's `kind` enum lists exactly the matrix rows its builder builds."""
    from gpuplane.aws.platform import EksPlatformKind
    from gpuplane.catalog import PLATFORMS
    from gpuplane.gcp.platform import GkePlatformKind

    for kind, builder in (
        (GkePlatformKind, "gpuplane.gcp.platform:build"),
        (EksPlatformKind, "gpuplane.aws.platform:build"),
    ):
        assert [k.value for k in kind] == [n for n, p in PLATFORMS.items() if p.builder == builder], kind


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


@pytest.mark.parametrize("example", sorted(YAML_EXAMPLES))
def test_yaml_example_uses_the_package_as_its_schema_says(example: str) -> None:
    doc = schema()
    text = (ROOT / "examples" / example / "Pulumi.yaml").read_text()
    program = yaml.safe_load(text)
    assert program["runtime"] == "yaml"
    mine = {k: r for k, r in program["resources"].items() if r["type"].startswith("gpuplane:")}
    assert {r["type"] for r in mine.values()} == YAML_EXAMPLES[example]
    problems = [p for k, r in mine.items() for p in _check_object(doc, doc["resources"][r["type"]], r["properties"], k)]
    assert problems == []
    # What deploys into Kubernetes names its provider: none goes to the ambient kubeconfig.
    deploys = {"gpuplane:index:DcgmExporter", "gpuplane:index:GpuOperator", "gpuplane:index:GpuMonitoring"}
    for key, r in mine.items():
        if r["type"] in deploys:
            opts = r.get("options") or {}
            assert opts.get("provider") or opts.get("providers"), key
    # Every `${resource.output...}` of a gpuplane resource names an output the schema has.
    for res, prop in re.findall(r"\$\{(\w+)\.(\w+)", text):
        if res in mine:
            assert prop in doc["resources"][mine[res]["type"]]["properties"], (res, prop)


def test_plugin_files_exist() -> None:
    assert (ROOT / "provider" / "PulumiPlugin.yaml").read_text().strip().endswith("runtime: python")
    assert "main(GpuplaneProvider()" in (ROOT / "provider" / "__main__.py").read_text()


def test_the_plugin_serves_the_finished_schema() -> None:
    assert json.loads(GpuplaneProvider().schema or "{}") == schema()


def test_secret_outputs_are_marked_and_every_enum_member_is_described() -> None:
    doc = schema()
    kubeconfigs = [r["properties"]["kubeconfig"] for r in doc["resources"].values() if "kubeconfig" in r["properties"]]
    assert len(kubeconfigs) == 3 and all(k.get("secret") is True for k in kubeconfigs)
    undocumented = [
        (token, e["value"]) for token, t in doc["types"].items() for e in t.get("enum", []) if not e.get("description")
    ]
    assert undocumented == []
    assert (
        "80 GiB, hopper"
        in {e["value"]: e["description"] for e in doc["types"]["gpuplane:index:GpuType"]["enum"]}["h100"]
    )


def test_the_placement_function_is_in_the_schema_and_answers_as_python_does() -> None:
    from gpuplane import placement

    doc = schema()
    fn = doc["functions"][PLACEMENT]
    assert fn["inputs"]["properties"]["gpuNodes"]["$ref"] == "#/types/gpuplane:index:GpuNodes"
    assert {"resources", "affinity", "tolerations"} <= set(fn["outputs"]["required"])
    nodes = {
        "pool": "l4",
        "labels": {"gpuplane.io/pool": "l4"},
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        "resource": "nvidia.com/gpu",
        "capacity": 2,
        "affinity": [{"key": "gpuplane.io/pool", "operator": "In", "values": ["l4"]}],
    }
    # As a YAML or TypeScript program sends it: numbers arrive as floats.
    wire = {**nodes, "capacity": 2.0}
    answer = GpuplaneProvider().invoke(PLACEMENT, {"gpuNodes": wire, "gpus": 2.0})
    assert not answer.failures
    assert answer.outputs == placement(nodes, gpus=2)  # type: ignore[arg-type]
    provider = GpuplaneProvider()
    for gpus in (3.0, 0.0, 2.5, "two"):
        refused = provider.invoke(PLACEMENT, {"gpuNodes": wire, "gpus": gpus})
        assert [f.property for f in refused.failures or []] == ["gpus"], gpus
    missing = provider.invoke(PLACEMENT, {"gpuNodes": {k: v for k, v in wire.items() if k != "pool"}})
    assert [f.property for f in missing.failures or []] == ["gpuNodes.pool"]


def test_component_docs_are_generated_from_the_classes() -> None:
    """Rendered in a fresh interpreter, as `scripts/render_docs.py` does: the schema analyzer reads attribute
    docstrings with `inspect.getsource`, which finds nothing for a class whose module another test (the
    extras' module blocker) has since dropped from `sys.modules`."""
    import subprocess
    import sys

    code = "import sys; from gpuplane.component_docs import reference; sys.stdout.write(reference())"
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    text = (ROOT / "docs" / "components.md").read_text()
    assert text == fresh, "run python scripts/render_docs.py"
    for name in [*EXPOSED, "GpuPoolArgs", "GpuNodes", "GkeGpuPlatform", "GkeAutopilotPlatform", "EksGpuPlatform"]:
        assert f"### {name}" in text
    assert "| `nodeServiceAccount` | string (Input) | yes |" in text
