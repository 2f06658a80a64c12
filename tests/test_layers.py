"""Imports run one way: each folder of the package imports only from the layers below it (or its own).
A module-level import upward fails; the few deliberate in-function imports upward (a config rule that
needs a table kept with the renders) are listed, each with its reason, so a new one fails until it is
either moved down or listed."""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT, parse_python

PKG = ROOT / "components" / "gpuplane"

RANK = {
    "catalog": 0,
    "text": 0,
    "pins": 0,
    "errors": 0,
    "config": 1,
    "args": 2,
    "resources": 2,
    "k8s": 3,
    "scheduling": 4,
    "nvidia": 5,
    "monitoring": 6,
    "kueue": 6,
    "autoscaling": 6,
    "storage": 5,
    "health": 6,
    "gcp": 7,
    "aws": 7,
    "stack": 8,
    "plan": 9,
    "fleet": 9,
    "rightsize": 9,
    "cli": 10,
    "testing": 10,
    "provider": 10,
    "__init__": 10,
    "component_docs": 11,
}
"""Layer of each folder (or root module): the data tables at the bottom, the entry points at the top."""

DEFERRED_UP = {
    ("gpuplane.config.load", "gpuplane.stack.fleet"): "fleet and zone rules need the validated pools",
    ("gpuplane.config.model", "gpuplane.kueue.stack"): "queue ceilings need the sharing tables",
    ("gpuplane.config.model", "gpuplane.scheduling.placement"): "a pool's ceiling is placement's",
    ("gpuplane.config.model", "gpuplane.scheduling.nodes"): "a pool's taints are the nodes' own",
    ("gpuplane.config.autoscaling", "gpuplane.scheduling.placement"): "a pool's GPUs per node are placement's",
    ("gpuplane.config.pool", "gpuplane.scheduling.sharing"): "a pool's resource name is the sharing table's",
    ("gpuplane.scheduling.multinode", "gpuplane.aws"): "EFA devices per instance live with the AWS renders",
    ("gpuplane.scheduling.multinode", "gpuplane.gcp"): "GPUDirect NICs per machine live with the GCP renders",
    ("gpuplane.scheduling.multinode", "gpuplane.gcp.render"): "a pool's machine type is the GCP render's",
    ("gpuplane.kueue.stack", "gpuplane.gcp.render"): "a queue's machine is the GCP render's",
    ("gpuplane.kueue.stack", "gpuplane.aws.render"): "a queue's instances are the AWS render's",
    (
        "gpuplane.stack.parts",
        "gpuplane.fleet.deployments",
    ): "the central stack's Pulumi Cloud settings: an extra's SDK, imported only when set",
}
"""(module, imported module) -> why it imports upward, inside a function (never at import time)."""


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path) -> list[tuple[str, str, bool]]:
    """(this module, imported gpuplane module, at module level) for each import in `path`."""
    rel = path.relative_to(PKG.parent).with_suffix("").parts
    is_init = rel[-1] == "__init__"
    module = ".".join(rel[:-1] if is_init else rel)
    package = module if is_init else module.rsplit(".", 1)[0]
    tree = parse_python(path.read_text())
    top = {id(n) for n in tree.body} | {id(n) for s in tree.body if isinstance(s, ast.If) for n in s.body}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        if target.startswith("gpuplane"):
            out.append((module, target, id(node) in top))
    return out


def test_imports_run_one_way() -> None:
    upward, deferred = [], set()
    for path in sorted(PKG.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        for module, target, at_top in imports(path):
            src, dst = layer(module), layer(target)
            assert src in RANK and dst in RANK, f"{module} -> {target}: give its folder a layer in RANK"
            if RANK[dst] <= RANK[src] or src == dst:
                continue
            if at_top or (module, target) not in DEFERRED_UP:
                upward.append(f"{module} imports {target} ({'at import' if at_top else 'in a function'})")
            else:
                deferred.add((module, target))
    assert upward == []
    assert deferred == set(DEFERRED_UP), "a listed upward import is gone: drop it from DEFERRED_UP"
