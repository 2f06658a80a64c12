"""Where two input trees differ, as dot paths: the one walk `gpuplane diff` and the read-back model share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

UNSET = object()
"""A key one side of a change does not have."""


def changed_values(old: Any, new: Any, prefix: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(dot path, old value, new value) where two input trees differ (lists as `[i]`; `UNSET` for a
    key one side lacks)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            path = f"{prefix}.{key}" if prefix else key
            if key not in old or key not in new:
                yield path, old.get(key, UNSET), new.get(key, UNSET)
            else:
                yield from changed_values(old[key], new[key], path)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from changed_values(a, b, f"{prefix}[{i}]")
    elif old != new:
        yield prefix or "<value>", old, new


def changed_paths(old: Any, new: Any, prefix: str = "") -> Iterator[str]:
    """Dot paths (lists as `[i]`) where two input trees differ."""
    return (path for path, _, _ in changed_values(old, new, prefix))


__all__ = ["UNSET", "changed_paths", "changed_values"]
