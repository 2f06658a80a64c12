"""Offline unit tests and plans for your own Pulumi program, with the mocks gpuplane's own plans use.

Pulumi's unit-test idiom (https://www.pulumi.com/docs/iac/guides/testing/unit/) sets mocks, imports the
program and checks its outputs in `@pulumi.runtime.test` functions. `set_mocks` is a drop-in for
`pulumi.runtime.set_mocks` whose mocks answer like the clouds would for AWS, pulumi-eks (remote components
included), GCP, Kubernetes and Helm, and for the invokes gpuplane and typical programs make:

    import pulumi
    import gpuplane.testing

    gpuplane.testing.set_mocks(project="my-gpus", stack="dev", config={"clusterName": "research"})
    import infra  # your program module: it registers its resources under the mocks

    @pulumi.runtime.test
    def test_gpu_pools_are_tainted():
        return infra.pools.node_pools[0].node_config.apply(lambda c: ...)

For the whole resource graph (what `gpuplane plan` prints), plan the program folder or run code in `offline`:

    plan = gpuplane.testing.plan_program("infra/", stack="dev")
    assert plan.by_type("gcp:container/nodePool:NodePool")
    assert gpuplane.testing.check(plan) == []   # the deploy simulator
    preview = gpuplane.testing.plan_program("infra/", mocks=gpuplane.testing.PreviewMocks())  # unknowns

    with gpuplane.testing.offline(project="my-gpus", config={"clusterName": "research"}) as plan:
        build_my_cluster()
    assert plan.by_type("eks:index:Cluster")

See docs/testing-your-program.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import settings as ps
from pulumi.runtime.stack import wait_for_rpcs
from pulumi.runtime.sync_await import _sync_await

from .plan import deploy
from .plan import project as _project
from .plan.deploy import Violation
from .plan.mocks import PlanMocks as Mocks
from .plan.mocks_preview import PreviewMocks
from .plan.runner import Plan, PlannedResource, RecordingMonitor, install, recorded
from .plan.stackfile import StackFile

__all__ = [
    "Mocks",
    "Plan",
    "PlannedResource",
    "PreviewMocks",
    "Session",
    "Violation",
    "check",
    "offline",
    "plan_program",
    "set_mocks",
]


@dataclass
class Session:
    """Mocks installed by `set_mocks`: the stack they answer for and the monitor recording registrations."""

    stack: StackFile
    monitor: RecordingMonitor

    def plan(self) -> Plan:
        """Wait for the registrations still in flight and return everything registered so far."""
        _sync_await(wait_for_rpcs())
        return recorded(self.stack, self.monitor)


def set_mocks(
    mocks: pulumi.runtime.Mocks | None = None,
    *,
    project: str = "project",
    stack: str = "stack",
    config: Mapping[str, Any] | None = None,
) -> Session:
    """Install fresh mocks (gpuplane's `Mocks()` unless given) and the stack's config, like
    `pulumi.runtime.set_mocks(mocks, project=..., stack=..., preview=False)`.

    `config` maps keys to values as a stack file's `config:` does; keys without a namespace belong to
    `project`, structured values arrive as JSON (`pulumi.Config().require_object`), and `{"secure": ...}`
    values are secrets that read as `[secret]`. Unlike Pulumi's stock `MockMonitor`, resource references
    are turned off as for older engines, so pulumi-eks's remote components resolve (the stock monitor fails
    on them with `TypeError: sequence item 1: expected str instance, NoneType found`).
    """
    namespaced = {(k if ":" in k else f"{project}:{k}"): v for k, v in (config or {}).items()}
    stack_file = StackFile(project=project, stack=stack, config=namespaced)
    monitor = install(stack_file, mocks)
    ps.SETTINGS.rpc_manager.clear()
    ps.SETTINGS.outputs.clear()
    return Session(stack_file, monitor)


@contextlib.contextmanager
def offline(
    *,
    project: str = "project",
    stack: str = "stack",
    config: Mapping[str, Any] | None = None,
    mocks: pulumi.runtime.Mocks | None = None,
) -> Iterator[Plan]:
    """Run the `with` block under fresh mocks; the yielded plan holds its resources and stack outputs
    once the block ends. Arguments as for `set_mocks`."""
    session = set_mocks(mocks, project=project, stack=stack, config=config)
    result = Plan(project=project, stack=stack)
    yield result
    done = session.plan()
    result.resources[:] = done.resources
    result.outputs.update(done.outputs)
    result.registered_outputs.update(done.registered_outputs)  # components' outputs, which deploy checks read


def plan_program(
    folder: str | Path,
    stack: str | None = None,
    config: Mapping[str, Any] | None = None,
    mocks: pulumi.runtime.Mocks | None = None,
) -> Plan:
    """Run a Pulumi Python program folder (`Pulumi.yaml` + `__main__.py`) under fresh mocks, as
    `gpuplane plan --program FOLDER --stack STACK` does. `stack` is a stack file path or a stack name in the
    project's stack folder (default: its only stack, else no config); `config` adds or overrides keys."""
    proj = _project.load_project(folder)
    return _project.run(proj, _project.stack_for(proj, stack, config), mocks)


def check(plan: Plan, existing_crds: Collection[str] = ()) -> list[Violation]:
    """The deploy simulator's violations for a plan (empty when a first `pulumi up` would succeed), given
    the API groups whose CRDs the cluster already has (e.g. `{"monitoring.coreos.com"}`) besides those the
    plan's stack file states (`gpuplane:existingCrds`, as `gpuplane plan --program` reads them)."""
    return deploy.check(plan, {*existing_crds, *plan.existing_crds})
