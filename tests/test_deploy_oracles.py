"""Exact examples for the deploy simulator (plan/deploy), written from the upstream behaviour each rule models."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.config.model import StackConfig
from gpuplane.plan import Plan, PlannedResource
from gpuplane.plan.deploy import (
    DeployGraph,
    Violation,
    check_cluster_scoped,
    check_crds,
    check_job_awaits,
    check_kubernetes_names,
    check_kubernetes_providers,
    check_names,
    check_node_security_groups,
    crd_installers,
    go_duration,
    stated_crds,
)
from gpuplane.plan.deploy import _group as group_of
from gpuplane.plan.deploy import _needs as needs
from gpuplane.plan.deploy import _scope as scope
from gpuplane.plan.deploy import _security_group_kinds as security_group_kinds
from gpuplane.plan.mocks_aws import ec2_id, eks_cluster_security_group, pulumi_eks_cluster_security_group

P = "urn:pulumi:s::p::"
K8S = f"{P}pulumi:providers:kubernetes::k8s"
K8S_B = f"{P}pulumi:providers:kubernetes::k8s-b"
AWS = f"{P}pulumi:providers:aws::aws"


def urn(type_: str, name: str) -> str:
    return f"{P}{type_}::{name}"


def res(
    type_: str,
    name: str,
    inputs: dict[str, Any] | None = None,
    *,
    deps: tuple[str, ...] = (),
    provider: str | None = None,
    custom: bool = True,
    timeouts: dict[str, str] | None = None,
) -> PlannedResource:
    return PlannedResource(
        urn=urn(type_, name),
        type=type_,
        name=name,
        parent=None,
        custom=custom,
        inputs=inputs or {},
        provider=f"{provider}::id" if provider else None,
        dependencies=deps,
        custom_timeouts=timeouts or {},
    )


def graph(*resources: PlannedResource) -> DeployGraph:
    return DeployGraph(Plan(project="p", stack="s", resources=list(resources)))


# --- Go durations (Go `time.ParseDuration`: a sequence of decimal numbers, each with an optional fraction
# and a unit suffix; units are case-sensitive: "h", "m", "s" here; a number without a unit is an error) ---


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10m", 600.0),
        ("90s", 90.0),
        ("2h", 7200.0),
        ("1h5m", 3900.0),
        ("1h1m1s", 3661.0),
        ("1.5h", 5400.0),
        ("0.5m", 30.0),
        ("1s", 1.0),
        ("10", None),  # a number without unit
        ("", None),
        ("10M", None),  # units are case-sensitive
        ("10H", None),
        ("10S", None),
        ("10m ", None),  # trailing text
        ("x10m", None),
        ("10mjunk", None),
        ("10d", None),  # Go has no day unit
    ],
)
def test_go_duration(text: str, seconds: float | None) -> None:
    assert go_duration(text) == seconds


# --- Job awaits: pulumi-kubernetes provider/pkg/await/job.go waits DefaultJobTimeoutMins = 10 for a Job
# unless customTimeouts.create is set; annotation `pulumi.com/skipAwait: "true"` turns the wait off. ---

JOB = "kubernetes:batch/v1:Job"
JOB_FIX = "give the Job customTimeouts (create and update) beyond its activeDeadlineSeconds, or skipAwait"


def job(name: str, deadline: object, timeouts: dict[str, str] | None = None, **meta: Any) -> PlannedResource:
    spec = {} if deadline is None else {"activeDeadlineSeconds": deadline}
    return res(JOB, name, {"metadata": meta, "spec": spec}, provider=K8S, timeouts=timeouts)


def job_violation(name: str, wait: str, given: str, deadline: object) -> Violation:
    return Violation(
        "job-awaited-to-its-deadline",
        urn(JOB, name),
        f"pulumi up waits {wait} s for {name} (customTimeouts.create {given}), but the Job may run {deadline} s "
        "(activeDeadlineSeconds): the update fails while it still runs",
        JOB_FIX,
    )


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (job("j", 900), [job_violation("j", "600", "unset: 10m", 900)]),
        (job("j", 600), []),  # waits exactly as long as the Job may run
        (job("j", 601), [job_violation("j", "600", "unset: 10m", 601)]),
        (job("j", 3600, {"create": "1h"}), []),
        (job("j", 3601, {"create": "1h"}), [job_violation("j", "3600", "1h", 3601)]),
        (job("j", 1500, {"create": "20m"}), [job_violation("j", "1200", "20m", 1500)]),
        (job("j", 1500, {"create": "90s"}), [job_violation("j", "90", "90s", 1500)]),
        (job("j", 1500.5, {"create": "25m"}), [job_violation("j", "1500", "25m", 1500.5)]),
        (job("j", 9000, {"create": "forever"}), []),  # not a Go duration: the rule cannot tell
        (job("j", 900, annotations={"pulumi.com/skipAwait": "true"}), []),
        (job("j", 900, annotations={"pulumi.com/skipAwait": "false"}), [job_violation("j", "600", "unset: 10m", 900)]),
        (job("j", 900, annotations={"other": "true"}), [job_violation("j", "600", "unset: 10m", 900)]),
        (job("j", None), []),  # no deadline: the Job may run forever by design
        (job("j", "900"), []),
        (res("kubernetes:batch/v1:CronJob", "j", {"spec": {"activeDeadlineSeconds": 900}}, provider=K8S), []),
    ],
)
def test_job_awaits(resource: PlannedResource, expected: list[Violation]) -> None:
    assert list(check_job_awaits(graph(resource))) == expected


def test_job_awaits_goes_on_after_a_skipped_job() -> None:
    g = graph(
        job("a", 900, annotations={"pulumi.com/skipAwait": "true"}),
        job("b", None),
        job("c", 900),
    )
    assert list(check_job_awaits(g)) == [job_violation("c", "600", "unset: 10m", 900)]
