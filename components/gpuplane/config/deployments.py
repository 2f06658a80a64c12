"""Pulumi Deployments settings of a fleet's region stacks (`gpuplane:fleet.deployments`; docs/fleets.md, "Pulumi
Deployments as code"): the central stack declares them with the `pulumi-pulumiservice` provider, so Pulumi Cloud runs
the fleet while gpuplane only plans it. Credentials are OIDC only: a role (AWS) or a workload identity pool (GCP) that
trusts Pulumi Cloud's OIDC issuer, never static keys."""

from __future__ import annotations

import re

from pydantic import Field, ValidationInfo, field_validator

from .base import Model, context_value, shaped

ROLE_ARN = shaped(
    r"^arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:role/[A-Za-z0-9_+=,.@/-]{1,512}$",
    "must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/pulumi-deployments",
)
GO_DURATION = shaped(
    r"^([0-9]+h)?([0-9]+m)?([0-9]+s)?$",
    "must be a duration in XhYmZs form, e.g. 1h, 90m or 1h30m",
)
SERVICE_ACCOUNT = shaped(
    r"^[a-z0-9][-a-z0-9]{4,28}[a-z0-9]@[-a-z0-9.]+\.gserviceaccount\.com$",
    "must be a service account's email, e.g. pulumi-deployments@acme-ml-prod.iam.gserviceaccount.com",
)
POOL_ID = shaped(
    r"^[a-z0-9][-a-z0-9]{2,30}[a-z0-9]$",
    "must be a workload identity pool or provider ID: 4-32 lowercase letters, digits and '-'",
)
ORGANIZATION = shaped(
    r"^[A-Za-z0-9][-A-Za-z0-9_.]{0,99}$", "must be a Pulumi Cloud organization name, e.g. acme (letters, digits, -_.)"
)
REPOSITORY = shaped(
    r"^https://[^\s/@]+(/[^\s/]+)+$",
    "must be an https:// git URL, e.g. https://github.com/acme/platform.git (Pulumi Deployments clones it)",
)
BRANCH = shaped(r"^[A-Za-z0-9_][-A-Za-z0-9_./]*$", "must be a git branch, e.g. main or refs/heads/main")

CRON_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day-of-month", 1, 31, ()),
    ("month", 1, 12, ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")),
    ("day-of-week", 0, 7, ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")),
)
"""A five-field cron schedule as Pulumi Cloud's drift schedules take it (`scheduleCron`): name, range, names."""
_CRON_ITEM = re.compile(r"^(\*|(?P<a>\w+)(-(?P<b>\w+))?)(/(?P<step>[0-9]+))?$")


def cron_problem(text: str) -> str | None:
    """Why `text` is not a five-field cron schedule, or None."""
    fields = text.split()
    if len(fields) != len(CRON_FIELDS):
        return f"must be a cron schedule of 5 fields (minute hour day-of-month month day-of-week), not {len(fields)}"
    for value, (what, low, high, names) in zip(fields, CRON_FIELDS, strict=True):
        for item in value.split(","):
            m = _CRON_ITEM.match(item)
            if m is None or m["step"] == "0":
                return f"{what} field {value!r} is not a cron field (e.g. *, 5, 1-5, */15, 1,3)"
            for bound in (m["a"], m["b"]):
                if bound is None or bound.upper() in names:
                    continue
                if not bound.isdigit() or not low <= int(bound) <= high:
                    return f"{what} field {value!r}: {bound!r} is not in {low}-{high}"
    return None


def go_duration(text: str) -> str:
    """`90m` as the provider stores it after normalizing with Go's `time.ParseDuration(...).String()`
    (pulumi/pulumi-pulumiservice provider/pkg/resources/deployment_settings.go `normalizeDurationString`): `1h30m0s`."""
    seconds = seconds_of(text)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m}m{s}s" if h else f"{m}m{s}s" if m else f"{s}s"


def seconds_of(text: str) -> int:
    """Seconds in an XhYmZs duration."""
    unit = {"h": 3600, "m": 60, "s": 1}
    return sum(int(n) * unit[u] for n, u in re.findall(r"([0-9]+)([hms])", text))


class AwsOidc(Model):
    """AWS credentials of a deployment: Pulumi Cloud's OIDC token exchanged for a role's session."""

    roleArn: str = Field(pattern=ROLE_ARN)
    """The IAM role the deployments assume; its trust policy must trust Pulumi Cloud's OIDC issuer
    (api.pulumi.com/oidc) for your organization."""
    sessionDuration: str | None = Field(default=None, pattern=GO_DURATION)
    """How long the assumed session lasts (XhYmZs, 15m to 12h); unset, Pulumi Cloud's default."""

    @field_validator("sessionDuration")
    @classmethod
    def _session_bounds(cls, v: str | None) -> str | None:
        if v is not None and not 900 <= seconds_of(v) <= 43200:  # also an empty string: 0s
            raise ValueError(f"{v!r} is outside AWS's session bounds, 15m to 12h")
        return v


class GcpOidc(Model):
    """GCP credentials of a deployment: Pulumi Cloud's OIDC token exchanged through workload identity federation."""

    projectNumber: str = Field(
        pattern=shaped(r"^[0-9]{6,20}$", "must be the project's number (digits, e.g. 123456789012), not its ID")
    )
    """The numeric ID of the project holding the workload identity pool."""
    workloadPool: str = Field(pattern=POOL_ID)
    """The workload identity pool's ID."""
    provider: str = Field(pattern=POOL_ID)
    """The ID of the pool's OIDC provider for Pulumi Cloud."""
    serviceAccount: str = Field(pattern=SERVICE_ACCOUNT)
    """The service account the deployments impersonate."""


class FleetDeployments(Model):
    """Pulumi Deployments settings for every region stack, declared by the central stack (`pulumi-pulumiservice`)."""

    organization: str = Field(pattern=ORGANIZATION)
    """The Pulumi Cloud organization that holds the fleet's stacks."""
    repository: str = Field(pattern=REPOSITORY)
    """The git repository holding the Pulumi project and its `Pulumi.<stack>.yaml` files (`gpuplane fleet stacks
    --write`); public, or reachable by Pulumi Cloud without credentials in the settings."""
    branch: str = Field(default="main", pattern=BRANCH)
    """The branch deployments check out."""
    directory: str = "."
    """The project's folder in the repository (where `Pulumi.yaml` is), relative to its root."""
    schedule: str | None = None
    """Cron schedule (5 fields, UTC) of drift detection on every region stack; unset, no drift schedule."""
    remediate: bool = False
    """Whether drift detection also remediates (runs `pulumi up`) when it finds drift; needs `schedule`."""
    aws: AwsOidc | None = Field(default=None, validate_default=True)
    """OIDC credentials for an EKS fleet (required there, refused on GKE)."""
    gcp: GcpOidc | None = Field(default=None, validate_default=True)
    """OIDC credentials for a GKE fleet (required there, refused on EKS)."""

    @field_validator("directory")
    @classmethod
    def _relative(cls, v: str) -> str:
        parts = v.split("/")
        if v.startswith("/") or ".." in parts or any(c.isspace() for c in v) or not v:
            raise ValueError(f"{v!r} must be a folder relative to the repository's root, e.g. . or infra/gpu")
        return v

    @field_validator("schedule")
    @classmethod
    def _cron(cls, v: str | None) -> str | None:
        problem = None if v is None else cron_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("remediate")
    @classmethod
    def _needs_schedule(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("schedule") is None and "schedule" in info.data:
            raise ValueError("remediates what drift detection finds: set `schedule` too")
        return v

    @field_validator("aws", "gcp")
    @classmethod
    def _the_fleets_cloud(cls, v: object, info: ValidationInfo) -> object:
        cloud = context_value(info, "cloud")
        article, kind = {"aws": ("an", "EKS"), "gcp": ("a", "GKE")}[str(info.field_name)]
        if cloud is None:
            return v
        if v is None and cloud == info.field_name:
            raise ValueError(
                f"required for {article} {kind} fleet: deployments get the cloud's credentials through OIDC"
            )
        if v is not None and cloud != info.field_name:
            raise ValueError(f"applies to {kind} fleets only, not a {str(cloud).upper()} one")
        return v
