"""Every stack's Kubernetes objects as files, one object a file, for scanners that read manifests (checkov).

A stack's files are the objects it emits as shipped together with those it emits with the optional smoke
test switched on (its namespace and one Job per pool), so the Jobs are scanned too. Paths are
`<stack>/[<region>/]<kind>_<namespace>_<name>.yaml` (`<kind>_<name>.yaml` for cluster-scoped objects;
fleets get a folder per region cluster). `_` never occurs in a Kubernetes name, so paths can't collide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpuplane.plan import Plan, load

from .conftest import ROOT, cached_plan, with_checks
from .graph import kube_objects


def object_files(stack: str, plan: Plan) -> dict[str, dict[str, Any]]:
    """`{relative path: object}` for the Kubernetes objects of one planned stack."""
    regions: list[str] = list(plan.outputs.get("regions") or [])
    files: dict[str, dict[str, Any]] = {}
    for r in kube_objects(plan):
        obj, meta = r.inputs, r.inputs["metadata"]
        folder = stack
        if regions:
            (region,) = [g for g in regions if f"-{g}-" in r.name]  # each fleet object is in one region's cluster
            folder = f"{stack}/{region}"
        parts = [obj["kind"].lower(), *([meta["namespace"]] if meta.get("namespace") else []), meta["name"]]
        path = f"{folder}/{'_'.join(parts)}.yaml"
        assert path not in files, f"two objects would be written to {path}"
        files[path] = obj
    return files


def stack_files(stack: str) -> dict[str, dict[str, Any]]:
    """The shipped stack's objects and, beside them, what the smoke test adds (identical where both emit)."""
    files = object_files(stack, cached_plan(load(stack, ROOT)))
    for path, obj in object_files(stack, cached_plan(with_checks(stack))).items():
        assert files.setdefault(path, obj) == obj, f"{path} differs when the smoke test is on"
    return files


def write(files: dict[str, dict[str, Any]], out: Path) -> None:
    for rel, obj in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(obj, sort_keys=False, default_flow_style=False))
