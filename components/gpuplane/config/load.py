"""Turn raw `gpuplane:*` stack config into a `StackConfig`, or one `ConfigError` naming every bad key."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Annotated, Any

import pulumi
from pydantic import BaseModel, TypeAdapter, ValidationError

from ..catalog import PLATFORMS
from .base import HINTS, models_in, suggest
from .gcp import GKE_DEFAULT_ZONES
from .model import GpuPool, StackConfig
from .regions import OPT_IN

NAMESPACE = "gpuplane"


class ConfigError(pulumi.RunError):
    """Bad stack config. Pulumi prints a RunError's message without a traceback.

    `problems` holds `(key path, reason)` pairs, e.g.
    `("gpuplane:gpuPools[1].gpu", "unknown GPU 'a1000' (known: t4, l4, ...)")`.
    """

    def __init__(self, problems: Iterable[tuple[str, str]]):
        self.problems: list[tuple[str, str]] = list(problems)
        lines = "\n".join(f"  {path}: {reason}" for path, reason in self.problems)
        n = len(self.problems)
        super().__init__(f"invalid gpuplane config ({n} problem{'s' if n != 1 else ''}):\n{lines}")


def key_path(loc: tuple[int | str, ...]) -> str:
    """`('gpuPools', 1, 'gpu')` -> `gpuplane:gpuPools[1].gpu`."""
    out = NAMESPACE
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += (":" if i == 0 else ".") + part
    return out


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model class that owns the last key of `loc` (to list the keys it knows)."""
    model: type[BaseModel] | None = StackConfig
    for part in loc[:-1]:
        if model is None:
            return None
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return None
        model = _inner_model(field.annotation)
    return model


def _inner_model(tp: Any) -> type[BaseModel] | None:
    found = models_in(tp)
    return found[0] if found else None


def _reason(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    if kind == "value_error":
        return str(err["ctx"]["error"])
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        model = _model_at(tuple(err["loc"]))
        known = list(model.model_fields) if model else []
        return f"unknown key{suggest(str(err['loc'][-1]), known)} (known: {', '.join(known)})"
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(err["ctx"]["expected"]))
        return f"{err['input']!r} is not one of {err['ctx']['expected']}{suggest(str(err['input']), expected)}"
    if kind == "string_pattern_mismatch":
        hint = HINTS.get(str(err["ctx"]["pattern"]), "does not have the expected form")
        return f"{err['input']!r} {hint}"
    return f"{err['msg']} (got {err['input']!r})"


UNKNOWABLE = ("gcp", "aws", "gcp.project")
"""What a component may leave unknown (it holds an Output when the program runs): a cloud section (the
cluster's location, so region and zone rules skip it) or the GKE project. A stack file knows them all."""


def parse_config(raw: Mapping[str, Any], unknown: Collection[str] = ()) -> StackConfig:
    """Validate the `gpuplane` namespace (keys without the `gpuplane:` prefix) into a `StackConfig`.

    `unknown` (from `UNKNOWABLE`): parts a component's caller gave as Outputs. They are left out of `raw`
    and every rule that would read them skips, rather than judging a stand-in value.
    Raises `ConfigError` listing every problem at once. Nothing is registered with Pulumi here.
    """
    assert set(unknown) <= set(UNKNOWABLE), f"not unknowable: {sorted(set(unknown) - set(UNKNOWABLE))}"
    platform = PLATFORMS.get(str(raw.get("platform", "")))
    pools = raw.get("gpuPools")
    context = {
        "cloud": platform.cloud if platform else None,
        "integrations": platform.integrations if platform else None,
        "platform": platform,
        "pool_names": _pool_names(pools),
        "fleet_regions": _fleet_regions(raw.get("fleet")),
        "allow_unlisted_regions": raw.get(OPT_IN) is True,
        "unknown": frozenset(unknown),
    }
    try:
        cfg = StackConfig.model_validate(dict(raw), context=context)
    except ValidationError as exc:
        problems = [(key_path(tuple(e["loc"])), _reason(e)) for e in exc.errors()]
        # The checks that need a whole model (fleet layout, zones) still run, without the bad sections,
        # so one error names every bad key rather than the first half of them; unless a bad section is
        # one the layout reads: its verdict on the rest would be a guess.
        bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
        if not bad & set(LAYOUT_INPUTS):
            try:
                partial = StackConfig.model_validate({k: v for k, v in raw.items() if k not in bad}, context=context)
            except ValidationError:
                partial = None
            if partial is not None:
                problems += _layout_problems(partial)
        raise ConfigError(problems) from None
    problems = _layout_problems(cfg)
    if problems:
        raise ConfigError(problems)
    return cfg


LAYOUT_INPUTS = ("platform", "cluster", "gcp", "aws", "gpuPools", "fleet", "gpuAllocation", "storage")
"""Sections the whole-config checks read (fleet, zones; which stores a Deployment may mount)."""


_POOL_NAME: TypeAdapter[str] = TypeAdapter(Annotated[str, *GpuPool.model_fields["name"].metadata])
"""A pool name as `gpuPools[].name` accepts it (pattern and length)."""


def _fleet_regions(fleet: Any) -> list[str] | None:
    """The fleet's region names for `fleet.multikueue.manager`, or None when they are not all plain strings."""
    regions = fleet.get("regions") if isinstance(fleet, dict) else None
    if not isinstance(regions, list) or not all(
        isinstance(r, dict) and isinstance(r.get("region"), str) for r in regions
    ):
        return None
    return [r["region"] for r in regions]


def _pool_names(pools: Any) -> list[str] | None:
    """The pools' names for checks that refer to them (`fleet.totals`), or None when a pool or its name
    is itself bad (that pool's own error says so; a second one about the reference would be noise)."""
    if not isinstance(pools, list) or not all(isinstance(p, dict) for p in pools):
        return None
    names = [p.get("name") for p in pools]
    try:
        return [_POOL_NAME.validate_python(n) for n in names]
    except ValidationError:
        return None


def _layout_problems(cfg: StackConfig) -> list[tuple[str, str]]:
    from ..stack.fleet import fleet_problems, region_problems, zone_problems  # these need the validated pools
    from .autoscaling import autoscaling_problems
    from .capacity import capacity_problems
    from .coldstart import coldstart_problems
    from .dra import dra_problems
    from .health import health_problems, validation_problems
    from .network import gpudirect_slot_problems, pool_zone_problems
    from .storage import storage_problems

    if cfg.fleet is not None:
        found = fleet_problems(cfg)
    else:  # a pool's GPU missing from the region, or else from every chosen zone: one problem per pool
        found = region_problems(cfg)
        named = set(found)
        found += [z for z in zone_problems(cfg) if z[0] not in {loc for loc, _ in named}]
    found = [*found, *pool_zone_problems(cfg), *gpudirect_slot_problems(cfg), *capacity_problems(cfg)]
    found += system_pool_problems(cfg)
    found += dra_problems(cfg)
    found += validation_problems(cfg) + health_problems(cfg)
    found += autoscaling_problems(cfg)
    found += coldstart_problems(cfg)
    found += storage_problems(cfg)
    merged: dict[str, list[str]] = {}  # one problem per key: checks that judge the same key say so together
    for loc, reason in found:
        merged.setdefault(key_path(loc), []).append(reason)
    return [(path, "; ".join(reasons)) for path, reasons in merged.items()]


def system_pool_problems(cfg: StackConfig) -> list[tuple[tuple[str, ...], str]]:
    """On eks-karpenter no cluster-autoscaler runs and Karpenter launches only the GPU classes, so nothing
    would grow the system node group past `minNodes`: an explicit larger `maxNodes` is refused. On GKE
    Standard without `gcp.zones` the system pool spans GKE's three default zones with at least one node
    each, so a smaller `maxNodes` could never hold its start."""
    sp = cfg.cluster.systemPool
    # (A fleet's regions get their zones from the catalog, region by region.)
    if cfg.platform in ("gke-standard", "gke-nap") and cfg.gcp is not None and not cfg.gcp.zones and not cfg.fleet:
        if sp.maxNodes < GKE_DEFAULT_ZONES:
            return [
                (
                    ("cluster", "systemPool", "maxNodes"),
                    f"without gcp.zones the system pool starts a node in each of GKE's {GKE_DEFAULT_ZONES} default "
                    f"zones: set maxNodes to at least {GKE_DEFAULT_ZONES}, or name the zones (gcp.zones)",
                )
            ]
    if cfg.platform != "eks-karpenter" or "maxNodes" not in sp.model_fields_set or sp.maxNodes == sp.minNodes:
        return []
    return [
        (
            ("cluster", "systemPool", "maxNodes"),
            f"nothing scales the system node group on eks-karpenter (Karpenter launches the GPU classes, no "
            f"cluster-autoscaler runs): set maxNodes to minNodes ({sp.minNodes}) or leave it out",
        )
    ]


def decode_value(value: Any) -> Any:
    """Pulumi hands structured config to programs as JSON text; plain strings stay strings."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


OFFLINE_KEYS = ("stackReferences",)
"""`gpuplane:` keys that only offline plans read (the outputs a `pulumi.StackReference` answers with: the mocks'
`STACK_REFERENCES_KEY`), not the program: they are not stack config."""


def namespace_of(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Pick `gpuplane:*` keys from a flat Pulumi config map and decode their values."""
    prefix = NAMESPACE + ":"
    return {
        k[len(prefix) :]: decode_value(v)
        for k, v in flat.items()
        if k.startswith(prefix) and k[len(prefix) :] not in OFFLINE_KEYS
    }


def misspelt_namespace(flat: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Keys whose namespace looks like a typo of `gpuplane` (`gpuplan:platform`): Pulumi would hand them
    to no one, so the setting would be silently lost."""
    problems = []
    for key in sorted(flat):
        ns, sep, rest = key.partition(":")
        if sep and ns != NAMESPACE and difflib.SequenceMatcher(None, ns.lower(), NAMESPACE).ratio() >= 0.75:
            problems.append((key, f"unknown config namespace {ns!r} (did you mean '{NAMESPACE}:{rest}'?)"))
    return problems


def parse_flat(flat: Mapping[str, Any]) -> StackConfig:
    """Validate a flat Pulumi config map (`gpuplane:platform`, `aws:region`, ...): misspelt namespaces
    and every bad `gpuplane:` key are reported together in one `ConfigError`."""
    stray = misspelt_namespace(flat)
    try:
        cfg = parse_config(namespace_of(flat))
    except ConfigError as exc:
        raise ConfigError([*stray, *exc.problems]) from None
    if stray:
        raise ConfigError(stray)
    return cfg


def from_pulumi() -> StackConfig:
    """Read the running stack's config (the same map `pulumi up` and the offline plan provide)."""
    from pulumi.runtime import config as rc

    flat = {**rc.get_config_env(), **rc.CONFIG.get()}
    return parse_flat(flat)


__all__ = [
    "ConfigError",
    "NAMESPACE",
    "decode_value",
    "from_pulumi",
    "key_path",
    "misspelt_namespace",
    "namespace_of",
    "parse_config",
    "parse_flat",
]
