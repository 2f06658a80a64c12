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
        for kind in (
            "ResourceFlavor",
            "ClusterQueue",
            "LocalQueue",
            "AdmissionCheck",
            "ProvisioningRequestConfig",
            "MultiKueueCluster",
            "MultiKueueConfig",
        )
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


class _Absent:
    """No old value correlates with this one (a create, a new key, or an item of a list that is not a map)."""


ABSENT = _Absent()
SAME = _Absent()
"""`old` unset: the object stored is this one."""


def cel_results(obj: Any, schema: dict[str, Any], path: str = "", old: Any = SAME) -> tuple[list[str], int]:
    """(failures, rules evaluated) of the schema's CEL rules on `obj`. Rules without `oldSelf` are checked as on
    create. Transition rules (those naming `oldSelf`) are checked against `old`, the object stored before an
    update; without it, as on an unchanged update (`oldSelf` = `self`, the second `pulumi up` of the same
    object). As the API server does (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go,
    "transition rules"), a transition rule runs only where the old value correlates: the same property or map
    key, or the same keys of an `x-kubernetes-list-type: map` item; a new field or another list's item is
    checked as on create. A rule that raises fails the caller with CelError unless CEL_UNEVALUABLE names it (no
    CRD gpuplane emits uses `optionalOldSelf`)."""
    import cel

    if old is SAME:
        old = obj
    if obj is None:  # a null value skips its rules (validation.go validateExpressions)
        return [], 0
    if old is None:  # ... and a null old value correlates with nothing
        old = ABSENT
    failures: list[str] = []
    evaluated = 0
    for rule in schema.get("x-kubernetes-validations", []):
        if rule["rule"] in CEL_UNEVALUABLE:
            continue
        if old is ABSENT and "oldSelf" in rule["rule"]:
            continue
        variables = {"self": obj} if old is ABSENT else {"self": obj, "oldSelf": old}
        ctx = cel.Context(variables=variables, functions=CEL_FUNCTIONS)
        try:
            ok = cel.evaluate(rule["rule"], ctx)
        except Exception as exc:  # noqa: BLE001 - reported with the rule, never swallowed
            raise CelError(f"{path or '<root>'}: rule {rule['rule']!r} raised {exc}") from exc
        evaluated += 1
        if ok is not True:
            failures.append(f"{path or '<root>'}: {rule.get('message', rule['rule'])}")
    children: list[tuple[Any, dict[str, Any], str, Any]] = []
    if isinstance(obj, dict):
        was = old if isinstance(old, dict) else {}
        for k, v in obj.items():
            sub = schema.get("properties", {}).get(k, schema.get("additionalProperties"))
            if isinstance(sub, dict):
                children.append((v, sub, f"{path}.{k}", was.get(k, ABSENT)))
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        keys = schema.get("x-kubernetes-list-map-keys", []) if schema.get("x-kubernetes-list-type") == "map" else []
        was_items = old if keys and isinstance(old, list) else []
        for i, v in enumerate(obj):
            # k8s.io/apiserver pkg/cel/common/maplist.go: an item has a key only when every key is set and scalar
            keyed = isinstance(v, dict) and all(isinstance(v.get(k), (str, int, float, bool)) for k in keys)
            match = [w for w in was_items if keyed and isinstance(w, dict) and all(w.get(k) == v.get(k) for k in keys)]
            children.append((v, schema["items"], f"{path}[{i}]", match[0] if match else ABSENT))
    for value, sub, p, was_value in children:
        f, e = cel_results(value, sub, p, was_value)
        failures += f
        evaluated += e
    return failures, evaluated
