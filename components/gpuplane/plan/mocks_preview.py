"""`pulumi preview` of a first deployment, offline: the same mocks, but what a provider computes when it
creates a resource (its ID, ARN, endpoint, status, ...) is unknown, as the engine shows it in a preview.
What the program gives and what the engine and providers fill in at check time (engine-made names, a
provider's project or location) stay known.

A program whose resources exist only once some computed value is known (a resource created inside
`apply`), or that fails on an unknown value, registers another graph here than in the full plan:
`tests/test_preview.py` holds every shipped stack and example to the same resources.
"""

from __future__ import annotations

import copy
from typing import Any

import pulumi
from pulumi.output import Unknown, contains_unknowns
from pulumi.runtime.rpc import UNKNOWN

from .mocks import PlanMocks
from .mocks_engine import PREVIEW_UNKNOWN, engine_name, helm_release_name

KNOWN_AT_PREVIEW = frozenset({"urn"})
"""Output keys known before a create besides the inputs (the URN comes from the engine)."""

CHECK_NAMES = ("name", "metadata")
"""Names providers assign at check time, so a preview shows them: the bridge's autoname (`<name>-<7 hex>`,
pulumi-terraform-bridge `AutoName`), a Helm Release's and a Kubernetes object's (pulumi-kubernetes
`assignNameIfAutonameable`, `AssignNameIfAutonamable`)."""


def _check_named(args: pulumi.runtime.MockResourceArgs, state: dict[str, Any], key: str) -> bool:
    if key == "metadata":  # a Kubernetes object given no metadata: its name, made at check
        return args.typ.startswith("kubernetes:")
    return state[key] in (engine_name(args.name), helm_release_name({}, args.name))


def _stand_in(value: Any) -> Any:
    """`value` with each unknown part replaced by `PREVIEW_UNKNOWN` (a list wholly unknown by one item)."""
    if isinstance(value, Unknown) or value is None:
        return PREVIEW_UNKNOWN
    if isinstance(value, dict):
        return {k: _stand_in(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stand_in(v) for v in value]
    return value


class PreviewMocks(PlanMocks):
    """`PlanMocks` as a preview sees new resources: computed outputs unknown, IDs unknown."""

    preview = True
    """Read by `runner.install`: run the program as a dry run (`pulumi preview`)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        # Unknown inputs (another resource's computed outputs) read as a token inside the per-type mocks,
        # which join, parse and list them as they would real values; what derives from them stays unknown.
        unknown = {k for k, v in args.inputs.items() if contains_unknowns(v) or v is None}
        known_args = copy.copy(args)
        known_args.inputs = {k: _stand_in(v) for k, v in args.inputs.items()}
        rid, state = super().new_resource(known_args)
        if args.typ.startswith("pulumi:providers:") or args.typ == "pulumi:pulumi:StackReference":
            return rid, state  # a provider's config and another stack's outputs are read at preview
        known = (set(args.inputs) - unknown) | set(self.filled.get((args.typ, args.name), {})) | KNOWN_AT_PREVIEW
        known |= {k for k in CHECK_NAMES if k in state and k not in args.inputs and _check_named(args, state, k)}
        return "", {k: (v if k in known else UNKNOWN) for k, v in state.items()}

    def again(self, cloud: Any) -> PlanMocks:
        return PreviewMocks(self.stack_references, cloud)


__all__ = ["KNOWN_AT_PREVIEW", "PreviewMocks"]
