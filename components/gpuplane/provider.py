"""The multi-language package: gpuplane's typed components for TypeScript, Go, YAML, ... programs.

Pulumi's Python component provider host infers the package schema (inputs, outputs, nested types,
enums and their docs) from each component's `args` TypedDict and class annotations
(pulumi/provider/experimental/analyzer.py). Every input is typed; none is a config-as-JSON string.
What the inference cannot say, `finish` adds (`package_schema()` is the schema the plugin serves):
outputs that are secrets (`secret: true`), the GPU enum's member descriptions (from the catalog), and the
`placement` function, which `GpuplaneProvider.invoke` answers with `gpuplane.placement()`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, cast

from pulumi.errors import InputPropertyError
from pulumi.provider.experimental.analyzer import Analyzer, PropertyDefinition
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.provider import CheckFailure, InvokeResult

from .args.inputs import GpuNodes
from .aws.karpenter_pools import KarpenterGpuNodePools
from .aws.node_groups import EksGpuNodeGroups
from .aws.platform import EksGpuPlatform
from .catalog import GPUS
from .config import ConfigError
from .gcp.autopilot import GkeAutopilotPlatform
from .gcp.platform import GkeGpuPlatform
from .gcp.pools import GkeGpuNodePools
from .kueue import KueueQueues
from .monitoring.stack import GpuMonitoring
from .nvidia.dcgm import DcgmExporter
from .nvidia.dra import NvidiaDraDriver
from .nvidia.operator import GpuOperator

NAME = "gpuplane"
VERSION = "0.1.0"

COMPONENTS = [
    GkeGpuNodePools,
    EksGpuNodeGroups,
    KarpenterGpuNodePools,
    GpuOperator,
    DcgmExporter,
    NvidiaDraDriver,
    GpuMonitoring,
    KueueQueues,
    GkeGpuPlatform,
    GkeAutopilotPlatform,
    EksGpuPlatform,
]
"""What the plugin exposes (see provider/__main__.py)."""

SECRET_OUTPUTS = frozenset({"kubeconfig", "multikueueToken"})
"""Output properties that hold credentials-bearing documents: marked `secret` in the schema, so every
language's SDK keeps them secret (the components already return them as secret Outputs)."""

PLACEMENT = f"{NAME}:index:placement"
"""The package function that returns a pod's placement on one pool (`gpuplane.placement`)."""

_ANY = {"$ref": "pulumi.json#/Any"}
PLACEMENT_FUNCTION: dict[str, Any] = {
    "description": "Pod-spec fragments for `gpus` GPUs (or MIG slices, shared GPUs) on one pool: `resources`, "
    "`affinity` and `tolerations`, and `nodeSelector`, `annotations` or `labels` where the pool needs them. "
    "Merge them into your pod spec (`gpuplane.placement` in Python).",
    "inputs": {
        "properties": {
            "gpuNodes": {
                "$ref": f"#/types/{NAME}:index:GpuNodes",
                "description": "One entry of a pool component's or platform's `gpuNodes`.",
            },
            "gpus": {"type": "integer", "description": "GPUs (or slices) per pod; default 1."},
            "job": {
                "type": "string",
                "description": "A multi-node job's name: adds its pod labels, packs its pods under one network node.",
            },
        },
        "required": ["gpuNodes"],
    },
    "outputs": {
        "properties": {
            "resources": {**_ANY, "description": "Container `resources` (limits of the pool's GPU resource)."},
            "affinity": {**_ANY, "description": "Pod `affinity`: the pool's nodes, required."},
            "tolerations": {"type": "array", "items": _ANY, "description": "Pod `tolerations` of the pool's taints."},
            "nodeSelector": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Pod `nodeSelector`, where the platform provisions from it (Autopilot).",
            },
            "annotations": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Pod annotations the pool's nodes need (GKE GPUDirect interfaces).",
            },
            "labels": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Pod labels of a multi-node `job`.",
            },
        },
        "required": ["resources", "affinity", "tolerations"],
    },
}


def finish(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The inferred schema with what inference cannot say: secret outputs, GPU descriptions, functions."""
    out = copy.deepcopy(dict(doc))
    for resource in out["resources"].values():
        for key, prop in resource.get("properties", {}).items():
            if key in SECRET_OUTPUTS:
                prop["secret"] = True
    for member in out["types"][f"{NAME}:index:GpuType"]["enum"]:
        gpu = GPUS[member["value"]]
        offered = ", ".join(c for c, o in (("GCP", gpu.gcp), ("AWS", gpu.aws)) if o is not None)
        member["description"] = member.get("description") or (
            f"{gpu.description}; {gpu.memory_gib} GiB, {gpu.architecture}; on {offered}."
        )
    out["functions"] = {PLACEMENT: PLACEMENT_FUNCTION}
    return out


def package_schema() -> dict[str, Any]:
    """The schema the plugin serves (`GpuplaneProvider`): inferred from `COMPONENTS`, then `finish`ed."""
    result = Analyzer(NAME).analyze(COMPONENTS)
    deps = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
    inferred = generate_schema(
        NAME, VERSION, None, result["component_definitions"], result["type_definitions"], deps
    ).to_json()
    return finish(inferred)


class GpuplaneProvider(ComponentProvider):
    """The component provider host's provider, serving the finished schema and the `placement` function."""

    def __init__(self) -> None:
        super().__init__(COMPONENTS, NAME, None, VERSION)
        self.schema = json.dumps(finish(json.loads(self.schema or "{}")))

    def map_input_properties(
        self,
        inputs: Any,
        properties: dict[str, PropertyDefinition],
        mapping: dict[str, str],
        component_name: str,
        property_path: str,
    ) -> Any:
        """The host's mapping, except for lists of enum values (`capacity: [spot]`), which it turns into
        `[{}]`: it maps every list of a named type as a list of objects (pulumi sdk/python/lib/pulumi/
        provider/experimental/component.py, `map_input_properties`). Those become enum members here."""
        enum_lists = {}
        for key, prop in properties.items():
            item_type = self.get_type_definition(prop.items) if prop.items and prop.items.ref else None
            if item_type is not None and item_type.enum:
                enum_lists[key] = item_type.python_type
        rest = {k: p for k, p in properties.items() if k not in enum_lists}
        out = dict(super().map_input_properties(inputs, rest, mapping, component_name, property_path))
        for key, enum_type in enum_lists.items():
            given = inputs.get(key) if isinstance(inputs, dict) else None
            if given is None:
                continue
            try:
                out[mapping[key]] = [enum_type(v) for v in given]
            except ValueError as exc:
                where = f"{property_path}.{key}" if property_path else key
                raise InputPropertyError(where, f"{given!r} has a value not in {enum_type.__name__}") from exc
        return out

    def invoke(self, token: str, args: Mapping[str, Any]) -> InvokeResult:
        from .scheduling.placement import placement

        if token != PLACEMENT:
            return super().invoke(token, args)
        nodes_type = self._type_defs["GpuNodes"]
        nodes, gpus, job = args.get("gpuNodes"), args.get("gpus", 1), args.get("job")
        failures = []
        if not isinstance(nodes, Mapping):
            failures.append(CheckFailure("gpuNodes", "required: one entry of a pool component's gpuNodes"))
        if isinstance(gpus, bool) or not isinstance(gpus, int | float) or gpus != int(gpus) or gpus < 1:
            failures.append(CheckFailure("gpus", f"must be a whole number of at least 1, not {gpus!r}"))
        if job is not None and not isinstance(job, str):
            failures.append(CheckFailure("job", f"must be a string, not {job!r}"))
        if failures:
            return InvokeResult({}, failures)
        assert isinstance(nodes, Mapping) and isinstance(gpus, int | float)
        try:
            target = cast(
                GpuNodes,
                self.map_input_properties(
                    dict(nodes), nodes_type.properties, nodes_type.properties_mapping, "placement", "gpuNodes"
                ),
            )
            fragment = placement(target, gpus=int(gpus), job=job or None)
        except InputPropertyError as exc:  # a key of the entry missing or of the wrong kind
            return InvokeResult({}, [CheckFailure(exc.property_path, exc.reason)])
        except ConfigError as exc:
            return InvokeResult({}, [CheckFailure(path, reason) for path, reason in exc.problems])
        return InvokeResult(fragment)


__all__ = ["COMPONENTS", "PLACEMENT", "SECRET_OUTPUTS", "GpuplaneProvider", "finish", "package_schema"]
