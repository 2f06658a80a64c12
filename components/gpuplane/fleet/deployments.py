"""The region stacks' Pulumi Deployments settings, as code (`gpuplane:fleet.deployments`; docs/fleets.md, "Pulumi
Deployments as code"): the central stack declares, for each region stack, its `DeploymentSettings` (the git source
and the cloud's OIDC credentials) and, with a `schedule`, a `DriftSchedule`, through the `pulumi-pulumiservice`
provider. Pulumi Cloud then runs the fleet; gpuplane plans it.

The input dicts are rendered by pure functions, each shaped by the provider's schema
(pulumi/pulumi-pulumiservice provider/cmd/pulumi-resource-pulumiservice/schema.json; the excerpt the tests validate
against is tests/schemas/pulumiservice-1.5.0.json). No `pulumiservice:index:Stack` is declared: the region stacks are
created by `pulumi stack init` or gpuplane's Automation API (`gpuplane fleet up`), and a `Stack` resource here would
delete a region stack (its state with it) when the central stack or this section goes.

```python
from gpuplane.fleet.deployments import deployment_resources
deployment_resources("ml-fleet", cfg, pulumi.get_project(), {"us-east4": "gcp-fleet-us-east4"},
                     pulumi.ResourceOptions(parent=central))
```
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pulumi

from ..config.deployments import FleetDeployments, go_duration
from ..config.model import StackConfig
from ..resources.extras import require

require("deployments")  # the one clear error (pip install 'gpuplane[deployments]') instead of a bare one
import pulumi_pulumiservice as pulumiservice  # noqa: E402

SCHEMA = "pulumi/pulumi-pulumiservice provider/cmd/pulumi-resource-pulumiservice/schema.json"
SETTINGS_TYPE = "pulumiservice:index:DeploymentSettings"
DRIFT_TYPE = "pulumiservice:index:DriftSchedule"
SESSION_NAME = re.compile(r"[^\w+=,.@-]")
"""What AWS refuses in a role session name (AssumeRoleWithWebIdentity `RoleSessionName`: [\\w+=,.@-]{2,64})."""


def source_context(d: FleetDeployments) -> dict[str, Any]:
    """`sourceContext` (schema `types["pulumiservice:index:DeploymentSettingsSourceContext"]`, its `git`:
    `DeploymentSettingsGitSource` `repoUrl`, `branch`, `repoDir`). No `gitAuth`: no credentials in the settings."""
    return {"git": {"repoUrl": d.repository, "branch": d.branch, "repoDir": d.directory}}


def session_name(stack: str) -> str:
    """The assume-role session name of a stack's deployments (`AWSOIDCConfiguration.sessionName`, required)."""
    return SESSION_NAME.sub("-", f"gpuplane-{stack}")[:64]


def oidc(d: FleetDeployments, stack: str) -> dict[str, Any]:
    """`operationContext.oidc` (schema `types["pulumiservice:index:OperationContextOIDC"]`): the fleet's cloud only,
    `aws` (`AWSOIDCConfiguration`: `roleARN`, `sessionName` required, `duration`) or `gcp` (`GCPOIDCConfiguration`:
    `projectId` (the project's number), `workloadPoolId`, `providerId`, `serviceAccount`, all required)."""
    if d.aws is not None:
        aws: dict[str, Any] = {"roleARN": d.aws.roleArn, "sessionName": session_name(stack)}
        if d.aws.sessionDuration:  # as the provider's Check stores it, so a refresh finds no diff
            aws["duration"] = go_duration(d.aws.sessionDuration)
        return {"aws": aws}
    assert d.gcp is not None, "the config requires the OIDC section of the fleet's cloud"
    return {
        "gcp": {
            "projectId": d.gcp.projectNumber,
            "workloadPoolId": d.gcp.workloadPool,
            "providerId": d.gcp.provider,
            "serviceAccount": d.gcp.serviceAccount,
        }
    }


def settings_inputs(d: FleetDeployments, project: str, stack: str) -> dict[str, Any]:
    """A region stack's `DeploymentSettings` inputs (schema `resources["pulumiservice:index:DeploymentSettings"]`
    `inputProperties`; `organization`, `project`, `stack` required). `operationContext` holds the OIDC settings only:
    no `preRunCommands`, no `environmentVariables` (no keys in the settings); the stack's config is its
    `Pulumi.<stack>.yaml` in the repository."""
    return {
        "organization": d.organization,
        "project": project,
        "stack": stack,
        "sourceContext": source_context(d),
        "operationContext": {"oidc": oidc(d, stack)},
    }


def drift_inputs(d: FleetDeployments, project: str, stack: str) -> dict[str, Any] | None:
    """A region stack's `DriftSchedule` inputs (schema `resources["pulumiservice:index:DriftSchedule"]`
    `inputProperties`: `organization`, `project`, `stack`, `scheduleCron` required, `autoRemediate`), or None
    without a `schedule`."""
    if d.schedule is None:
        return None
    return {
        "organization": d.organization,
        "project": project,
        "stack": stack,
        "scheduleCron": d.schedule,
        "autoRemediate": d.remediate,
    }


def snake(value: Any) -> Any:
    """The Python SDK's argument names for schema (camelCase) keys, nested (`roleARN` -> `role_arn`); the SDK
    registers them under the schema's names again."""
    if isinstance(value, dict):
        return {re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", k).lower(): snake(v) for k, v in value.items()}
    return value


def deployment_resources(
    name: str, cfg: StackConfig, project: str, stacks: Mapping[str, str], opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """Per region stack (`stacks`: region -> stack name, e.g. from `gpuplane.stack.parts.part_name`): its
    `DeploymentSettings` `{name}-{region}-deployment-settings` and, with a `schedule`, its `DriftSchedule`
    `{name}-{region}-drift-schedule` (after the settings: a drift run is a deployment). Nothing without
    `fleet.deployments`. `opts` (its parent, providers) applies to every one."""
    d = cfg.fleet.deployments if cfg.fleet is not None else None
    if d is None:
        return []
    out: list[pulumi.Resource] = []
    for region, stack in stacks.items():
        settings = pulumiservice.DeploymentSettings(
            f"{name}-{region}-deployment-settings", opts=opts, **snake(settings_inputs(d, project, stack))
        )
        out.append(settings)
        drift = drift_inputs(d, project, stack)
        if drift is not None:
            after = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[settings]))
            out.append(pulumiservice.DriftSchedule(f"{name}-{region}-drift-schedule", opts=after, **snake(drift)))
    return out
