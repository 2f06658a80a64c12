"""The stack program: config -> platform -> exports. `__main__.py` and the offline plan both call `main`."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pulumi

from .config import StackConfig, from_pulumi


def builder_for(cfg: StackConfig) -> Callable[[StackConfig], dict[str, object]]:
    """Import the platform's builder lazily (a GKE stack never imports the AWS SDKs)."""
    module, func = cfg.platform_spec.builder.split(":")
    fn: Callable[[StackConfig], dict[str, object]] = getattr(importlib.import_module(module), func)
    return fn


def main() -> None:
    """Read the stack's `gpuplane:` config, build the platform and export its outputs."""
    cfg = from_pulumi()  # raises ConfigError (a pulumi.RunError) before anything is registered
    for key, value in builder_for(cfg)(cfg).items():
        pulumi.export(key, value)
