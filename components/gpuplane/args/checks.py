"""Component args -> the stack config models, validated by the same `parse_config` as a stack, so each rule
lives in one place. An argument given as an Output is unknown to the rules, never a stand-in value. A bad
argument raises `ArgsError` (a `ConfigError`) naming the argument path,
e.g. `gpu_pools[1].gpus_per_node`, before any resource is registered."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

import pulumi

from ..config import ConfigError, parse_config
from ..config.model import StackConfig
from .inputs import GpuPoolArgs

T = TypeVar("T")


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


STACK_ADVICE = {"set gpuplane:allow_unlisted_regions: true": "pass the argument `allow_unlisted_regions: True`"}
"""Advice in config messages that names a stack key -> the same advice for a component's caller."""


def in_arg_terms(reason: str) -> str:
    """A config message's advice in argument terms (a caller has no stack file to set keys in)."""
    for stack, arg in STACK_ADVICE.items():
        reason = reason.replace(stack, arg)
    return reason


def check(
    where: str,
    raw: Mapping[str, Any],
    renames: Mapping[str, str],
    also: Sequence[tuple[str, str]] = (),
    unknown: Collection[str] = (),
) -> StackConfig:
    """Validate a stack-config document built from args; problems come back as argument paths, with the
    problems `also` found before (unknown arguments) in the same `ArgsError`. What an argument holds as an
    Output is left out of `raw` and named in `unknown` (`config.load.UNKNOWABLE`): rules that need it skip."""
    try:
        cfg = parse_config(raw, unknown)
    except ConfigError as exc:
        said = {path for path, _ in also}  # a path `also` explains is not explained twice
        problems = [(arg_path(p, renames), in_arg_terms(snake(r))) for p, r in exc.problems]
        problems = [(p, r) for p, r in problems if p not in said]
        borrowed = renames.get("cluster.name", "cluster_label")
        if borrowed != "cluster_label":  # the label came from the cluster argument: say so, and how to set it
            hint = " (the `gpuplane.io/cluster` label and name prefix default to it: pass `cluster_label`)"
            problems = [(p, r + hint if p == borrowed else r) for p, r in problems]
        raise ArgsError(where, [*also, *problems]) from None
    if also:
        raise ArgsError(where, also)
    return cfg


def require(
    where: str, args: Mapping[str, Any], keys: Sequence[str], cls: Any = None, also: Sequence[tuple[str, str]] = ()
) -> list[tuple[str, str]]:
    """Required args present (Python does not check a TypedDict at runtime): an `ArgsError` naming the
    missing ones and, given the args' TypedDict `cls`, the undeclared top-level ones. With nothing missing,
    the undeclared ones (and the problems `also` found) are returned, for `check(..., also=)` to report
    with the rest (the config check names undeclared keys inside typed sections)."""
    cluster = (
        " (or pass `cluster`, your cluster object)" if cls is not None and "cluster" in cls.__annotations__ else ""
    )
    said = {path for path, _ in also}  # a path `also` explains is not explained twice
    missing = [
        (k, f"required argument is missing{cluster if k in CLUSTER_GIVES else ''}")
        for k in keys
        if args.get(k) is None and k not in said
    ]
    shape = shape_problems(args, cls, nested=False) if cls is not None else []
    unknown = [*also, *(p for p in shape if p[0] not in said)]
    if missing or any(r.startswith(PLAIN_ONLY) for _, r in unknown):  # nothing further can be checked
        raise ArgsError(where, unknown + missing)
    return unknown


CLUSTER_GIVES = ("cluster_name", "subnet_ids", "location")
"""Required arguments a cluster object (`cluster`) can give instead."""


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


def _typed_dict(hint: Any) -> Any:
    """The TypedDict a hint names, through `NotRequired`, `Input`, `Optional` and `Sequence` (else None)."""
    import typing

    if typing.is_typeddict(hint):
        return hint
    for arg in typing.get_args(hint):
        found = _typed_dict(arg)
        if found is not None:
            return found
    return None


PLAIN_ONLY = "must be a plain value, not an Output"


def plain_only(hint: Any) -> bool:
    """A declared type that takes no Output (no `pulumi.Input[...]` anywhere in it): a value that decides which
    resources exist or how they are named, so it must be known when the program runs."""
    return "Output" not in repr(hint)


def shape_problems(args: Any, cls: Any, path: str = "", nested: bool = True) -> list[tuple[str, str]]:
    """What of `args` does not fit `cls`, a TypedDict: keys it does not declare (with the closest known key)
    and Outputs where it declares a plain value, in nested typed sections (lists of them included) too, as
    `(argument path, reason)`. Python checks neither at runtime. `nested=False`: undeclared keys inside
    sections are left to the config check that names them (Outputs are still reported)."""
    from ..config.base import suggest

    if isinstance(args, list | tuple):
        return [p for i, item in enumerate(args) for p in shape_problems(item, cls, f"{path}[{i}]", nested)]
    if not isinstance(args, Mapping):
        return []  # an Output or a plain value: nothing to name
    hints = dict(cls.__annotations__)  # unevaluated: `pulumi.Input` holds forward references
    problems = []
    for key, value in args.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in hints:
            if nested or not path:
                problems.append((where, f"unknown argument{suggest(str(key), hints)} (known: {', '.join(hints)})"))
            continue
        if plain_only(hints[key]) and not known(value):
            problems.append((where, PLAIN_ONLY + ": it decides which resources exist"))
            continue
        inner = _typed_dict(hints[key])
        if inner is not None:
            problems += shape_problems(value, inner, where, nested)
    return problems
