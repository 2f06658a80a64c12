"""The stack config reference (docs/config.md), generated from the models' field docstrings and defaults."""

from __future__ import annotations

import functools
import operator
import re
import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from .base import models_in
from .model import StackConfig


def _plain(tp: Any) -> Any:
    """`tp` without `Annotated` metadata at any depth (`list[Annotated[str, ...]]` -> `list[str]`)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _plain(args[0])
    if origin in (list, dict, tuple, set) and args:
        return origin[tuple(_plain(a) for a in args)]
    if origin in (Union, types.UnionType):
        return functools.reduce(operator.or_, (_plain(a) for a in args))
    return tp


def _type(tp: Any) -> str:
    """A field's type as users read it: class names without their module (`list[GpuPool]`)."""
    text = str(_plain(tp)).replace("typing.", "").replace("<class '", "").replace("'>", "")
    return re.sub(r"\b(?:gpuplane\.config\.)?[a-z_]+\.(?=[A-Z])", "", text)


def reference() -> str:
    """Markdown: one table per model, reached from `StackConfig`."""
    out = [
        "# Stack config reference",
        "",
        "Generated from `components/gpuplane/config` by `python scripts/render_docs.py` (a test keeps it in sync).",
        "Every key lives under the `gpuplane:` namespace of `stacks/Pulumi.<stack>.yaml`.",
    ]
    seen: set[type[BaseModel]] = set()
    queue: list[tuple[str, type[BaseModel]]] = [("gpuplane:", StackConfig)]
    while queue:
        title, model = queue.pop(0)
        if model in seen:
            continue
        seen.add(model)
        out += ["", f"## {title} ({model.__name__})", "", (model.__doc__ or "").strip().splitlines()[0], ""]
        out += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for name, field in model.model_fields.items():
            stack_required = (
                isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("stack") == "required"
            )
            if stack_required:  # optional only to a component's caller (`parse_config(unknown=...)`)
                default = "required"
            elif field.default is not PydanticUndefined:
                default = f"`{field.default!r}`"
            elif field.default_factory is not None:
                default = "(see below)" if models_in(field.annotation) else f"`{field.default_factory()!r}`"  # type: ignore[call-arg]
            else:
                default = "required"
            doc = " ".join((field.description or "").split()).replace("|", "\\|")
            kind = _type(field.annotation)
            kind = (kind.removesuffix(" | None") if stack_required else kind).replace("|", "\\|")
            out.append(f"| `{name}` | `{kind}` | {default} | {doc} |")
            for sub in models_in(field.annotation):
                queue.append((f"{title.rstrip(':')}{':' if title.endswith(':') else '.'}{name}", sub))
    return "\n".join(out) + "\n"
