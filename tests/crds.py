"""Validate custom resources against their published CRDs: OpenAPI schema (strict) and CEL rules."""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any

import yaml

CRD_FILES = {
    ("monitoring.coreos.com", "ServiceMonitor"): "monitoring.coreos.com_servicemonitors.yaml",
    ("monitoring.coreos.com", "PodMonitor"): "monitoring.coreos.com_podmonitors.yaml",
    ("monitoring.coreos.com", "PrometheusRule"): "monitoring.coreos.com_prometheusrules.yaml",
    ("monitoring.googleapis.com", "PodMonitoring"): "monitoring.googleapis.com_podmonitorings.yaml",
    ("monitoring.googleapis.com", "ClusterPodMonitoring"): "monitoring.googleapis.com_clusterpodmonitorings.yaml",
    ("karpenter.sh", "NodePool"): "karpenter.sh_nodepools.yaml",
    ("karpenter.k8s.aws", "EC2NodeClass"): "karpenter.k8s.aws_ec2nodeclasses.yaml",
    ("karpenter.sh", "NodeOverlay"): "karpenter.sh_nodeoverlays.yaml",
    ("nvidia.com", "ClusterPolicy"): "nvidia.com_clusterpolicies.yaml",
    **{
        ("kueue.x-k8s.io", kind): f"kueue.x-k8s.io_{kind.lower()}s.yaml"
        for kind in ("ResourceFlavor", "ClusterQueue", "LocalQueue", "AdmissionCheck", "ProvisioningRequestConfig")
    },
    ("kueue.x-k8s.io", "Topology"): "kueue.x-k8s.io_topologies.yaml",
    ("resource.nvidia.com", "ComputeDomain"): "resource.nvidia.com_computedomains.yaml",
    ("keda.sh", "ScaledObject"): "keda.sh_scaledobjects.yaml",
    ("keda.sh", "TriggerAuthentication"): "keda.sh_triggerauthentications.yaml",
}


OWN_SCHEMAS = {("networking.gke.io", "Network"), ("networking.gke.io", "GKENetworkParamSet")}
"""Kinds with no published CRD: their schemas are written from the vendor's reference (tests/schemas/)."""


@functools.cache
def _yaml_file(path: Path) -> Any:
    """A parsed YAML file, read once a session (the CRDs run to megabytes; every caller gets a deep copy)."""
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - safe


def crd_schema(ref: Path, api_version: str, kind: str) -> dict[str, Any]:
    """The OpenAPI schema of `kind` at `api_version` (the caller's own copy)."""
    group, version = api_version.split("/")
    if (group, kind) in OWN_SCHEMAS:
        return copy.deepcopy(dict(_yaml_file(Path(__file__).parent / "schemas" / f"{group}.yaml")[kind]))
    doc = _yaml_file(ref / "crds" / CRD_FILES[(group, kind)])
    (ver,) = [v for v in doc["spec"]["versions"] if v["name"] == version]
    return copy.deepcopy(dict(ver["schema"]["openAPIV3Schema"]))


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with unknown fields forbidden wherever Kubernetes would prune them."""
    s = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        pattern = node.get("pattern")
        if isinstance(pattern, str) and pattern.startswith("^(?i)"):  # Go's inline flag; Python wants it first
            node["pattern"] = "(?i)^" + pattern[len("^(?i)") :]
        if node.get("x-kubernetes-int-or-string"):
            node.pop("type", None)
            node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if (
            "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for key in ("properties", "patternProperties"):
            for child in node.get(key, {}).values():
                walk(child)
        for key in ("items", "additionalProperties"):
            walk(node.get(key))
        for key in ("allOf", "anyOf", "oneOf"):
            for child in node.get(key, []):
                walk(child)

    walk(s)
    # metadata is checked by the API server's ObjectMeta schema, not the CRD.
    s.setdefault("properties", {})["metadata"] = {"type": "object"}
    return s


def schema_errors(obj: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    import jsonschema

    validator = jsonschema.Draft7Validator(strict(schema))
    return [f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in validator.iter_errors(obj)]


def _find(s: str, pattern: str) -> str:
    """Kubernetes' CEL regex library: `<string>.find(<regex>)`, the first match or "" (RE2; the patterns the
    CRDs use are also Python patterns). kubernetes/apiserver pkg/cel/library/regex.go."""
    m = re.search(pattern, s)
    return m.group(0) if m else ""


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    """cel-go's strings extension: `<string>.split(<sep>[, <n>])` (n < 0: all parts; 0: none; otherwise at
    most n parts). google/cel-go ext/strings.go, enabled for CRD rules by kubernetes/apiserver
    pkg/cel/environment/base.go."""
    if n == 0:
        return []
    return s.split(sep) if n < 0 else s.split(sep, n - 1)


CEL_FUNCTIONS = {"find": _find, "split": _split}
"""The Kubernetes CEL functions the CRDs' rules call that the CEL library lacks."""

CEL_UNEVALUABLE: dict[str, str] = {}
"""CEL rules that cannot be evaluated here, each with why (none today): any other evaluation error fails."""


class CelError(AssertionError):
    """A CEL rule of a published CRD raised instead of answering (and is not in CEL_UNEVALUABLE)."""


def cel_results(obj: Any, schema: dict[str, Any], path: str = "") -> tuple[list[str], int]:
    """(failures, rules evaluated) of the schema's CEL rules on `obj`. Rules without `oldSelf` are checked as on
    create; transition rules (which the API server skips on create) are checked as on an unchanged update,
    `oldSelf` = `self` (the second `pulumi up` of the same object). Whether a *changed* value passes them
    (Kueue's and Karpenter's immutable fields) is not checked here. A rule that raises fails the caller with
    CelError unless CEL_UNEVALUABLE names it (no CRD gpuplane emits uses `optionalOldSelf`)."""
    import cel

    failures: list[str] = []
    evaluated = 0
    for rule in schema.get("x-kubernetes-validations", []):
        if rule["rule"] in CEL_UNEVALUABLE:
            continue
        ctx = cel.Context(variables={"self": obj, "oldSelf": obj}, functions=CEL_FUNCTIONS)
        try:
            ok = cel.evaluate(rule["rule"], ctx)
        except Exception as exc:  # noqa: BLE001 - reported with the rule, never swallowed
            raise CelError(f"{path or '<root>'}: rule {rule['rule']!r} raised {exc}") from exc
        evaluated += 1
        if ok is not True:
            failures.append(f"{path or '<root>'}: {rule.get('message', rule['rule'])}")
    children: list[tuple[Any, dict[str, Any], str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in schema.get("properties", {}):
                children.append((v, schema["properties"][k], f"{path}.{k}"))
            elif isinstance(schema.get("additionalProperties"), dict):
                children.append((v, schema["additionalProperties"], f"{path}.{k}"))
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        children = [(v, schema["items"], f"{path}[{i}]") for i, v in enumerate(obj)]
    for value, sub, p in children:
        f, e = cel_results(value, sub, p)
        failures += f
        evaluated += e
    return failures, evaluated
