"""Shared pieces of the config models: the strict base model, patterns, and validation context."""

from __future__ import annotations

import difflib
import ipaddress
import re
import typing
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo

HINTS: dict[str, str] = {}
"""Regex of a `Field(pattern=...)` -> what a value must look like, in the user's terms (errors never show
the regex)."""


def shaped(regex: str, hint: str) -> str:
    """Register the plain-words `hint` ("must look like us-east-1") for a field pattern; returns `regex`."""
    HINTS[regex] = hint
    return regex


DNS_LABEL = shaped(
    r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
    "must be a DNS label: lowercase letters, digits and '-', from a letter, not ending in '-' (e.g. ml-gke)",
)
LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
DURATION = shaped(r"^[0-9]+(ms|s|m|h)$", "must be a duration: a whole number and ms, s, m or h (e.g. 30s, 5m, 720h)")


class Model(BaseModel):
    """Unknown keys are errors; parsed config is immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)


def models_in(tp: Any) -> list[type[BaseModel]]:
    """The config models a field's annotation holds (`GpuPool` in `list[GpuPool]`, `X` in `X | None`)."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in typing.get_args(tp) for m in models_in(arg)]


def not_ipv4_cidrs(values: list[str]) -> list[str]:
    """The values that are not IPv4 CIDR blocks (host bits zero)."""
    bad = []
    for cidr in values:
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError:
            bad.append(cidr)
    return bad


def repeated(values: list[str]) -> list[str]:
    """The values that occur more than once, sorted."""
    return sorted({v for v in values if values.count(v) > 1})


def suggest(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the closest of `choices`, or an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def context_value(info: ValidationInfo, key: str) -> object:
    """A value the loader put in the validation context (platform facts), or None."""
    return (info.context or {}).get(key)


def unknown(info: ValidationInfo) -> frozenset[str]:
    """What the caller left unknown (`parse_config(unknown=...)`): rules that read it skip."""
    found = context_value(info, "unknown")
    return found if isinstance(found, frozenset) else frozenset()


def bad_labels(labels: dict[str, str]) -> list[str]:
    """Keys of `labels` that are not valid Kubernetes label keys or whose values are invalid."""
    return sorted(k for k, v in labels.items() if not LABEL_KEY.match(k) or not LABEL_VALUE.match(v))


def valid_labels(v: dict[str, str]) -> dict[str, str]:
    """Field validator for a map of Kubernetes labels."""
    bad = bad_labels(v)
    if bad:
        raise ValueError(f"invalid Kubernetes label(s): {', '.join(bad)}")
    return v


SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")


def own_namespace(v: str, advice: str) -> str:
    """Field validator body: `v` is not one of Kubernetes' own namespaces (`advice` says where to go instead)."""
    if v in SYSTEM_NAMESPACES:
        raise ValueError(f"{v} is Kubernetes' own namespace; {advice}")
    return v
