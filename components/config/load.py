"""Turn raw `gpuplane:*` stack config into a `StackConfig`, or one `ConfigError` naming every bad key."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import pulumi
from pydantic import BaseModel, ValidationError

from ..catalog import PLATFORMS
from .model import StackConfig

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
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in typing.get_args(tp):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _reason(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    if kind == "value_error":
        return str(err["ctx"]["error"])
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        model = _model_at(tuple(err["loc"]))
        known = ", ".join(model.model_fields) if model else ""
        return f"unknown key (known: {known})"
    if kind == "literal_error":
        return f"{err['input']!r} is not one of {err['ctx']['expected']}"
    return f"{err['msg']} (got {err['input']!r})"


def parse_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the `gpuplane` namespace (keys without the `gpuplane:` prefix) into a `StackConfig`.

    Raises `ConfigError` listing every problem at once. Nothing is registered with Pulumi here.
    """
    platform = PLATFORMS.get(str(raw.get("platform", "")))
    context = {
        "cloud": platform.cloud if platform else None,
        "integrations": platform.integrations if platform else None,
        "platform": platform,
    }
    try:
        cfg = StackConfig.model_validate(dict(raw), context=context)
    except ValidationError as exc:
        raise ConfigError((key_path(tuple(e["loc"])), _reason(e)) for e in exc.errors()) from None
    from ..fleet import fleet_problems, zone_problems  # these need the validated pools

    problems = fleet_problems(cfg) if cfg.fleet is not None else zone_problems(cfg)
    if problems:
        raise ConfigError((key_path(loc), reason) for loc, reason in problems)
    return cfg


def decode_value(value: Any) -> Any:
    """Pulumi hands structured config to programs as JSON text; plain strings stay strings."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def namespace_of(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Pick `gpuplane:*` keys from a flat Pulumi config map and decode their values."""
    prefix = NAMESPACE + ":"
    return {k[len(prefix) :]: decode_value(v) for k, v in flat.items() if k.startswith(prefix)}


def from_pulumi() -> StackConfig:
    """Read the running stack's config (the same map `pulumi up` and the offline plan provide)."""
    from pulumi.runtime import config as rc

    flat = {**rc.get_config_env(), **rc.CONFIG.get()}
    return parse_config(namespace_of(flat))


__all__ = ["ConfigError", "NAMESPACE", "decode_value", "from_pulumi", "key_path", "namespace_of", "parse_config"]
