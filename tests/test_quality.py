"""Quality gates, run by the test command itself: ruff, mypy (strict on components/), and a wheel that
installs and imports cleanly outside the source tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT


def tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.skip(f"{name} is not installed in this environment (pip install -e '.[test]')")
    return path


def test_ruff() -> None:
    out = subprocess.run(
        [tool("ruff"), "check", "components", "tests", "scripts", "provider", "examples", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_on_components() -> None:
    out = subprocess.run([tool("mypy")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


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
    assert (target / "components" / "py.typed").is_file()
    code = (
        "import components, sys; assert components.__file__.startswith(sys.argv[1]);"
        "from components.plan import load, plan_stack;"
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
