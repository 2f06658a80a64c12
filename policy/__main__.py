"""The policy pack `pulumi preview --policy-pack policy` loads. Building `PolicyPack` starts the analyzer
server and never returns, so this file only builds it; the rules live in `gpuplane_policy`."""

from gpuplane_policy import POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(name="gpuplane-guardrails", enforcement_level=EnforcementLevel.ADVISORY, policies=POLICIES)
