"""Planted-bug benchmark: mutmut over the modules that decide behaviour, each with the tests that hold it.

Not part of the README's test command (a run takes tens of minutes on two cores). Why mutmut: it mutates one
function at a time behind a trampoline and runs only the tests that call that function (from a stats run),
so thousands of mutants cost minutes, not the suite's time each (cosmic-ray and pytest-gremlins rerun the
chosen test command per mutant). Its limits, and how this script handles them:

- it mutates code inside functions only, and switches a mutant on when the function is called, so a function
  that runs once while its module is imported (building a table) never runs mutated. Such mutants are
  reported as `import-time`, found by tracing which functions a fresh import of the module calls, and kept out
  of the score; the tables they build have behavioural cases of their own (tests/replacement_cases.py).
- it runs the tests in a process forked from the one that ran them unmutated: tests/conftest.py keys its plan
  cache and `session_cache` by the mutant (MUTANT_UNDER_TEST), so no mutant is judged on an old plan. For a
  group whose functions planning never calls (traced over every shipped stack, `planning_functions`), the
  plans are shared by every mutant (they cannot differ), which makes the simulator and lifecycle groups
  several times faster; other cached values stay per mutant.
- it maps each function to the tests that called it in one unmutated run, so a plan, cached value or wide-scoped
  fixture computed once would be mapped to the first test that needed it only: tests/mutation_stats.py credits
  every test that reuses it.
- it imports the mutated copy from `mutants/src`; the scratch copy renames components/ to src/ (a symlink keeps
  the old path for the tests that read files there).

    .venv/bin/python benchmarks/mutation.py [--group NAME ...] [--json benchmarks/results/mutation.json]

Goldens are excluded (`-k "not golden"`): a snapshot that says "regenerate me" is not an oracle.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MUTMUT = Path(sys.executable).with_name("mutmut")

GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "replacement": (
        ["plan/replacement.py", "plan/replacement_table.py", "plan/replacement_kubernetes.py"],
        [
            "tests/test_replacement_cases.py",
            "tests/test_replacement.py",
            "tests/test_diff.py",
            "tests/test_transition_rules.py",
        ],
    ),
    "read-back and routine changes": (
        ["plan/deploy/readback.py", "plan/routine/__init__.py", "plan/routine/constraints.py"],
        ["tests/test_lifecycle.py", "tests/test_transition_rules.py"],
    ),
    "deploy simulator": (
        ["plan/deploy/__init__.py", "plan/deploy/rules.py", "plan/deploy/scheduling.py"],
        [
            "tests/test_deploy.py",
            "tests/test_deploy_oracles.py",
            "tests/test_monitoring_deploy.py",
            "tests/test_oracles.py",
            "tests/test_eks_readiness.py",
            # every other test that runs the simulator on a plan and reads its verdict
            "tests/test_autoscaling.py",
            "tests/test_cluster_objects.py",
            "tests/test_compute_class.py",
            "tests/test_config_space_clouds.py",
            "tests/test_crd_models.py",
            "tests/test_dra.py",
            "tests/test_examples.py",
            "tests/test_gke_network.py",
            "tests/test_health.py",
            "tests/test_kueue.py",
            "tests/test_lifecycle.py",
            "tests/test_live_size.py",
            "tests/test_mocks_engine.py",
            "tests/test_multinode.py",
            "tests/test_stacks_and_cli.py",
            "tests/test_testing.py",
            "tests/test_transition_rules.py",
        ],
    ),
    "alert rules": (
        ["monitoring/rules.py", "monitoring/labels.py"],
        [
            "tests/test_alert_semantics.py",
            "tests/test_promtool.py",
            "tests/test_rules_per_integration.py",
            "tests/test_kubernetes_objects.py",
            "tests/test_crd_models.py",
            "tests/test_monitoring_graph.py",
            "tests/test_health.py",
        ],
    ),
    "placement": (
        ["scheduling/placement.py"],
        [
            "tests/test_placement.py",
            "tests/test_oracles.py",
            "tests/test_multinode.py",
            "tests/test_compute_class.py",
            "tests/test_sharing.py",
            "tests/test_library.py",
            "tests/test_gke_auto.py",
            "tests/test_capacity_types.py",
            "tests/test_karpenter_overlay.py",
            "tests/test_dra.py",
            "tests/test_health.py",
            "tests/test_autoscaling.py",
        ],
    ),
    "fleet spread": (
        ["stack/fleet.py"],
        [
            "tests/test_fleet.py",
            "tests/test_config_errors.py",
            "tests/test_config_errors_aws.py",
            "tests/test_bad_input.py",
        ],
    ),
    "kueue quotas": (
        ["kueue/render.py"],
        [
            "tests/test_kueue.py",
            "tests/test_kueue_errors.py",
            "tests/test_library.py",
            "tests/test_config_errors.py",
            "tests/test_dra.py",
            "tests/test_transition_rules.py",
        ],
    ),
    "config rules": (
        ["config/pool.py", "config/capacity.py", "config/regions.py", "config/consumption.py"],
        [
            "tests/test_config_errors.py",
            "tests/test_config_errors_aws.py",
            "tests/test_bad_input.py",
            "tests/test_capacity_types.py",
            "tests/test_regions.py",
            "tests/test_config_oracles.py",
        ],
    ),
}
"""Group -> (modules under components/gpuplane/, tests that hold them)."""

EQUIVALENT: list[tuple[str, str, str]] = [
    (
        r"rules\.x_rules_file_yaml__",
        r"^\+.*(sort_keys=(None|True)|width=(None|121)|sort_keys=False, \)|\(\{\"groups\": groups\}, width=120\))",
        "YAML layout only (key order, line width): the same rules document; Prometheus and promtool read it alike",
    ),
    (
        r"kueue\.render\.x_chart_values__",
        r"^\+.*yamltext\.dump\(manager_config\(pods_ready_timeout, dra\), (sort_keys=(None|True))?\)$",
        "key order of the Kueue configuration YAML only: the controller decodes it into the same Configuration",
    ),
    (
        r"kueue\.render\.x_(chart_values|manager_config)__",
        r"^\+.*\bdra: bool = True[,)]",
        "the default of `dra`: its one caller (KueueQueues) always passes it, and chart_values passes it on",
    ),
    (
        r"readback\.x__auto_upgraded__",
        r'^\+.*\.get\("autoUpgrade", (None)?\) is not False$',
        "a missing autoUpgrade read as None instead of True: `None is not False` and `True is not False` are both "
        "true (GKE auto-upgrades unless it is false)",
    ),
    (
        r"routine\.x__first_problem__",
        r'^\+.*lines\[0\] if (\(lines\) or True|lines) else "(XXXX)?"\)$',
        "the fallback for an empty refusal: a ConfigError's message always has its count line, so `lines` is "
        "never empty there",
    ),
    (
        r"rules\.x_rule_groups__",
        r'^-\s+"0m",\n\+\s+None,$',
        "`for: 0m` written as `for: null`: Prometheus reads a null or missing `for` as 0 (fires at once either way)",
    ),
    (
        r"rules\.x_rule_groups__",
        r'^-(\s+\{"name": )"gpuplane-gpu-(alerts|utilization)"(, .*)\n'
        r'\+\1"(XXgpuplane-gpu-\2XX|GPUPLANE-GPU-[A-Z]+)"\3$',
        "a rule group's name: shown in Prometheus' UI, no effect on what fires or is recorded (the rules golden "
        "holds it)",
    ),
    (
        r"labels\.x.LabelModel.stored__",
        r"^\+\s+return self\.workload\.get\(label(, None|, )?\)$",
        "the fallback of `stored` for a label outside the workload map: every model maps all three workload labels "
        "and callers ask for those only",
    ),
    (
        r"scheduling\.placement\.x__gke_common__",
        r'^\+\s+if capacity_order\((None|"XXgke-standardXX"|"GKE-STANDARD"), pool\) == \("spot",\):$',
        "the platform `capacity_order` is asked about: it reads it only to see whether spot falls back to on-demand "
        "there (SPOT_FALLS_BACK: eks-karpenter, eks-automode); gke-standard is not one, nor is None or any other "
        "spelling, so every pool gets the same order",
    ),
    (
        r"scheduling\.placement\.x__karpenter__",
        r"^\+\s+assert gpu is not None or gpu\.aws is not None$",
        "an assertion that cannot fail on a valid pool: `_karpenter` runs for EKS Karpenter and Auto Mode only, "
        "after config validation (GpuPool._known_gpu) refused unknown GPUs and GPUs without an AWS offer",
    ),
    (
        r"scheduling\.placement\.x__gke_common__",
        r"^\+\s+assert gpu is not None or gpu\.gcp is not None$",
        "an assertion that cannot fail on a valid pool: `_gke_common` runs for GKE platforms only, after config "
        "validation (GpuPool._known_gpu) refused unknown GPUs and GPUs without a GCP offer; on an invalid pool "
        "both versions raise (AssertionError, or AttributeError on the next line)",
    ),
    (
        r"scheduling\.placement\.x_(placement|node_units)__",
        r"^\+.*gpu_nodes\(\w+\.platform, pool, pool_labels\(None, pool\b",
        "the cluster label of the node model `placement` / `node_units` build for themselves: they return the "
        "fragment or the capacity, and read only the GPU, MIG and accelerator labels (the cluster label in "
        "`gpu_nodes` output is held through stack_gpu_nodes)",
    ),
    (
        r"stack\.fleet\.x_allocate__",
        r"^-\s+problems \+= unknown_totals\(cfg\)\n\+\s+problems = unknown_totals\(cfg\)$",
        "`problems` is the empty list bound on the line before and held by nothing else: extending it with "
        "unknown_totals' fresh list, or binding that list, leaves the same problems in the same order",
    ),
    (
        r"stack\.fleet\.x_offered__",
        r"^\+\s+return gpu\.gcp is not None and region in GCP_ZONES\.get\(gpu\.gcp\.accelerator, (None)?\)$",
        "the default of GCP_ZONES.get is never used: the line before returns True for an accelerator GCP_ZONES "
        "lacks (A4X, A4X Max), and a GPU without a GCP offer stops at `gpu.gcp is not None`",
    ),
    (
        r"stack\.fleet\.x_offered__",
        r"^-\s+return False\n\+\s+return True$",
        "the two `return False` guards (no catalog GPU; on AWS, no AWS offer) are never reached on a validated "
        "config: GpuPool._known_gpu refuses an unknown GPU and one the stack's cloud does not offer, and "
        "rightsize's in_region asks only about gpus_on(cloud)",
    ),
    (
        r"stack\.fleet\.x_region_configs__",
        r"^\+\s+gpus = alloc\.get\(pool\.name, \{\}\)\.get\(r\.region, (None)?\)$",
        "`gpus` is read only under `if gpus:`: a region without a share gives None instead of 0, both falsy",
    ),
    (
        r"stack\.fleet\.x_region_configs__",
        r"^\+\s+gpus = alloc\.get\(pool\.name, (None)?\)\.get\(r\.region, 0\)$",
        "past `assert not problems` allocate has an entry for every pool (a fixed pool's is set before its regions, a "
        "totals pool gets its share or a problem), so the default is never used",
    ),
    (
        r"stack\.fleet\.x_where_offered__",
        r"^\+.*(if \(gpu and gpu\.gcp\) or True else|if gpu or gpu\.gcp else|GCP_ZONES\.get\(gpu\.gcp\.accelerator, "
        r"(None)?\)\))",
        "where_offered's only caller is region_problems, for a pool `offered` refused in a region the catalog lists: "
        "on GCP that pool's GPU is in the catalog with a GCP offer (GpuPool._known_gpu) whose accelerator GCP_ZONES "
        "has (`offered` is True for one it lacks), so the guard is always true and the default unused",
    ),
    (
        r"stack\.fleet\.x_where_offered__",
        r"^\+.*(if \(gpu and gpu\.aws\) or True else|if gpu or gpu\.aws else|AWS_REGIONS\.get\(f, (None)?\)\}\))",
        "where_offered's only caller is region_problems, after config validation: on AWS every pool's GPU is in "
        "the catalog with an AWS offer (GpuPool._known_gpu), so the guard is always true, and its instance families "
        "(instanceTypes are checked against the catalog's) all have an AWS_REGIONS entry "
        "(test_fleet.py test_every_catalog_aws_family_has_regions), so the default is unused",
    ),
    (
        r"stack\.fleet\.x_zone_problems__",
        r"^(\+\s+if gpu is None and gpu\.gcp is None:|-\s+continue\n\+\s+break)$",
        "the skip for a pool without a catalog GPU or a GCP offer is never taken: zone_problems reads GKE stacks "
        "only (cfg.gcp set), whose pools config validation (GpuPool._known_gpu) limits to catalog GPUs with a GCP "
        "offer",
    ),
    (
        r"stack\.fleet\.x.GpuFleet.__init____",
        r"^\+\s+self\.register_outputs\(None\)$",
        "the SDK sends `outputs or {}` (pulumi/runtime/resource.py register_resource_outputs): None and {} register "
        "the same empty outputs",
    ),
    (
        r"config\.capacity\.x__pool_problems__",
        r"^-\s+here \+= unsold_capacity\(cloud, at, pool, order\)\n"
        r"\+\s+here = unsold_capacity\(cloud, at, pool, order\)$",
        "`here` is still the empty list bound at the top (nothing appended yet) and held by nothing else: extending "
        "it with unsold_capacity's fresh list, or binding that list, leaves the same problems in the same order",
    ),
    (
        r"config\.capacity\.x__pool_problems__",
        r'^\+\s+what = "a spot-only class" if (order == \("spot",\) and set\(order\) == \{"spot"\}|'
        r'order == \("(XXspotXX|SPOT)",\) or set\(order\) == \{"spot"\}|order == \("spot",\) or set\(order\) == '
        r'\{"(XXspotXX|SPOT)"\}) else',
        "`set(order) == {'spot'}` holds exactly when `order == ('spot',)`: an order from `capacity` with a repeat was "
        "refused (and returned) by _order_problem before, and one from `spot` is ('spot',), ('spot', 'on-demand') or "
        "('on-demand',); either half alone, or both, picks the same wording",
    ),
    (
        r"config\.capacity\.x_eks_capacity_type__",
        r'^\+\s+order = capacity_order\((None|"XXeks-managedXX"|"EKS-MANAGED"), pool\)$',
        "capacity_order reads the platform only to ask whether it is in SPOT_FALLS_BACK (eks-karpenter, eks-automode); "
        "eks-managed is not, nor is None or any other spelling, so every pool gets the same order",
    ),
    (
        r"config\.capacity\.x_gcp_pool_zones__",
        r"^\+.*\.get\(region\) if (\(gpu and gpu\.gcp\) or True|gpu or gpu\.gcp) else None$",
        "the guard is always true where gcp_pool_zones runs: its callers (_zone_problems with cfg.gcp set, "
        "gcp.render.pool_zones) read GKE stacks only (a gcp section on an EKS platform is refused, and a bad gpuPools "
        "skips the layout checks), whose pools GpuPool._known_gpu limits to catalog GPUs with a GCP offer",
    ),
    (
        r"config\.capacity\.x_pool_machines__",
        r"^\+.*(default_machine\(pool\.gpusPerNode\) if \(gpu\.gcp\) or True else None\)|return \[found\] if "
        r"\(found\) or True else \[\])$",
        'on the GCP branch `found` is always a machine: pool_machines("gcp", ...) runs for GKE stacks only (the GKE '
        "checks, compute_class, nccl_fabric, the GKE health rows), whose pools have a GCP offer (GpuPool._known_gpu); "
        "an empty machineType is refused (_machine_carries_gpu), and every GPU count a GCP offer allows "
        "(GpuPool._count_offered) has a listed machine in the catalog, so default_machine never returns None there",
    ),
    (
        r"config\.consumption\.x_queued_run_duration_problems__",
        r"^\+\s+if len\(durations\) < 1:$",
        "with one duration every queued pool has first's maxRunDuration, so the list of pools that differ from it is "
        "empty: the early `return []` and the comprehension give the same nothing",
    ),
    (
        r"config\.consumption\.x_unsold_capacity__",
        r"^\+\s+no_blocks = \[i for i in pool_machines\(None, pool\)",
        'inside `if cloud == "aws"`: pool_machines branches only on `cloud == "gcp"`, so None takes the same AWS '
        'branch as "aws"',
    ),
    (
        r"config\.pool\.x__cloud__",
        r"^\+\s+return cloud if \(isinstance\(cloud, str\)\) or True else None$",
        "the validation context's `cloud` is the platform's cloud name or None (parse_config; no context gives None), "
        "so returning it as is gives the same str or None",
    ),
    (
        r"config\.regions\.x_known_region__",
        r"^\+\s+what = f\"\{ARTICLE\.get\(cloud, (None|'XXaXX'|'A')?\)\}",
        'the article\'s default is never used: known_region is called with "gcp" or "aws" (GcpConfig, AwsConfig), '
        "or for a fleet (FleetRegion) with the platform's cloud, both ARTICLE keys (a non-str cloud returns before "
        "the message)",
    ),
]
"""(mutant name pattern, pattern over the diff's -/+ lines, why the mutant changes no behaviour): survivors
matching both are listed as `equivalent` with the reason, not counted against the score."""


def equivalent(name: str, diff: str) -> str:
    changed = "\n".join(line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    for pattern, lines, why in EQUIVALENT:
        if re.search(pattern, name) and re.search(lines, changed, re.M):
            return why
    return ""


COPY = ["components", "stacks", "examples", "Pulumi.yaml", "__main__.py", "policy", "provider", "docs", "scripts"]


def scratch(group: str, modules: list[str], tests: list[str]) -> Path:
    """A copy of HEAD with components/ as src/ and mutmut's config for one group."""
    where = Path(tempfile.mkdtemp(prefix="gpuplane-mutation-"))
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    (where / "components").rename(where / "src")
    (where / "components").symlink_to("src")
    npm = ROOT / "tests" / "node" / "node_modules"  # the npm CRD validators (test_crd_models.py)
    if npm.is_dir():
        (where / "tests" / "node" / "node_modules").symlink_to(npm)
    # A git checkout of its own: some tests read git (`gpuplane diff --git`).
    git = ["git", "-c", "user.name=mutation", "-c", "user.email=mutation@localhost"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "scratch copy of HEAD"]):
        subprocess.run([*git, *args], cwd=where, check=True, capture_output=True)
    config = {
        "source_paths": ["src/gpuplane"],
        "also_copy": [*COPY, "benchmarks", "README.md", "CHANGELOG.md", "requirements.txt"],
        "only_mutate": [f"src/gpuplane/{m}" for m in modules],
        "pytest_add_cli_args": ["-n0", "-p", "no:cacheprovider", "-k", "not golden"],
        "pytest_add_cli_args_test_selection": tests,
        # mutmut stops a mutant's run after (estimate + constant) x 15 seconds of wall clock (and twice that of CPU).
        # The estimate is the covering tests' call time in the stats run, which leaves out cached work a mutant
        # redoes (a test that reused all 15 stacks' lifecycle outcomes is estimated at 1 ms): with a 1 s constant
        # those were stopped as "timeout" instead of judged. Timeouts are not counted as kills (`score`).
        "timeout_constant": 20.0,
        # Mutants fork from the process that ran the stats and clean tests, inheriting its caches (the shared plans).
        "process_isolation": "fork",
    }
    with (where / "pyproject.toml").open("a") as f:
        f.write("\n[tool.mutmut]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in config.items()))
    return where


def import_time_functions(module: str) -> set[str]:
    """Functions of `module` (gpuplane.x.y) that run while it is imported (tables built at import)."""
    sys.path.insert(0, str(ROOT / "components"))
    for name in [n for n in sys.modules if n == module]:
        del sys.modules[name]
    spec = importlib.util.find_spec(module)
    path = str(spec.origin if spec is not None else "")
    called: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == path:
            called.add(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        importlib.import_module(module)
    finally:
        sys.setprofile(None)
    return called - {"<module>"}


def planning_functions(modules: list[str]) -> set[tuple[str, str]]:
    """(file, function) of `modules` (paths under components/gpuplane/) that planning calls: every shipped
    stack planned once under the mocks, on a first `up` and against what it left, with calls traced. None:
    no mutant there can change a plan, and the tests' plan cache is shared by every mutant. The tests fail
    closed besides: in mutmut's stats run, a plan whose making called any mutated function stops the run
    (tests/conftest.py `cached_plan`), so a config this trace did not cover cannot share a wrong plan."""
    import threading

    sys.path.insert(0, str(ROOT / "components"))
    from gpuplane.plan import load, plan_stack, stack_names
    from gpuplane.plan.deploy.readback import cloud_after
    from gpuplane.plan.mocks import PlanMocks

    files = {str(ROOT / "components" / "gpuplane" / m) for m in modules}
    called: set[tuple[str, str]] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename in files:
            called.add((frame.f_code.co_filename, frame.f_code.co_name))

    for stack in stack_names(ROOT):
        first = plan_stack(load(stack, ROOT), PlanMocks())
        after = cloud_after(first)  # the group's own code, outside planning: not traced
        sys.setprofile(profile)
        threading.setprofile(profile)
        try:
            plan_stack(load(stack, ROOT), PlanMocks())
            plan_stack(load(stack, ROOT), PlanMocks(cloud=after))
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    return called


def function_of(mutant: str) -> tuple[str, str]:
    """(module, function) of a mutmut mutant name such as `gpuplane.plan.replacement.x_classify__mutmut_3`
    (methods are `xǁClassǁmethod`)."""
    stem = mutant.rsplit("__mutmut_", 1)[0]
    module, _, mangled = stem.rpartition(".")
    return module, mangled.split("ǁ")[-1].removeprefix("x_")


def run_group(group: str, keep: bool, budget: float | None = None) -> dict[str, Any]:
    """Run mutmut over one group in a scratch copy of HEAD and score it. With a `budget` (seconds), mutmut is
    stopped then: the mutants it did not reach are reported as `not run`, apart from the score."""
    modules, tests = GROUPS[group]
    where = scratch(group, modules, tests)
    env = group_env(modules)
    started = time.monotonic()
    process = subprocess.Popen(
        [str(MUTMUT), "run"],
        cwd=where,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        returncode: int | None = process.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        returncode = None
    result = score(group, where, env, seconds=time.monotonic() - started, budget_spent=returncode is None)
    result["mutmut_exit"] = returncode
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    result["commit"] = head.stdout.strip()  # the tree the scratch copy was made from
    if not keep:
        shutil.rmtree(where, ignore_errors=True)
    else:
        result["scratch"] = str(where)
    return result


def group_env(modules: list[str]) -> dict[str, str]:
    inherited = ("PYTHONPATH", "MUTANT_UNDER_TEST", "GPUPLANE_PLANS_SHARED_BY_MUTANTS", "GPUPLANE_SHARED_PLANS")
    env = {k: v for k, v in os.environ.items() if k not in (*inherited, "GPUPLANE_RANDOMIZE")}
    env["GPUPLANE_REQUIRE_ENGINES"] = "1"  # a missing promtool fails rather than making survivors
    if not planning_functions(modules):
        env["GPUPLANE_PLANS_SHARED_BY_MUTANTS"] = "1"
    # The scratch copy has no ../shared beside it: point the reference checks at this checkout's, or they
    # would skip and every mutant only they catch would survive.
    reference = Path(os.environ.get("GPUPLANE_REFERENCE", ROOT.parent / "shared" / "reference")).resolve()
    if reference.is_dir():
        env["GPUPLANE_REFERENCE"] = str(reference)
    return env


def score(group: str, where: Path, env: dict[str, str], seconds: float, budget_spent: bool) -> dict[str, Any]:
    """The group's result from mutmut's records in scratch copy `where`."""
    modules, tests = GROUPS[group]
    listing = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"], cwd=where, env=env, capture_output=True, text=True, check=False
    )
    if listing.returncode:  # e.g. a .meta file cut short by a stopped run: no mutant may drop out unseen
        raise SystemExit(f"mutmut results failed in {where}: {listing.stderr.strip()[-500:]}")
    results = listing.stdout
    statuses = dict(re.findall(r"^\s*(\S+__mutmut_\d+): (.+)$", results, re.M))
    at_import = {m: import_time_functions(m) for m in {function_of(n)[0] for n in statuses}}
    survivors = []
    counts: Counter[str] = Counter()
    for name, status in sorted(statuses.items()):
        module, function = function_of(name)
        if status != "killed" and function in at_import.get(module, set()):
            status = "import-time"  # runs while its module is imported, before mutmut switches a mutant on
        elif status == "not checked" and budget_spent:
            status = "not run"  # the time budget ran out before mutmut reached it
        if status not in ("killed", "import-time", "not run"):
            show = subprocess.run([str(MUTMUT), "show", name], cwd=where, env=env, capture_output=True, text=True)
            diff = show.stdout.split("\n", 1)[-1].strip()
            why = equivalent(name, diff) if status == "survived" else ""
            if why:
                status = "equivalent"
            survivors.append({"mutant": name, "status": status, "diff": diff, **({"equivalent": why} if why else {})})
        counts[status] += 1
    # Everything but import-time, equivalent and not-run mutants counts: "no tests", "suspicious", "segfault",
    # "not checked" and "timeout" (a deadline from an estimate, not a verdict) count against the score.
    scored = sum(n for status, n in counts.items() if status not in UNSCORED)
    killed, not_run = counts["killed"], counts["not run"]
    partial = (
        {
            "partial_score": round(killed / scored, 4) if scored else None,
            # mutmut runs the fastest mutants first, so the ones not reached are the expensive tail: the
            # whole group's score lies between these two.
            "bounds": [round(killed / (scored + not_run), 4), round((killed + not_run) / (scored + not_run), 4)],
        }
        if not_run
        else {}
    )
    return {
        "modules": modules,
        "tests": tests,
        "counts": dict(counts),
        "score": None if not_run else (round(killed / scored, 4) if scored else None),
        **partial,
        "seconds": round(seconds, 1),
        "reference": "GPUPLANE_REFERENCE" in env,
        "plans_shared": env.get("GPUPLANE_PLANS_SHARED_BY_MUTANTS") == "1",
        **({"not_run": counts["not run"]} if counts["not run"] else {}),
        "survivors": survivors,
    }


UNSCORED = ("import-time", "equivalent", "not run")
"""Statuses kept out of the score (each reported in `counts`)."""


def rescore(result: dict[str, Any]) -> dict[str, Any]:
    """A group's result with EQUIVALENT applied again to its survivors (after a reason is added, no rerun)."""
    counts: Counter[str] = Counter(result["counts"])
    for s in result["survivors"]:
        why = equivalent(s["mutant"], s["diff"]) if s["status"] == "survived" else ""
        if why:
            counts[s["status"]] -= 1
            counts["equivalent"] += 1
            s["status"], s["equivalent"] = "equivalent", why
    scored = sum(n for status, n in counts.items() if status not in UNSCORED)
    killed = counts["killed"]
    return {
        **result,
        "counts": {k: n for k, n in counts.items() if n},
        "score": round(killed / scored, 4) if scored else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="default: every group")
    parser.add_argument("--json", type=Path, help="write the results here (merged with the file's other groups)")
    parser.add_argument("--keep", action="store_true", help="keep each scratch copy (mutmut browse there)")
    parser.add_argument("--merge", type=Path, action="append", default=[], help="take these results' groups in")
    parser.add_argument("--budget", type=float, help="minutes per group; mutants not reached are reported as not run")
    parser.add_argument("--collect", type=Path, help="score the kept scratch copy of one --group (after a stopped run)")
    args = parser.parse_args()
    out: dict[str, Any] = json.loads(args.json.read_text()) if args.json and args.json.is_file() else {}
    if args.merge:  # results of runs elsewhere: rescored with today's EQUIVALENT, no mutmut run
        for path in args.merge:
            out.update({g: rescore(r) for g, r in json.loads(path.read_text()).items()})
        if args.json:
            args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return
    if args.collect:
        (group,) = args.group or [""]
        modules = GROUPS[group][0]
        out[group] = score(group, args.collect, group_env(modules), seconds=0.0, budget_spent=True)
        if args.json:
            args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        print(f"{group}: score {out[group]['score']} {out[group]['counts']}")
        return
    for group in args.group or list(GROUPS):
        out[group] = run_group(group, args.keep, args.budget * 60 if args.budget else None)
        r = out[group]
        print(f"{group}: score {r['score']} {r['counts']} in {r['seconds']} s", flush=True)
        if args.json:
            args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
