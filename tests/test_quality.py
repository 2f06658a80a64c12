"""Quality gates, run by the test command itself: ruff, mypy (strict on the `gpuplane` package), and a wheel that
installs and imports cleanly outside the source tree."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT
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


def test_mypy_strict_on_components() -> None:
    out = subprocess.run([tool("mypy")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_on_examples() -> None:
    """The examples are user programs: `mypy --strict` passes on them with gpuplane's types (one run per
    example, since every example is a `__main__` module)."""
    for program in sorted((ROOT / "examples").glob("*/__main__.py")):
        out = subprocess.run([tool("mypy"), str(program)], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, f"{program}: {out.stdout}{out.stderr}"


def test_wheel_installs_and_plans_outside_the_tree(tmp_path: Path) -> None:
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
    code = (
        "import gpuplane, sys; assert gpuplane.__file__.startswith(sys.argv[1]);"
        "from gpuplane.plan import load, plan_stack;"
        "[plan_stack(load(sys.argv[2] + f'/stacks/Pulumi.{s}.yaml')) for s in ('gcp-standard', 'aws-karpenter')]"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(target), str(ROOT)],
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
        for d in [*project["dependencies"], *extras["gcp"], *extras["aws"]]
    }
    module_of = {
        "pulumi": "pulumi",
        "pulumi_gcp": "pulumi-gcp",
        "pulumi_kubernetes": "pulumi-kubernetes",
        "pulumi_aws": "pulumi-aws",
        "pulumi_eks": "pulumi-eks",
        "pydantic": "pydantic",
        "pydantic_core": "pydantic",
        "yaml": "pyyaml",
        "google": "pulumi",
    }
    stdlib = set(sys.stdlib_module_names)
    imported: set[str] = set()
    importers: dict[str, set[str]] = {}
    for path in (ROOT / "components").rglob("*.py"):
        here: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                here |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                here.add(node.module.split(".")[0])
        imported |= here
        for module in here:
            importers.setdefault(module, set()).add(path.relative_to(ROOT / "components").parts[1])
    # The extras' SDKs are imported only inside their subpackage (`gpuplane[gcp]` never needs pulumi_aws).
    assert importers.get("pulumi_gcp", set()) <= {"gcp"}, importers["pulumi_gcp"]
    assert importers.get("pulumi_aws", set()) | importers.get("pulumi_eks", set()) <= {"aws"}
    third_party = imported - stdlib - {"gpuplane", "__future__"}
    unknown = third_party - set(module_of)
    assert not unknown, f"map these imports to distributions: {unknown}"
    assert {module_of[m] for m in third_party} <= declared
