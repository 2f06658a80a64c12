"""Component args -> the stack config models, validated by the same `parse_config` as a stack, so each rule
lives in one place. A bad argument raises `ArgsError` (a `ConfigError`) naming the argument path,
e.g. `gpu_pools[1].gpus_per_node`, before any resource is registered."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

import pulumi

from .config import ConfigError, parse_config
from .config.model import StackConfig
from .inputs import GpuPoolArgs

T = TypeVar("T")

PLACEHOLDER_PROJECT = "gpuplane-args"
"""A valid project ID for validating pools when the real one is an Output (never rendered)."""
PLACEHOLDER_CLUSTER = "cluster"


class ArgsError(ConfigError):
    """Bad component arguments: `problems` holds `(argument path, reason)` pairs."""

    def __init__(self, where: str, problems: Iterable[tuple[str, str]]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  {path}: {reason}" for path, reason in self.problems)
        n = len(self.problems)
        pulumi.RunError.__init__(self, f"invalid arguments of {where} ({n} problem{'s' if n != 1 else ''}):\n{lines}")


def snake(text: str) -> str:
    """`gpusPerNode` -> `gpus_per_node`, for every camelCase word in `text` (paths and messages)."""
    return re.sub(r"\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b", lambda m: re.sub(r"([A-Z])", r"_\1", m[0]).lower(), text)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def plain(value: Any) -> Any:
    """Enum members as their values (the config models take the strings)."""
    return value.value if isinstance(value, Enum) else value


KEY_RENAMES = {"profile": "migProfile"}
"""Arg keys spelt differently in the stack config."""


def _keys(d: Mapping[str, Any]) -> dict[str, Any]:
    return {KEY_RENAMES.get(k, camel(k)): plain(v) for k, v in d.items()}


def pool_config(pool: GpuPoolArgs | Mapping[str, Any]) -> dict[str, Any]:
    """One `GpuPoolArgs` as a `gpuPools[]` entry (camelCase keys, enum values; labels kept as given)."""
    out = _keys({k: v for k, v in pool.items() if k not in ("sharing", "taints", "labels", "capacity", "reservation")})
    if "capacity" in pool:
        out["capacity"] = [plain(c) for c in pool["capacity"]]
    if "reservation" in pool:
        r = pool["reservation"]
        out["reservation"] = {
            **_keys({k: v for k, v in r.items() if k != "tags"}),
            **({"tags": dict(r["tags"])} if "tags" in r else {}),
        }
    if "sharing" in pool:
        out["sharing"] = _keys(pool["sharing"])
    if "taints" in pool:
        out["taints"] = [_keys(t) for t in pool["taints"]]
    if "labels" in pool:
        out["labels"] = dict(pool["labels"])
    return out


def arg_path(path: str, renames: Mapping[str, str]) -> str:
    """`gpuplane:gpuPools[1].gpusPerNode` -> `gpu_pools[1].gpus_per_node` (after `renames` of prefixes)."""
    body = path.removeprefix("gpuplane:")
    for prefix, arg in renames.items():
        if body == prefix or body.startswith((prefix + ".", prefix + "[")):
            body = arg + body[len(prefix) :]
            break
    return snake(body)


def check(where: str, raw: Mapping[str, Any], renames: Mapping[str, str]) -> StackConfig:
    """Validate a stack-config document built from args; problems come back as argument paths."""
    try:
        return parse_config(raw)
    except ConfigError as exc:
        raise ArgsError(where, [(arg_path(p, renames), snake(r)) for p, r in exc.problems]) from None


def require(where: str, args: Mapping[str, Any], keys: Sequence[str]) -> None:
    """Required args present (a TypedDict's `total` is not checked at runtime)."""
    missing = [(k, "required argument is missing") for k in keys if args.get(k) is None]
    if missing:
        raise ArgsError(where, missing)


def known(value: Any) -> bool:
    """A plain value (no Outputs or awaitables anywhere inside)."""
    if isinstance(value, pulumi.Output) or hasattr(value, "__await__"):
        return False
    if isinstance(value, Mapping):
        return all(known(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(known(v) for v in value)
    return True


def lift(value: Any, fn: Callable[[Any], T]) -> T | pulumi.Output[T]:
    """`fn(value)` now when `value` is plain (the planned inputs stay plain), else as an Output."""
    return fn(value) if known(value) else pulumi.Output.from_input(value).apply(fn)
