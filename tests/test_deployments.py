"""The region stacks' Pulumi Deployments settings as code (`gpuplane:fleet.deployments`, `gpuplane.fleet.deployments`):
every planned pulumi-pulumiservice resource's inputs validate against the provider's published schema
(tests/schemas/pulumiservice-1.5.0.json, an excerpt), credentials are the fleet's cloud's OIDC and never static keys,
the config refuses bad values by key, and the function plans offline in a user's program."""

from __future__ import annotations

import copy
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pulumi
import pulumi_pulumiservice as pulumiservice
import pytest

from gpuplane import testing
from gpuplane.config import ConfigError, StackConfig, parse_flat
from gpuplane.config.deployments import cron_problem, go_duration
from gpuplane.fleet.deployments import deployment_resources, drift_inputs, settings_inputs
from gpuplane.plan import Plan, load
from gpuplane.plan.stackfile import StackFile
from gpuplane.stack.parts import part_name

from .conftest import ROOT

SCHEMA: dict[str, Any] = json.loads((Path(__file__).parent / "schemas" / "pulumiservice-1.5.0.json").read_text())
FLEETS = ("gcp-fleet", "aws-fleet")
OIDC: dict[str, dict[str, Any]] = {
    "gcp-fleet": {
        "gcp": {
            "projectNumber": "123456789012",
            "workloadPool": "pulumi-deployments",
            "provider": "pulumi-cloud",
            "serviceAccount": "pulumi-deployments@acme-ml-prod.iam.gserviceaccount.com",
        }
    },
    "aws-fleet": {"aws": {"roleArn": "arn:aws:iam::123456789012:role/pulumi-deployments", "sessionDuration": "90m"}},
}
BASE = {"organization": "acme", "repository": "https://github.com/acme/gpu-platform.git", "directory": "infra/gpu"}
STATIC_KEYS = re.compile(r"(?i)accessKey|secretKey|secretAccessKey|sessionToken|password|privateKey|credentials|token")


def stack_file(fleet: str, deployments: dict[str, Any] | None) -> StackFile:
    sf = load(fleet, ROOT)
    config = copy.deepcopy(sf.config)
    if deployments is not None:
        config["gpuplane:fleet"]["deployments"] = deployments
    return StackFile(project=sf.project, stack=sf.stack, config=config)


def config_of(fleet: str, **changes: Any) -> StackConfig:
    return parse_flat(stack_file(fleet, {**BASE, **OIDC[fleet], **changes}).flat_config())


def plan_central(fleet: str, cfg: StackConfig) -> tuple[Plan, list[pulumi.Resource]]:
    """What the central stack's program does with the config: the settings of every region stack, under a
    component of its own."""
    assert cfg.fleet is not None
    made: list[pulumi.Resource] = []
    with testing.offline(project="gpuplane", stack=part_name(fleet, "central")) as plan:
        central = pulumi.ComponentResource("gpuplane:fleet:Central", cfg.cluster.name)
        stacks = {r.region: part_name(fleet, r.region) for r in cfg.fleet.regions}
        made = deployment_resources(
            cfg.cluster.name, cfg, pulumi.get_project(), stacks, pulumi.ResourceOptions(parent=central)
        )
        pulumi.export("ids", pulumi.Output.all(*(r.id for r in made)))
        drift = [r for r in made if isinstance(r, pulumiservice.DriftSchedule)]
        pulumi.export("scheduleIds", pulumi.Output.all(*(r.schedule_id for r in drift)))
    return plan, made


def pulumiservice_resources(plan: Plan) -> list[Any]:
    return [r for r in plan.resources if r.type.startswith("pulumiservice:")]


# ---- a small validator of Pulumi package schema properties (pulumi/pulumi pkg/codegen/schema) ----


def problems(value: Any, spec: dict[str, Any], where: str) -> list[str]:
    """What in `value` the schema property `spec` refuses: unknown or missing properties, wrong types, values
    outside an enum type's values."""
    if "$ref" in spec:
        ref = spec["$ref"].removeprefix("#/types/")
        assert ref in SCHEMA["types"], f"{where}: the excerpt lacks {ref}"
        return problems(value, SCHEMA["types"][ref], where)
    if "enum" in spec:
        allowed = [e["value"] for e in spec["enum"]]
        return [] if value in allowed else [f"{where}: {value!r} not one of {allowed}"]
    kind = spec.get("type")
    if kind == "object" and "properties" in spec:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        out = [f"{where}.{k}: unknown property" for k in value if k not in spec["properties"]]
        out += [f"{where}.{k}: required" for k in spec.get("required", []) if k not in value]
        for k, v in value.items():
            if k in spec["properties"]:
                out += problems(v, spec["properties"][k], f"{where}.{k}")
        return out
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{where}: not a map"]
        return [p for k, v in value.items() for p in problems(v, spec.get("additionalProperties", {}), f"{where}.{k}")]
    if kind == "array":
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [p for i, v in enumerate(value) for p in problems(v, spec.get("items", {}), f"{where}[{i}]")]
    python = {"string": str, "boolean": bool, "integer": int, "number": (int, float)}.get(str(kind))
    if python is not None and not isinstance(value, python):
        return [f"{where}: {value!r} is not a {kind}"]
    return []


def resource_problems(type_: str, inputs: dict[str, Any]) -> list[str]:
    res = SCHEMA["resources"][type_]
    spec = {"type": "object", "properties": res["inputProperties"], "required": res.get("requiredInputs", [])}
    return problems(inputs, spec, type_)


def test_the_validator_refuses_what_the_schema_refuses() -> None:
    """The validator itself: an unknown key, a missing required input, a wrong type and an unknown enum value."""
    good = {"organization": "o", "project": "p", "stack": "s", "scheduleCron": "0 * * * *"}
    assert resource_problems("pulumiservice:index:DriftSchedule", good) == []
    assert resource_problems("pulumiservice:index:DriftSchedule", {**good, "cron": "x"}) == [
        "pulumiservice:index:DriftSchedule.cron: unknown property"
    ]
    missing = {k: v for k, v in good.items() if k != "scheduleCron"}
    assert resource_problems("pulumiservice:index:DriftSchedule", missing) == [
        "pulumiservice:index:DriftSchedule.scheduleCron: required"
    ]
    wrong = {**good, "autoRemediate": "yes"}
    assert resource_problems("pulumiservice:index:DriftSchedule", wrong) != []
    aws = {"organization": "o", "project": "p", "stack": "s", "operationContext": {"oidc": {"aws": {"roleARN": "r"}}}}
    assert resource_problems("pulumiservice:index:DeploymentSettings", aws) == [
        "pulumiservice:index:DeploymentSettings.operationContext.oidc.aws.sessionName: required"
    ]
    assert problems("b", {"enum": [{"value": "a"}]}, "x") == ["x: 'b' not one of ['a']"]


def test_the_excerpt_is_what_the_installed_sdk_takes() -> None:
    """The stored excerpt names its source, and the installed pulumi_pulumiservice 1.5.0 SDK takes exactly its
    resources' input properties (snake_case), required ones without defaults."""
    source = SCHEMA["source"]
    assert source["repository"] == "pulumi/pulumi-pulumiservice" and re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert source["path"] == "provider/cmd/pulumi-resource-pulumiservice/schema.json"
    plugin = json.loads((Path(pulumiservice.__file__).parent / "pulumi-plugin.json").read_text())
    assert plugin["version"] == source["version"] == "1.5.0"

    def snake(name: str) -> str:
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()

    for type_, args in (
        ("pulumiservice:index:DeploymentSettings", pulumiservice.DeploymentSettingsArgs),
        ("pulumiservice:index:DriftSchedule", pulumiservice.DriftScheduleArgs),
        ("pulumiservice:index:Stack", pulumiservice.StackArgs),
    ):
        params = inspect.signature(args.__init__).parameters
        taken = {n for n in params if n not in ("__self__", "self")}
        res = SCHEMA["resources"][type_]
        assert taken == {snake(p) for p in res["inputProperties"]}, type_
        required = {n for n, p in params.items() if p.default is inspect.Parameter.empty and n in taken}
        assert required == {snake(p) for p in res["requiredInputs"]}, type_


@pytest.mark.parametrize("fleet", FLEETS)
def test_every_planned_resource_validates_against_the_schema(fleet: str) -> None:
    cfg = config_of(fleet, schedule="0 */6 * * *", remediate=True)
    plan, made = plan_central(fleet, cfg)
    planned = pulumiservice_resources(plan)
    assert cfg.fleet is not None and len(planned) == len(made) == 2 * len(cfg.fleet.regions)
    for r in planned:
        assert resource_problems(r.type, r.inputs) == [], r.name
    assert testing.check(plan) == []


@pytest.mark.parametrize("fleet", FLEETS)
def test_names_parents_and_the_drift_schedule_after_the_settings(fleet: str) -> None:
    cfg = config_of(fleet, schedule="30 2 * * MON-FRI")
    plan, _ = plan_central(fleet, cfg)
    assert cfg.fleet is not None
    (central,) = [r for r in plan.resources if r.type == "gpuplane:fleet:Central"]
    by_name = {r.name: r for r in pulumiservice_resources(plan)}
    expected = {
        f"{cfg.cluster.name}-{r.region}-{role}"
        for r in cfg.fleet.regions
        for role in ("deployment-settings", "drift-schedule")
    }
    assert set(by_name) == expected
    assert {r.parent for r in by_name.values()} == {central.urn}
    for region in (r.region for r in cfg.fleet.regions):
        settings = by_name[f"{cfg.cluster.name}-{region}-deployment-settings"]
        drift = by_name[f"{cfg.cluster.name}-{region}-drift-schedule"]
        assert settings.urn in drift.dependencies
        stack = part_name(fleet, region)
        assert settings.inputs == settings_inputs(cfg.fleet.deployments, "gpuplane", stack)  # type: ignore[arg-type]
        assert drift.inputs == drift_inputs(cfg.fleet.deployments, "gpuplane", stack)  # type: ignore[arg-type]
        assert settings.inputs["stack"] == stack and settings.inputs["organization"] == "acme"
        assert settings.inputs["sourceContext"] == {
            "git": {"repoUrl": BASE["repository"], "branch": "main", "repoDir": "infra/gpu"}
        }
        assert drift.inputs["scheduleCron"] == "30 2 * * MON-FRI" and drift.inputs["autoRemediate"] is False


@pytest.mark.parametrize("fleet", FLEETS)
def test_oidc_of_the_fleets_cloud_and_no_static_keys(fleet: str) -> None:
    cfg = config_of(fleet, schedule="0 0 * * *")
    plan, _ = plan_central(fleet, cfg)
    cloud = cfg.platform_spec.cloud

    def keys(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [k for k, v in value.items() for k in (k, *keys(v))]
        return [k for v in value for k in keys(v)] if isinstance(value, list) else []

    for r in pulumiservice_resources(plan):
        assert not [k for k in keys(r.inputs) if STATIC_KEYS.search(k)], r.name
        assert "AKIA" not in json.dumps(r.inputs) and "BEGIN" not in json.dumps(r.inputs)
        if r.type == "pulumiservice:index:DeploymentSettings":
            context = r.inputs["operationContext"]
            assert set(context) == {"oidc"}  # no preRunCommands, no environmentVariables
            assert set(context["oidc"]) == {cloud}
            assert not {"gitAuth", "github", "vcs", "executorContext"} & set(keys(r.inputs))
    settings = next(r for r in pulumiservice_resources(plan) if r.type.endswith("DeploymentSettings"))
    if cloud == "aws":
        aws = settings.inputs["operationContext"]["oidc"]["aws"]
        assert aws["roleARN"] == OIDC[fleet]["aws"]["roleArn"]
        assert aws["duration"] == "1h30m0s"  # the provider's Check normalizes `90m` so: no diff on refresh
        assert aws["sessionName"] == f"gpuplane-{settings.inputs['stack']}"
    else:
        gcp = settings.inputs["operationContext"]["oidc"]["gcp"]
        assert gcp == {
            "projectId": "123456789012",
            "workloadPoolId": "pulumi-deployments",
            "providerId": "pulumi-cloud",
            "serviceAccount": "pulumi-deployments@acme-ml-prod.iam.gserviceaccount.com",
        }


def test_the_mocks_answer_as_the_provider_does() -> None:
    """IDs as the provider makes them (`<org>/<project>/<stack>`, `.../drift/<scheduleId>`), and the scheduleId
    output the schema says a DriftSchedule has."""
    cfg = config_of("gcp-fleet", schedule="0 * * * *")
    plan, _ = plan_central("gcp-fleet", cfg)
    ids, schedule_ids = plan.outputs["ids"], plan.outputs["scheduleIds"]
    settings_ids = ids[0::2]
    assert settings_ids == [
        f"acme/gpuplane/{part_name('gcp-fleet', r)}" for r in ("us-central1", "us-east4", "europe-west4")
    ]
    assert ids[1::2] == [f"{s}/drift/{i}" for s, i in zip(settings_ids, schedule_ids, strict=True)]
    assert all(re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", i) for i in schedule_ids)


def test_nothing_without_deployments_and_no_drift_schedule_without_a_schedule() -> None:
    plain = parse_flat(stack_file("gcp-fleet", None).flat_config())
    plan, made = plan_central("gcp-fleet", plain)
    assert made == [] and pulumiservice_resources(plan) == []
    plan, made = plan_central("aws-fleet", config_of("aws-fleet"))
    assert {r.type for r in pulumiservice_resources(plan)} == {"pulumiservice:index:DeploymentSettings"}


def test_a_users_program_plans_the_settings_offline() -> None:
    """A user's own central program: the fleet config from its stack file, the settings beside its own
    resources, planned under `gpuplane.testing.offline` with the deploy simulator clean."""
    sf = stack_file("aws-fleet", {**BASE, **OIDC["aws-fleet"], "schedule": "0 4 * * SUN", "branch": "release"})
    with testing.offline(project="platform", stack="aws-fleet-central", config=sf.config) as plan:
        cfg = parse_flat({k: v for k, v in sf.flat_config().items()})
        assert cfg.fleet is not None
        stacks = {r.region: part_name("aws-fleet", r.region) for r in cfg.fleet.regions}
        made = deployment_resources("ml-fleet", cfg, pulumi.get_project(), stacks, pulumi.ResourceOptions())
        pulumi.export("settings", [r.urn for r in made])
    assert len(plan.outputs["settings"]) == 6
    planned = pulumiservice_resources(plan)
    assert {r.inputs["project"] for r in planned} == {"platform"}
    assert {r.inputs["stack"] for r in planned} == set(stacks.values())
    assert all(r.inputs["sourceContext"]["git"]["branch"] == "release" for r in planned if "sourceContext" in r.inputs)
    assert testing.check(plan) == []


# ---- the config: one test per error, each naming its key ----

K = "gpuplane:fleet.deployments"
ERRORS = [
    ("gcp-fleet", {"organization": "acme corp"}, f"{K}.organization", "Pulumi Cloud organization name"),
    ("gcp-fleet", {"repository": "git@github.com:acme/x.git"}, f"{K}.repository", "https:// git URL"),
    ("aws-fleet", {"branch": "-main"}, f"{K}.branch", "must be a git branch"),
    ("aws-fleet", {"directory": "../elsewhere"}, f"{K}.directory", "relative to the repository's root"),
    ("gcp-fleet", {"schedule": "0 * * *"}, f"{K}.schedule", "5 fields"),
    ("gcp-fleet", {"schedule": "61 * * * *"}, f"{K}.schedule", "minute field '61': '61' is not in 0-59"),
    ("aws-fleet", {"schedule": "*/0 * * * *"}, f"{K}.schedule", "is not a cron field"),
    ("aws-fleet", {"remediate": True}, f"{K}.remediate", "set `schedule` too"),
    ("aws-fleet", {"aws": None}, f"{K}.aws", "required for an EKS fleet"),
    ("gcp-fleet", {"gcp": None}, f"{K}.gcp", "required for a GKE fleet"),
    ("gcp-fleet", {"aws": OIDC["aws-fleet"]["aws"]}, f"{K}.aws", "applies to EKS fleets only"),
    ("aws-fleet", {"gcp": OIDC["gcp-fleet"]["gcp"]}, f"{K}.gcp", "applies to GKE fleets only"),
    ("aws-fleet", {"aws": {"roleArn": "arn:aws:iam::123:user/x"}}, f"{K}.aws.roleArn", "must be an IAM role ARN"),
    (
        "aws-fleet",
        {"aws": {"roleArn": OIDC["aws-fleet"]["aws"]["roleArn"], "sessionDuration": "13h"}},
        f"{K}.aws.sessionDuration",
        "outside AWS's session bounds",
    ),
    (
        "aws-fleet",
        {"aws": {"roleArn": OIDC["aws-fleet"]["aws"]["roleArn"], "sessionDuration": "1 hour"}},
        f"{K}.aws.sessionDuration",
        "XhYmZs",
    ),
    (
        "gcp-fleet",
        {"gcp": {**OIDC["gcp-fleet"]["gcp"], "projectNumber": "acme-ml-prod"}},
        f"{K}.gcp.projectNumber",
        "number",
    ),
    (
        "gcp-fleet",
        {"gcp": {**OIDC["gcp-fleet"]["gcp"], "workloadPool": "P"}},
        f"{K}.gcp.workloadPool",
        "pool or provider ID",
    ),
    (
        "gcp-fleet",
        {"gcp": {**OIDC["gcp-fleet"]["gcp"], "provider": "gcp provider"}},
        f"{K}.gcp.provider",
        "provider ID",
    ),
    (
        "gcp-fleet",
        {"gcp": {**OIDC["gcp-fleet"]["gcp"], "serviceAccount": "me@acme.com"}},
        f"{K}.gcp.serviceAccount",
        "email",
    ),
    ("gcp-fleet", {"accessKey": "AKIA0000"}, f"{K}.accessKey", "unknown key"),
]


@pytest.mark.parametrize(
    ("fleet", "change", "key", "fragment"),
    ERRORS,
    ids=[e[2].rsplit(".", 1)[-1] + f"-{i}" for i, e in enumerate(ERRORS)],
)
def test_a_bad_value_names_its_key(fleet: str, change: dict[str, Any], key: str, fragment: str) -> None:
    deployments = {k: v for k, v in {**BASE, **OIDC[fleet], **change}.items() if v is not None}
    with pytest.raises(ConfigError) as err:
        parse_flat(stack_file(fleet, deployments).flat_config())
    assert [k for k, _ in err.value.problems] == [key], err.value.problems
    assert fragment in err.value.problems[0][1], err.value.problems


def test_cron_and_durations() -> None:
    for good in ("0 * * * *", "*/15 0-6 1,15 JAN-JUN MON", "0 0 * * 7", "5 4 * * sun"):
        assert cron_problem(good) is None, good
    assert cron_problem("0 24 * * *") == "hour field '24': '24' is not in 0-23"
    assert cron_problem("@daily") is not None
    assert [go_duration(d) for d in ("1h", "90m", "45s", "1h0m30s", "12h")] == [
        "1h0m0s",
        "1h30m0s",
        "45s",
        "1h0m30s",
        "12h0m0s",
    ]
