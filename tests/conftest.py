"""Shared test helpers.

Plans: every plan runs the program under newly installed mocks (`plan_stack`). A test session plans each
distinct stack config once (`cached_plan`, keyed by project, stack name and the whole config; its
pytest-xdist workers share the plans) and hands each test its own copy, so no test sees another's changes
and none depends on test order.
"""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import importlib.util
import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import hypothesis
import pytest
import yaml

from gpuplane.plan import Plan, load, plan_stack, stack_names
from gpuplane.plan.cloud import Cloud
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.stackfile import StackFile

from .engines import unavailable
from .mutation_stats import MUTANT, credit, credit_fixtures, fixture_setup, hits_of, isolated, replayed

RANDOMIZE = os.environ.get("GPUPLANE_RANDOMIZE") == "1"
"""benchmarks/property_bench.py: the same properties randomized, with GPUPLANE_EXAMPLES_SCALE times the examples."""
hypothesis.settings.register_profile("suite", derandomize=True, database=None, deadline=None)
hypothesis.settings.register_profile("explore", derandomize=False, database=None, deadline=None)
hypothesis.settings.load_profile("explore" if RANDOMIZE else "suite")


def examples(n: int) -> int:
    """A property's example count: `n` in the suite (derandomized, the same examples every run), scaled by
    GPUPLANE_EXAMPLES_SCALE in the randomized benchmark."""
    return n * int(os.environ.get("GPUPLANE_EXAMPLES_SCALE", "1"))


T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
STACKS = stack_names(ROOT)
FLEETS = [
    s
    for s in STACKS
    if "gpuplane:fleet" in yaml.safe_load((ROOT / "stacks" / f"Pulumi.{s}.yaml").read_text())["config"]
]


def _cloud_of(stack: str) -> str:
    from gpuplane.catalog import PLATFORMS

    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    return PLATFORMS[config["gpuplane:platform"]].cloud


PINNED_MINOR = "1.35"
"""The Kubernetes minor the shipped EKS stacks pin; the GKE stacks follow their release channel (REGULAR)."""


def schema_version(stack: str) -> str:
    """The Kubernetes OpenAPI version to validate a stack's objects against: the minor its cluster pins, else
    PINNED_MINOR."""
    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    return f"{config['gpuplane:cluster'].get('kubernetesVersion', PINNED_MINOR)}.0"


GCP_STACKS = [s for s in STACKS if _cloud_of(s) == "gcp"]
AWS_STACKS = [s for s in STACKS if _cloud_of(s) == "aws"]
"""Shipped stacks per cloud: a check of one cloud's resources is generated for that cloud's stacks only."""
SINGLE = [s for s in STACKS if s not in FLEETS]
"""Single-cluster stacks (fleets are checked per region in test_fleet.py)."""


def reference_dir() -> Path | None:
    """`../shared/reference` (published CRDs and chart values) when this checkout has it."""
    env = os.environ.get("GPUPLANE_REFERENCE")
    path = Path(env).resolve() if env else ROOT.parent / "shared" / "reference"
    return path if path.is_dir() else None


def need_reference() -> Path:
    """The reference folder, or a clear skip (a failure when GPUPLANE_REQUIRE_REFERENCE=1)."""
    ref = reference_dir()
    if ref is None:
        unavailable(
            "../shared/reference is absent (published CRD files and chart values: unknown fields, CEL rules, values"
            " keys; tests/test_crd_models.py checks CRD structure without it, see docs/testing.md); set"
            " GPUPLANE_REFERENCE to check against it",
            required_by="GPUPLANE_REQUIRE_REFERENCE",
        )
    return ref


def stack_with(base: str, **overrides: Any) -> StackFile:
    """A copy of a shipped stack with some `gpuplane:` keys replaced (values are plain data; None drops
    the key). Replaced `gpuPools` take the autoscaled Deployments on pools that are gone with them, unless
    `autoscaling` is given too."""
    sf = load(base, ROOT)
    config = dict(sf.config)
    for key, value in overrides.items():
        if value is None:
            config.pop(f"gpuplane:{key}", None)
        else:
            config[f"gpuplane:{key}"] = value
    if "gpuPools" in overrides and "autoscaling" not in overrides:
        kept = {p["name"] for p in config.get("gpuplane:gpuPools") or []}
        for gone in {p["name"] for p in sf.config.get("gpuplane:gpuPools") or []} - kept:
            config = without_pool({**config, "gpuplane:gpuPools": config.get("gpuplane:gpuPools") or []}, gone)
    return StackFile(project=sf.project, stack=f"{sf.stack}-test", config=config)


def with_checks(base: str) -> StackFile:
    """A shipped stack with its post-deploy checks on: the smoke test added, unless the stack already runs
    `gpuplane:validation` (which includes it; the two together are refused)."""
    if "gpuplane:validation" in load(base, ROOT).config:
        return load(base, ROOT)
    return stack_with(base, smokeTest={"enabled": True})


def without_pool(config: dict[str, Any], gone: str) -> dict[str, Any]:
    """A stack's `config:` without pool `gone`, and without its Kueue quotas and the autoscaled Deployments on it
    (a quota or a Deployment on a pool that is gone is refused)."""
    out = copy.deepcopy(config)
    out["gpuplane:gpuPools"] = [p for p in out["gpuplane:gpuPools"] if p["name"] != gone]
    for team in (out.get("gpuplane:queues") or {}).get("teams", []):
        team["quota"].pop(gone, None)
    scaling = out.get("gpuplane:autoscaling")
    if scaling:
        kept = [w for w in scaling["workloads"] if (w.get("deployment") or {}).get("pool") != gone]
        if kept:
            scaling["workloads"] = kept
        else:
            del out["gpuplane:autoscaling"]
    return out


def on_bottlerocket(stack: str) -> StackFile:
    """A shipped EKS stack on Bottlerocket (separate OS and data volumes), sharing dropped as it needs AL2023."""
    pools = [
        {k: v for k, v in p.items() if k != "sharing"} | {"amiType": "BOTTLEROCKET_x86_64_NVIDIA"}
        for p in load(stack, ROOT).config["gpuplane:gpuPools"]
    ]
    return stack_with(stack, gpuPools=pools)


def golden(name: str, text: str) -> None:
    """Compare `text` with tests/golden/<name>; GPUPLANE_UPDATE_GOLDEN=1 rewrites the file."""
    path = GOLDEN / name
    if os.environ.get("GPUPLANE_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"missing golden file {path}: write it with GPUPLANE_UPDATE_GOLDEN=1 and review it"
    if text != path.read_text():
        pytest.fail(golden_diff(name, path.read_text(), text), pytrace=False)


def golden_diff(name: str, old: str, new: str, context: int = 3) -> str:
    """The failure of a golden comparison: the unified diff, and what a reviewer must decide."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"golden/{name}", "rendered now", n=context
    )
    return (
        f"{name}: the rendered artefact differs from its reviewed golden file. Each changed line below is a change "
        "a live cluster would see: review it as a change to the product (is it intended? does the CHANGELOG say "
        "so?). A golden file is not an oracle to regenerate until green.\n\n" + "".join(lines)
    )


def to_yaml(data: Any) -> str:
    return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))


_PLANS: dict[str, bytes | Plan] = {}
"""Plans by config (`cached_plan`). MUTANT is set by mutmut (benchmarks/mutation.py) in the process that runs the
tests against one mutant, which it forks from the process that ran them unmutated: plans and other session caches
are kept per mutant, so a mutant is never judged on a plan the unmutated code made. In its first, unmutated run
(`stats`) each cached value credits every test that uses it with the functions behind it
(tests/mutation_stats.py)."""


PLANS_SHARED = os.environ.get("GPUPLANE_PLANS_SHARED_BY_MUTANTS") == "1"
"""Set by benchmarks/mutation.py for a group whose functions planning never calls (it traces a plan of every
stack): a mutant there cannot change a plan, so every mutant reuses the plans made unmutated. Other session
caches stay per mutant."""


def session_cache(fn: Callable[..., T]) -> Callable[..., T]:
    """`functools.cache`, per mutant under mutation testing (see MUTANT)."""
    memo: dict[Any, T] = {}

    @functools.wraps(fn)
    def cached(*args: Any) -> T:
        return replayed(memo, (os.environ.get(MUTANT, ""), args), lambda: fn(*args))

    return cached


SHARED_PLANS = "GPUPLANE_SHARED_PLANS"
"""Set by the pytest-xdist controller (`pytest_configure`) for its workers: the folder where they share plans,
so each distinct stack config is planned once per session, whichever worker needs it first. The controller
removes it at the end (`pytest_sessionfinish`)."""


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # a worker (it inherits the variable), or no workers to share with
    os.environ[SHARED_PLANS] = tempfile.mkdtemp(prefix="gpuplane-plans-")


def _shared_plans() -> Path | None:
    folder = os.environ.get(SHARED_PLANS)
    return Path(folder) if folder and Path(folder).is_dir() else None


def cached_plan(stack: str | StackFile, cloud: Cloud | None = None) -> Plan:
    """The plan of a stack by name (from stacks/) or a StackFile: planned under fresh mocks the first time
    this session sees that exact config, then a copy of that plan (unpickled: no test sees another's changes;
    a ConfigError is never cached). Under pytest-xdist the workers share plans through `_shared_plans`
    (written atomically, so a worker reads a whole plan or none and plans it itself)."""
    sf = load(stack, ROOT) if isinstance(stack, str) else stack
    cloud = cloud or Cloud()
    live = {c: dict(groups) for c, groups in cloud.node_groups.items()}
    mutant = os.environ.get(MUTANT, "")
    identity = [sf.project, sf.stack, sf.config, live, "" if PLANS_SHARED and mutant != "fail" else mutant]
    key = hashlib.sha256(json.dumps(identity, sort_keys=True, default=repr).encode())
    name = key.hexdigest()
    if name in _PLANS:
        credit(("plan", name))
    else:
        with isolated(("plan", name)):
            _plan_into_cache(sf, cloud, name)
        if PLANS_SHARED and hits_of(("plan", name)):  # fail closed: this plan ran code a mutant may change
            raise RuntimeError(
                f"plans are shared by mutants, but planning {sf.stack} called {sorted(hits_of(('plan', name)))}"
            )
    stored = _PLANS[name]
    plan: Plan = copy.deepcopy(stored) if isinstance(stored, Plan) else pickle.loads(stored)
    plan.replan = lambda after: cached_plan(sf, after)  # as plan_stack's own: the stack against that state
    return plan


def _plan_into_cache(sf: StackFile, cloud: Cloud, name: str) -> None:
    """Plan `sf` against `cloud` into `_PLANS[name]`, or read another worker's plan of it."""
    shared = _shared_plans()
    path = shared / f"{name}.pickle" if shared else None
    if path is not None and path.is_file():
        _PLANS[name] = path.read_bytes()
        return
    from gpuplane.plan.project import stack_references

    planned = plan_stack(sf, PlanMocks(stack_references(sf), cloud=cloud))  # as plan_stack's own mocks, against cloud
    try:
        data = pickle.dumps(planned)
    except (AttributeError, TypeError, pickle.PicklingError):
        _PLANS[name] = planned  # registered transforms are local functions: this worker keeps it
        return
    _PLANS[name] = data
    if path is not None:
        part = path.with_suffix(f".{os.getpid()}.part")
        part.write_bytes(data)
        os.replace(part, path)


@pytest.fixture
def plan_of() -> Callable[[str | StackFile], Plan]:
    """Plan a stack by name (from stacks/) or a StackFile (`cached_plan`: this test gets its own copy)."""
    return cached_plan


def config_problems(raw: dict[str, Any]) -> dict[str, str]:
    """The `{key path: reason}` problems `parse_config` reports for `raw` (it must fail)."""
    from gpuplane.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    return dict(info.value.problems)


def with_first_pool(base: dict[str, Any], **pool: Any) -> dict[str, Any]:
    """A deep copy of `base` with the first GPU pool's keys updated."""
    import copy

    raw = copy.deepcopy(base)
    raw["gpuPools"][0].update(pool)
    return raw


def load_stack_config(stack: str) -> dict[str, Any]:
    """The raw `config:` map of a shipped stack."""
    return dict(yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"])


FIRST = (
    "tests/test_quality.py::test_mypy_strict_on_components",
    "tests/test_quality.py::",
    "tests/test_bad_input_property.py::",
    "tests/test_lifecycle.py::",
    "tests/test_replacement.py::",
    "tests/test_rightsize.py::",
    "tests/test_upgrade_safety.py::",
    "tests/test_autoscaling.py::",
    "tests/test_prometheus_e2e.py::",
    "tests/test_cost_prometheus.py::",
    "tests/test_testing.py::",
    "tests/test_prometheus_integrations.py::",
    "tests/test_stacks_and_cli.py::",
    "tests/test_clean_exit.py::",
    "tests/test_checkov.py::",
    "tests/test_monitoring_deploy.py::",
    "tests/test_deploy.py::",
    "tests/test_monitoring_graph.py::",
    "tests/test_alert_semantics.py::",
    "tests/test_preview.py::",
    "tests/test_provider.py::",
    "tests/test_kubernetes_objects.py::",
    "tests/test_diff.py::",
    "tests/test_config_space.py::",
    "tests/test_construct_path.py::",
    "tests/test_bad_input.py::",
    "tests/test_crd_models.py::",
    "tests/test_cost_rules.py::",
)
"""Tests started first, the longest files first (by their seconds in benchmarks/results/suite.json, which
`benchmarks/suite_bench.py` writes; the files not listed take a second or two each and follow in collection
order). pytest-xdist (`--dist loadfile --no-loadscope-reorder` in pyproject.toml) hands a worker the next
whole file in this order as it runs out, so the long files start early and the worker that finishes last ends
on a short one. mypy leads: minutes on a cold cache (a new clone, CI), seconds once `.mypy_cache/` is warm.
(Without `--no-loadscope-reorder`, pytest-xdist starts the files with the most tests first: the heavy files with
a few tests, mypy's among them, would start last.)"""


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any) -> Any:
    with fixture_setup(fixturedef):
        yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    credit_fixtures(item)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((i for i, prefix in enumerate(FIRST) if item.nodeid.startswith(prefix)), len(FIRST))

    items.sort(key=rank)  # stable: every other order is kept


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist, a worker hands what its tests recorded to the controller (`pytest_testnodedown`);
    the controller removes the workers' shared plans."""
    from .summary import LINES

    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["gpuplane_summary"] = json.dumps(LINES)
    elif os.environ.get(SHARED_PLANS):
        shutil.rmtree(os.environ.pop(SHARED_PLANS), ignore_errors=True)


if importlib.util.find_spec("xdist") is not None:  # the hook exists only with pytest-xdist

    def pytest_testnodedown(node: Any, error: Any) -> None:
        from .summary import LINES

        for section, lines in json.loads(getattr(node, "workeroutput", {}).get("gpuplane_summary", "{}")).items():
            LINES.setdefault(section, []).extend(lines)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print what tests recorded with `tests.summary.record` (counts CI should show)."""
    from .summary import LINES

    for section, lines in sorted(LINES.items()):
        terminalreporter.write_sep("-", f"gpuplane: {section}")
        for line in lines:
            terminalreporter.write_line(line)


def parse_python(source: str) -> Any:
    """`ast.parse`, tried a second time after CPython 3.11's spurious `SystemError: AST constructor recursion
    depth mismatch` (python/cpython gh-106905: the AST builder's error path skips its depth bookkeeping;
    it surfaced intermittently under pytest-xdist workers, as in pytest-dev/pytest #10763)."""
    import ast
    import gc

    try:
        return ast.parse(source)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
        gc.collect()
        return ast.parse(source)
