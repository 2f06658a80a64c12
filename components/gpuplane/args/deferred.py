"""Outputs in args that the config models validate as plain values (a project, a VPC's subnets, a cluster
label): validation and rendering see a plain stand-in (a token the model accepts), and a transformation on
the component puts the Output back wherever a child resource's inputs hold the token.

Only args whose value is passed through to resource inputs may be deferred: an arg that decides which
resources exist (pools, platform kind, region -> zones) or names them must stay plain. When no arg is an
Output, nothing is added, so the planned graph is the one a stack config gives.

Pulumi's Python SDK runs a parent's `transformations` on every child before it registers
(pulumi/sdk python/lib/pulumi/resource.py, `Resource.__init__`: `parent._transformations`), in-process,
so they work under mocks as in a deployment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from .checks import known


class Deferred:
    """Stand-ins for Output args, and the transformation that swaps them back."""

    def __init__(self) -> None:
        self.tokens: dict[str, Any] = {}
        """Token -> the Output (or awaitable) it stands for."""
        self.lists: dict[tuple[str, ...], Any] = {}
        """A tuple of list tokens -> the Output list it stands for."""

    def value(self, value: Any, template: str) -> Any:
        """`value` itself when plain, else a token made from `template` (`{}` -> a unique two-digit serial;
        the template ends in a character a serial can't, so no token is a prefix of another)."""
        if known(value):
            return value
        token = template.format(f"{len(self.tokens) + len(self.lists) + 1:02d}")
        self.tokens[token] = value
        return token

    def items(self, values: Any, template: str) -> Any:
        """A list arg: an Output list stands in as two tokens (the models' list checks pass; the list is
        swapped back whole); a plain list keeps plain items and defers Output items one by one."""
        if values is None:
            return None
        if isinstance(values, Sequence) and not isinstance(values, str):
            return [self.value(v, template) for v in values]
        serial = len(self.tokens) + len(self.lists) + 1
        stand_in = tuple(template.format(f"{serial:02d}{part}") for part in "ab")
        self.lists[stand_in] = values
        return list(stand_in)

    def __bool__(self) -> bool:
        return bool(self.tokens or self.lists)

    def resolve(self, value: Any) -> Any:
        """`value` with every token replaced by its Output (an Output where one was inside)."""
        if isinstance(value, str):
            if value in self.tokens:
                return self.tokens[value]
            hits = [t for t in self.tokens if t in value]
            if not hits:
                return value
            return pulumi.Output.all(*[self.tokens[t] for t in hits]).apply(
                lambda vals: _replace(value, dict(zip(hits, vals, strict=True)))
            )
        if isinstance(value, pulumi.Output):
            return value.apply(self.resolve)
        if isinstance(value, Mapping):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            if all(isinstance(v, str) for v in value) and tuple(value) in self.lists:
                return self.lists[tuple(value)]
            return [self.resolve(v) for v in value]
        return value

    def transformation(self, args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult:
        return pulumi.ResourceTransformationResult(props=self.resolve(dict(args.props)), opts=args.opts)

    def options(self, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions | None:
        """`opts` plus the transformation, when any arg was deferred."""
        if not self:
            return opts
        extra = pulumi.ResourceOptions(transformations=[self.transformation])
        return pulumi.ResourceOptions.merge(opts, extra)


def _replace(text: str, values: Mapping[str, Any]) -> str:
    for token, v in values.items():
        text = text.replace(token, str(v))
    return text
