"""`gpuplane diff --git REV STACK`: plan a stack with the code and stacks of a git revision and in the
working tree. A stack that exists on one side only is all added (or all removed), not an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import InputError

EMPTY_PLAN: dict[str, Any] = {"resources": [], "outputs": {}}


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("git is not installed (it is needed to plan another revision)", "--git") from None


def _toplevel() -> Path:
    out = _git("rev-parse", "--show-toplevel")
    if out.returncode != 0:
        raise InputError(f"{Path.cwd()} is not inside a git repository", "--git")
    return Path(out.stdout.decode().strip())


def _check_rev(top: Path, rev: str) -> None:
    if _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", cwd=top).returncode != 0:
        raise InputError(f"unknown git revision {rev!r}", "--git")


def _extract(top: Path, rev: str, into: Path) -> None:
    archive = _git("-C", str(top), "archive", "--format=tar", rev)
    if archive.returncode != 0:
        raise InputError(f"git archive {rev} failed: {archive.stderr.decode(errors='replace').strip()}", "--git")
    untar = subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, capture_output=True, check=False)
    if untar.returncode != 0:
        raise InputError(f"unpacking {rev} failed: {untar.stderr.decode(errors='replace').strip()}", "--git")


def _stack_path(ref: str, cwd: Path) -> Path | None:
    """The stack file `ref` names from `cwd` (a name or a path), or None when there is none."""
    from ..plan.stackfile import resolve

    try:
        return resolve(ref, cwd)
    except InputError:
        return None


def _plan_tree(tree: Path, stack_file: Path, rev: str) -> dict[str, Any]:
    """Plan `stack_file` in a subprocess with the package found in `tree` (src layout, or the older
    top-level `components` package)."""
    if (tree / "components" / "gpuplane").is_dir():
        module, path = "gpuplane.cli", tree / "components"
    else:
        module, path = "components.cli", tree
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(tree)])}
    out = subprocess.run(
        [sys.executable, "-m", module, "plan", str(stack_file), "--format", "json"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        doc: dict[str, Any] = json.loads(out.stdout)
    except ValueError:
        raise InputError(f"planning {stack_file.name} at {rev} failed:\n{out.stderr.strip()}", "--git") from None
    return doc


def plans_at(rev: str, ref: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The plan JSON of stack `ref` at git `rev` and in the working tree."""
    from ..plan import load, plan_stack

    top = _toplevel()
    _check_rev(top, rev)
    here = Path.cwd().resolve()
    head_file = _stack_path(ref, here)
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        _extract(top, rev, tree)
        there = tree / here.relative_to(top.resolve())
        as_path = Path(ref)
        if as_path.suffix in (".yaml", ".yml") or as_path.is_file():  # a path: the same file in the revision
            try:
                inside = (here / as_path).resolve().relative_to(top.resolve())
            except ValueError:
                raise InputError(f"{ref} is outside the git repository {top}", "STACK") from None
            base_file = _stack_path(str(tree / inside), there)
        else:
            base_file = _stack_path(ref, there) if there.is_dir() else None
        if head_file is None and base_file is None:
            load(ref)  # raises the working tree's "unknown stack" error, with its "did you mean"
        base = _plan_tree(tree, base_file, rev) if base_file else EMPTY_PLAN
    head = plan_stack(load(str(head_file))).to_json() if head_file else EMPTY_PLAN
    return base, head
