"""Which input changes replace a resource, and which update it in place but disrupt its nodes.

One table per resource type gpuplane emits, taken from the providers' schema source (each rule cites repo,
file and field):

- terraform-provider-google / terraform-provider-aws: `ForceNew: true` (SDKv2) or `RequiresReplace()`
  (plugin framework). SDKv2 semantics (hashicorp/terraform-plugin-sdk helper/schema/schema.go, diffList):
  `ForceNew` on a list/block applies to its element count, so a ForceNew block replaces the resource only
  when it is added or removed (`exact=True`); its nested fields replace only if they are ForceNew themselves.
- pulumi-eks: the component passes its inputs to aws children (nodejs/eks/cluster/cluster.ts,
  nodejs/eks/nodes/nodegroup.ts), plus `replaceOnChanges` in provider/cmd/pulumi-resource-eks/schema.json.
- pulumi-kubernetes: provider/pkg/provider/diff.go `forceNewProperties` (metadata.name/namespace for every
  object, ConfigMap data unless the provider sets enableConfigMapMutable) and helm_release.go
  (`forceNewFields := []string{".name", ".namespace"}`).

`DISRUPTS` is for in-place updates that recreate or roll nodes (GKE node machine changes, EKS node group
version updates, Karpenter drift): not a replacement of the pool itself.

`REFUSED` is for in-place updates the API server refuses: a custom resource field whose published CRD has a
transition rule (`self == oldSelf`, "field is immutable"). pulumi-kubernetes patches the object, the API
server answers 422 and `pulumi preview` (a server-side dry run) and `pulumi up` fail there. It does not apply
when the object is replaced.

`REQUEUES` is for in-place updates that leave running or queued workloads on something that is gone (a Kueue
ClusterQueue moved to a renamed flavor).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from .replacement_kubernetes import RawRule
from .replacement_table import NO_REPLACE_INPUTS, TABLE


class Effect(StrEnum):
    REPLACES = "replaces"
    DISRUPTS = "disrupts nodes"
    REFUSED = "refused by the API server"
    REQUEUES = "disrupts admitted workloads"


@dataclass(frozen=True)
class Rule:
    path: str
    """Pulumi input path (camelCase as in the plan JSON); `*` matches one key."""
    effect: Effect
    why: str
    source: str
    exact: bool = False
    """Only adding or removing the path itself counts (an SDKv2 ForceNew block)."""
    when_removed: bool = False
    """Only removing the path counts (a `customdiff.ForceNewIfChange` on removal)."""
    target: str = ""
    """What is replaced when it is a child the component creates, not the resource itself."""
    old_has: str = ""
    """Only when the stored object has this path (a transition rule guarded by `has(oldSelf.x)`)."""
    when_gone: str = ""
    """Only when a value the stored object has at this path (`*` for any key or index) is gone from the new one."""
    unless_kept: str = ""
    """Not when the stored and the new inputs both have this path, with the same value (pulumi-kubernetes replaces a
    provider only when its `clusterIdentifier` changes, once one is set)."""

    def matches(self, path: str) -> bool:
        return re.match("^" + _regex(self.path) + ("$" if self.exact else r"(?:$|[.\[])"), path) is not None


def _regex(path: str) -> str:
    """A rule path as a regex: `*` is one key or index."""
    return re.escape(path).replace(r"\*", r"[^.\[]+")


def _rule(raw: RawRule) -> Rule:
    path, effect, why, source, *flags = raw
    opts = dict.fromkeys(f for f in flags if f in ("exact", "when_removed"))
    target = next((f.removeprefix("target=") for f in flags if f.startswith("target=")), "")
    old_has = next((f.removeprefix("old_has=") for f in flags if f.startswith("old_has=")), "")
    gone = next((f.removeprefix("when_gone=") for f in flags if f.startswith("when_gone=")), "")
    kept = next((f.removeprefix("unless_kept=") for f in flags if f.startswith("unless_kept=")), "")
    return Rule(path, Effect(effect), why, source, "exact" in opts, "when_removed" in opts, target, old_has, gone, kept)


RULES: Mapping[str, tuple[Rule, ...]] = MappingProxyType({t: tuple(_rule(r) for r in rs) for t, rs in TABLE.items()})

_K8S = "pulumi/pulumi-kubernetes provider/pkg/provider/diff.go metadataForceNewProperties"
KUBERNETES_OBJECT: tuple[Rule, ...] = (
    Rule("metadata.name", Effect.REPLACES, "a new object name is a new object", _K8S),
    Rule("metadata.namespace", Effect.REPLACES, "a new namespace is a new object", _K8S),
)
"""Every Kubernetes object (the generic rule of pulumi-kubernetes' Diff)."""

_NOT_OBJECTS = ("kubernetes:helm.sh/",)


def rules_for(type_: str) -> tuple[Rule, ...]:
    generic = KUBERNETES_OBJECT if type_.startswith("kubernetes:") and not type_.startswith(_NOT_OBJECTS) else ()
    return generic + RULES.get(type_, ())


def covered(type_: str) -> str | None:
    """Why a type is accounted for: it has rules, or is listed as having no replace-forcing inputs."""
    if rules_for(type_):
        return "rules"
    for prefix, reason in NO_REPLACE_INPUTS.items():
        if type_ == prefix or (prefix.endswith(":") and type_.startswith(prefix)):
            return reason
    return None


@dataclass(frozen=True)
class Finding:
    path: str
    effect: Effect
    why: str
    source: str
    target: str = ""

    @property
    def replaces_self(self) -> bool:
        return self.effect is Effect.REPLACES and not self.target

    def text(self) -> str:
        what = f"{self.effect.value} {self.target}" if self.target else self.effect.value
        return f"{what}: {self.why} ({self.source})"


def _normalise(path: str) -> str:
    """Pulumi ignoreChanges/replaceOnChanges syntax to our dot paths: a["b"] -> a.b, a[*] -> a[."""
    return re.sub(r'\["([^"]+)"\]', r".\1", path).replace("[*]", "")


def covers(prefix: str, path: str) -> bool:
    prefix = _normalise(prefix)
    return prefix in ("*", "") or path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


# A component input that makes the component set `ignoreChanges` on its child (input name, ignored path).
COMPONENT_IGNORES: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        # pulumi/pulumi-eks nodejs/eks/nodes/nodegroup.ts: ignoreScalingChanges -> ignoreChanges
        # ["scalingConfig.desiredSize"] on the aws.eks.NodeGroup (the autoscaler owns the desired size).
        "eks:index:ManagedNodeGroup": (("ignoreScalingChanges", "scalingConfig.desiredSize"),),
    }
)


def ignored_paths(type_: str, inputs: Mapping[str, Any], ignore_changes: Iterable[str]) -> tuple[str, ...]:
    extra = tuple(path for flag, path in COMPONENT_IGNORES.get(type_, ()) if inputs.get(flag) is True)
    return tuple(ignore_changes) + extra


def _present(tree: Any, path: str) -> bool:
    for key in path.split("."):
        if not isinstance(tree, Mapping) or key not in tree:
            return False
        tree = tree[key]
    return True


def _leaves(tree: Any, prefix: str = "") -> Iterable[tuple[str, Any]]:
    """(dot path, value) of every leaf, lists as `[i]` (as `paths.changed_values` spells them)."""
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _leaves(v, f"{prefix}[{i}]")
    else:
        yield prefix, tree


def _gone(pattern: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Some value the old tree has at `pattern` is not among the new tree's values there."""
    at = re.compile(_regex(pattern))
    before = {repr(v) for p, v in _leaves(old or {}) if at.fullmatch(p)}
    return bool(before - {repr(v) for p, v in _leaves(new or {}) if at.fullmatch(p)})


def classify(
    type_: str,
    paths: Iterable[str],
    old: Mapping[str, Any] | None = None,
    new: Mapping[str, Any] | None = None,
    replace_on_changes: Iterable[str] = (),
) -> dict[str, Finding]:
    """The replacing or disruptive findings among changed input paths (ignored paths already removed)."""
    out: dict[str, Finding] = {}
    roc = tuple(replace_on_changes)
    for p in paths:
        hits = [r for r in rules_for(type_) if r.matches(p)]
        hits = [
            r
            for r in hits
            if not r.when_removed
            or (old is not None and new is not None and _present(old, r.path) and not _present(new, r.path))
        ]
        hits = [r for r in hits if not r.old_has or (old is not None and _present(old, r.old_has))]
        hits = [r for r in hits if not r.when_gone or _gone(r.when_gone, old, new)]
        hits = [r for r in hits if not r.unless_kept or not _kept(r.unless_kept, old, new)]
        if any(covers(c, p) for c in roc):
            out[p] = Finding(p, Effect.REPLACES, "replaceOnChanges set on the resource", "pulumi resource option")
        elif hits:
            best = min(hits, key=lambda r: (_RANK[r.effect], bool(r.target)))
            out[p] = Finding(p, best.effect, best.why, best.source, best.target)
    if any(f.replaces_self for f in out.values()):  # a new object: no transition for the API server to refuse
        out = {p: f for p, f in out.items() if f.effect is not Effect.REFUSED}
    return out


def _kept(path: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Both have `path`, with the same value."""
    if old is None or new is None or not (_present(old, path) and _present(new, path)):
        return False
    keys = path.split(".")
    return bool(_at(old, keys) == _at(new, keys))


def _at(tree: Any, keys: list[str]) -> Any:
    for key in keys:
        tree = tree[key]
    return tree


_RANK = {Effect.REPLACES: 0, Effect.REFUSED: 1, Effect.DISRUPTS: 2, Effect.REQUEUES: 3}
"""Which of several rules matching one path wins: a replacement, then a refusal, then a disruption."""
