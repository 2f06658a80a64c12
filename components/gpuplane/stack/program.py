"""The stack program: config -> platform -> exports. `__main__.py` and the offline plan both call `main`."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pulumi

from ..config import ConfigError, StackConfig, from_pulumi
from ..resources.extras import hint


def builder_for(cfg: StackConfig) -> Callable[..., dict[str, object]]:
    """Import the platform's builder lazily (a GKE stack never imports the AWS SDKs).
    Builders take `(cfg, opts=None)` and return the stack outputs. A platform whose cloud SDK is not
    installed is a `ConfigError` naming the pip extra that brings it."""
    module, func = cfg.platform_spec.builder.split(":")
    try:
        fn: Callable[..., dict[str, object]] = getattr(importlib.import_module(module), func)
    except ModuleNotFoundError as exc:
        advice = hint(exc)
        if advice is None:
            raise
        sdk = (exc.name or "").split(".")[0]
        why = advice.replace(f"{sdk} is not installed: ", f"{cfg.platform} needs {sdk}, which is not installed: ")
        raise ConfigError([("gpuplane:platform", why)]) from None
    return fn


MULTIKUEUE_NEEDS_PARTS = (
    "needs the fleet run as a stack per region (gpuplane:fleetStack; `gpuplane fleet stacks` writes them): the "
    "manager reaches each worker through its region stack's multikueueKubeconfig output"
)


def main() -> None:
    """Read the stack's `gpuplane:` config, build the platform (or a fleet of it) and export its outputs."""
    cfg = from_pulumi()  # raises ConfigError (a pulumi.RunError) before anything is registered
    builder = builder_for(cfg)  # imports the cloud SDK, or says which pip extra brings it
    if cfg.fleet is not None and cfg.fleetStack is not None:  # one part of a fleet run as a stack per region
        from .parts import CENTRAL, central_part, region_part

        outputs = central_part(cfg) if cfg.fleetStack == CENTRAL else region_part(cfg, builder)
    elif cfg.fleet is not None:
        from .fleet import build as build_fleet

        if cfg.fleet.multikueue is not None:
            raise ConfigError([("gpuplane:fleet.multikueue", MULTIKUEUE_NEEDS_PARTS)])

        outputs = build_fleet(cfg, cfg.platform_spec.builder)
    else:
        outputs = builder(cfg)
    from ..health.summary import health_summary
    from .capacity import summary

    outputs["capacity"] = summary(cfg)
    outputs["gpuHealth"] = health_summary(cfg)
    for key, value in outputs.items():
        pulumi.export(key, value)
