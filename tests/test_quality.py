"""Quality gates, run by the test command itself: ruff, mypy (strict on the `gpuplane` package), and a wheel that
installs and imports cleanly outside the source tree."""

from __future__ import annotations

import ast
import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, parse_python
from .engines import unavailable


def tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        unavailable(f"{name} is not installed in this environment (pip install -e '.[test]')")
    return path


def test_ruff() -> None:
    out = subprocess.run(
        [tool("ruff"), "check", "components", "tests", "scripts", "provider", "examples", "benchmarks", "policy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


@functools.cache
def mypy_run() -> dict[str, list[str]]:
    """One `mypy --strict` run (pyproject's settings) over the `gpuplane` package and every example program:
    the lines it printed that name a file, by file (the examples under their own paths).

    Every example is a `__main__` module, so one run cannot check them under their own names; each is checked
    as a copy named after its folder (`build/mypy-examples/example_<folder>.py`: a stable path, so mypy's cache
    serves the next run). One process loads the cloud SDKs' type information once, where a run per example
    loaded it five times (about 18 s of a warm suite)."""
    copies = ROOT / "build" / "mypy-examples"
    shutil.rmtree(copies, ignore_errors=True)
    copies.mkdir(parents=True)
    names: dict[str, str] = {}
    for program in sorted((ROOT / "examples").glob("*/__main__.py")):
        copy = copies / f"example_{program.parent.name.replace('-', '_')}.py"
        shutil.copyfile(program, copy)
        names[str(copy.relative_to(ROOT))] = str(program.relative_to(ROOT))
    assert names, "no example programs found"
    out = subprocess.run(
        [tool("mypy"), "components/gpuplane", *names], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    lines: dict[str, list[str]] = {}
    for line in (out.stdout + out.stderr).splitlines():
        path = line.split(":", 1)[0]
        if path.endswith(".py"):
            lines.setdefault(names.get(path, path), []).append(line)
    if out.returncode not in (0, 1) or (out.returncode == 1 and not lines):
        raise AssertionError(f"mypy did not run: exit {out.returncode}\n{out.stdout}{out.stderr}")
    return lines


def test_mypy_strict_on_components() -> None:
    """Every problem mypy reports outside the examples (the package, or anything it imports)."""
    problems = [line for path, found in mypy_run().items() if not path.startswith("examples/") for line in found]
    assert not problems, "\n".join(problems)


def test_mypy_strict_on_examples() -> None:
    """The examples are user programs: `mypy --strict` passes on them with gpuplane's types."""
    problems = [line for path, found in mypy_run().items() if path.startswith("examples/") for line in found]
    assert not problems, "\n".join(problems)


def test_wheel_installs_and_plans_outside_the_tree(tmp_path: Path) -> None:
    """The built wheel, installed alone into an empty target (its dependencies are this environment's, whose
    declarations `test_declared_dependencies_cover_every_import` checks), plans stacks and a user program."""
    dist, target = tmp_path / "dist", tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("gpuplane-*.whl")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert (target / "gpuplane" / "py.typed").is_file()
    assert not (target / "components").exists(), "the wheel must not install a top-level `components`"
    # A user's program of its own, in a folder of its own (a copy of an example), planned with the wheel's
    # gpuplane: its resources, and no simulator violation.
    program = tmp_path / "my-program"
    shutil.copytree(ROOT / "examples" / "eks-your-cluster", program)
    code = (
        "import gpuplane, sys; assert gpuplane.__file__.startswith(sys.argv[1]);"
        "from gpuplane.plan import load, plan_stack;"
        "[plan_stack(load(sys.argv[2] + f'/stacks/Pulumi.{s}.yaml')) for s in ('gcp-standard', 'aws-karpenter')];"
        "from gpuplane import testing; p = testing.plan_program(sys.argv[3]);"
        "types = {r.type for r in p.resources}; assert 'aws:eks/nodeGroup:NodeGroup' in types, types;"
        "assert testing.check(p) == [], testing.check(p)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(target), str(ROOT), str(program)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_declared_dependencies_cover_every_import() -> None:
    """The wheel check runs with this environment's packages, so check `dependencies` itself: every
    third-party module `gpuplane` imports must come from a declared distribution."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    declared = {
        d.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().lower()
        for d in [*project["dependencies"], *extras["gcp"], *extras["aws"], *extras["deployments"]]
    }
    module_of = {
        "pulumi": "pulumi",
        "pulumi_gcp": "pulumi-gcp",
        "pulumi_kubernetes": "pulumi-kubernetes",
        "pulumi_tls": "pulumi-tls",
        "pulumi_aws": "pulumi-aws",
        "pulumi_eks": "pulumi-eks",
        "pulumi_pulumiservice": "pulumi-pulumiservice",
        "pydantic": "pydantic",
        "pydantic_core": "pydantic",
        "yaml": "pyyaml",
        "google": "pulumi",
    }
    stdlib = set(sys.stdlib_module_names)
    imported: set[str] = set()
    importers: dict[str, set[str]] = {}
    files: dict[str, set[str]] = {}
    for path in (ROOT / "components").rglob("*.py"):
        here: set[str] = set()
        for node in ast.walk(parse_python(path.read_text())):
            if isinstance(node, ast.Import):
                here |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                here.add(node.module.split(".")[0])
        imported |= here
        for module in here:
            importers.setdefault(module, set()).add(path.relative_to(ROOT / "components").parts[1])
            files.setdefault(module, set()).add(path.relative_to(ROOT / "components").as_posix())
    # The extras' SDKs are imported only inside their subpackage (`gpuplane[gcp]` never needs pulumi_aws).
    assert importers.get("pulumi_gcp", set()) <= {"gcp"}, importers["pulumi_gcp"]
    assert importers.get("pulumi_aws", set()) | importers.get("pulumi_eks", set()) <= {"aws"}
    # `gpuplane[deployments]`'s SDK: in its one module, which nothing imports at the top of `gpuplane.fleet`
    assert files.get("pulumi_pulumiservice", set()) <= {"gpuplane/fleet/deployments.py"}, files["pulumi_pulumiservice"]
    third_party = imported - stdlib - {"gpuplane", "__future__"}
    unknown = third_party - set(module_of)
    assert not unknown, f"map these imports to distributions: {unknown}"
    assert {module_of[m] for m in third_party} <= declared


def test_every_property_is_derandomized_here_and_explored_in_the_benchmark() -> None:
    """The suite runs every Hypothesis property derandomized (profile "suite" in conftest: the same examples on
    every run, no example database), so no test sets that itself; benchmarks/property_bench.py runs each one
    randomized with more examples, so its list names every file with a property."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("property_bench", ROOT / "benchmarks" / "property_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    listed = {p.split("::")[0] for p in bench.PROPERTIES}
    with_properties = set()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        text = path.read_text()
        own = r"^\s*(derandomize|database)=|settings\(.*\b(derandomize|database)="
        assert not re.search(own, text, re.M), path.name
        if re.search(r"^\s*@given\(", text, re.M):
            with_properties.add(f"tests/{path.name}")
    assert with_properties == listed
