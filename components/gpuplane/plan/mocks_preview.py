"""`pulumi preview` of a first deployment, offline: the same mocks, but what a provider computes when it
creates a resource (its ID, ARN, endpoint, status, ...) is unknown, as the engine shows it in a preview.
What the program gives and what the engine and providers fill in at check time (engine-made names, a
provider's project or location) stay known.

A program whose resources exist only once some computed value is known (a resource created inside
`apply`), or that fails on an unknown value, registers another graph here than in the full plan:
`tests/test_preview.py` holds every shipped stack and example to the same resources.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.runtime.rpc import UNKNOWN

from .mocks import PlanMocks

KNOWN_AT_PREVIEW = frozenset({"urn"})
"""Output keys known before a create besides the inputs (the URN comes from the engine)."""


class PreviewMocks(PlanMocks):
    """`PlanMocks` as a preview sees new resources: computed outputs unknown, IDs unknown."""

    preview = True
    """Read by `runner.install`: run the program as a dry run (`pulumi preview`)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        rid, state = super().new_resource(args)
        if args.typ.startswith("pulumi:providers:") or args.typ == "pulumi:pulumi:StackReference":
            return rid, state  # a provider's config and another stack's outputs are read at preview
        known = {k for k, v in args.inputs.items() if v is not None} | set(self.filled.get((args.typ, args.name), {}))
        known |= KNOWN_AT_PREVIEW
        return "", {k: (v if k in known else UNKNOWN) for k, v in state.items()}

    def again(self, cloud: Any) -> PlanMocks:
        return PreviewMocks(self.stack_references, cloud)


__all__ = ["KNOWN_AT_PREVIEW", "PreviewMocks"]
