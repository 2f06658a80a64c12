"""gpuplane's guardrails as a Pulumi CrossGuard policy pack, for any Pulumi program.

`policy/__main__.py` only builds the `PolicyPack` from `POLICIES` (building one starts the analyzer
server, so tests use the rules and their validate functions directly). Nothing here imports gpuplane's
`components`: resources are recognised by their type tokens and engine-format properties.
"""

from .rules import MAX_GPU_NODES, POLICIES, RULES, RULES_BY_NAME, Rule

__all__ = ["MAX_GPU_NODES", "POLICIES", "RULES", "RULES_BY_NAME", "Rule"]
