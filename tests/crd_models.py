"""The npm validators generated from the Karpenter, prometheus-operator and GKE ComputeClass CRDs
(tests/node/validate.mjs).

They let a clone without `../shared/reference` check the custom resources gpuplane emits against their
published schemas' structure (types, enums, required fields, patterns, bounds). One Node process serves
the whole test session. Installed by `npm ci --prefix tests/node` (the README's test command and .ci/run
run it); when Node, npm or the packages are missing, the tests say so and skip, or fail with
GPUPLANE_REQUIRE_ENGINES=1 (set by .ci/run).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .engines import unavailable

NODE_DIR = Path(__file__).resolve().parent / "node"
INSTALL = "npm ci --prefix tests/node"


class Validators:
    """A running `node tests/node/validate.mjs`: send a batch of objects, get one error list per object."""

    def __init__(self, node: str) -> None:
        self.proc = subprocess.Popen(
            [node, str(NODE_DIR / "validate.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=NODE_DIR,
        )

    def errors(self, objects: list[dict[str, Any]]) -> list[list[str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(objects) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the Node validator exited (code {self.proc.poll()})"
        out: list[list[str]] = json.loads(line)
        assert len(out) == len(objects)
        return out

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def kinds() -> list[str]:
    """`apiVersion kind` of every custom resource the validators cover (from validate.mjs itself)."""
    node = node_or_skip()
    out = subprocess.run([node, "validate.mjs", "--kinds"], cwd=NODE_DIR, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return list(json.loads(out.stdout))


def node_or_skip() -> str:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        unavailable(f"Node.js and npm are not installed (Debian: apt-get install nodejs npm), then {INSTALL}")
    if not (NODE_DIR / "node_modules" / "@kubernetes-models").is_dir():
        unavailable(f"the CRD validators are not installed: run {INSTALL}")
    return node
