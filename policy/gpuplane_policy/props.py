"""Reading resource properties as the engine hands them to a policy pack.

`pulumi preview` gives an analyzer each resource's checked inputs in engine format: camelCase keys,
every number a float (they travel as protobuf `Struct`s), and, in the SDK, read-only proxies
(`Mapping`/`Sequence`, not `dict`/`list`) that raise `UnknownValueError` when a value that is unknown
during preview is read. So these helpers test for `Mapping`/`Sequence`, compare numbers as numbers, and
check a key's presence by iterating the keys, which reads no value. Reading an unknown value still
raises, and the SDK then reports that the policy could not run during preview, which is right: such a
value can't be judged before it is known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def has(obj: Any, key: str) -> bool:
    """Whether the mapping `obj` has `key`, without reading its value."""
    return isinstance(obj, Mapping) and any(k == key for k in obj)


def get(obj: Any, *path: str, default: Any = None) -> Any:
    """The value at `path` (keys of nested mappings), or `default` when any step is missing."""
    for key in path:
        if not has(obj, key):
            return default
        obj = obj[key]
    return obj


def first(obj: Any, *keys: str) -> tuple[str, Any] | None:
    """The first of `keys` that `obj` has (and is not null), with its value."""
    for key in keys:
        value = get(obj, key)
        if value is not None:
            return key, value
    return None


def items(obj: Any) -> list[Any]:
    """The elements of a list property (empty when absent or not a list)."""
    if isinstance(obj, Sequence) and not isinstance(obj, str | bytes):
        return list(obj)
    return []


def mapping(obj: Any) -> Mapping[str, Any]:
    """A map property (empty when absent or not a map)."""
    return obj if isinstance(obj, Mapping) else {}


def number(value: Any) -> float | None:
    """A count as a number: ints, floats and numeric strings ("8", as Kubernetes quantities come)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def show(value: float) -> str:
    """A number for a message: `3`, not `3.0`."""
    return str(int(value)) if value.is_integer() else str(value)
