"""checkov (kubernetes framework) over every stack's Kubernetes objects, offline; every finding is allowlisted.

checkov lives in its own venv (its pins clash with ours): `.ci/run` installs `.ci/checkov-requirements.txt`
into `.venv-checkov` and sets `GPUPLANE_CHECKOV`; otherwise `checkov` on PATH is used, or the scan skips
(a failure when `GPUPLANE_REQUIRE_ENGINES=1`). The accepted findings, each with a reason, are in
tests/checkov-allowlist.yaml; a finding no entry matches fails, and so does an entry that matches nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import FLEETS, ROOT, STACKS
from .engines import unavailable
from .manifests import stack_files, write
from .summary import record

# pytest-xdist: one worker runs the module; its session-scoped scan fixture runs checkov once.
pytestmark = pytest.mark.xdist_group("checkov")

ALLOWLIST = Path(__file__).resolve().parent / "checkov-allowlist.yaml"
REQUIREMENTS = ROOT / ".ci" / "checkov-requirements.txt"
ENTRY_KEYS = {"id", "kind", "name", "why"}

# No network: no download of Prisma Cloud policies or guidelines (--skip-download), no check-ID mapping,
# no PyPI update check; and no API key, config or check selection inherited from the environment.
OFFLINE_ENV = {"BC_SKIP_MAPPING": "TRUE", "CKV_SKIP_PACKAGE_UPDATE_CHECK": "TRUE"}
INHERITED_PREFIXES = ("BC_", "CKV_", "CHECKOV_", "PRISMA_")


def checkov_binary() -> str:
    """`$GPUPLANE_CHECKOV`, else `checkov` on PATH, else a clear skip (a failure under GPUPLANE_REQUIRE_ENGINES=1)."""
    explicit = os.environ.get("GPUPLANE_CHECKOV")
    if explicit:
        assert os.access(explicit, os.X_OK), f"GPUPLANE_CHECKOV={explicit} is not an executable"
        return explicit
    path = shutil.which("checkov")
    if path is None:
        unavailable(
            "checkov is not installed: python3 -m venv .venv-checkov && .venv-checkov/bin/pip install "
            "-r .ci/checkov-requirements.txt, then GPUPLANE_CHECKOV=.venv-checkov/bin/checkov; .ci/run does this"
        )
    return path


def pinned_version() -> str:
    (pin,) = re.findall(r"^checkov==(\S+)$", REQUIREMENTS.read_text(), re.M)
    return str(pin)


def load_allowlist() -> list[dict[str, str]]:
    return list(yaml.safe_load(ALLOWLIST.read_text()))


def has_pod_template(obj: dict[str, Any]) -> bool:
    """A workload (Job, Deployment, ...): checkov also checks its pod template as a Pod."""
    return "containers" in obj.get("spec", {}).get("template", {}).get("spec", {})


@dataclass(frozen=True)
class Finding:
    check_id: str
    path: str
    """The scanned file, relative to the scan folder."""
    kind: str
    name: str
    resource: str
    """checkov's resource id (a Job's pod template is reported as a Pod)."""

    def matches(self, entry: dict[str, str]) -> bool:
        return entry["id"] == self.check_id and entry["kind"] == self.kind and fnmatchcase(self.name, entry["name"])


@dataclass
class Scan:
    files: dict[str, dict[str, Any]]
    summary: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)


@pytest.fixture(scope="session")  # not module: under xdist other modules' tests interleave on the worker,
def scan(tmp_path_factory: pytest.TempPathFactory) -> Scan:  # and a module fixture would scan again
    binary = checkov_binary()
    out = tmp_path_factory.mktemp("checkov")
    every = {rel: obj for stack in STACKS for rel, obj in stack_files(stack).items()}
    # Objects that are the same in several stacks (namespaces, smoke-test Jobs, ...) are scanned once, under
    # the first stack's path: checkov's findings depend only on the object, and a scan costs ~50 ms a file.
    distinct: dict[str, str] = {}
    for rel, obj in sorted(every.items()):
        distinct.setdefault(json.dumps(obj, sort_keys=True), rel)
    files = {rel: every[rel] for rel in distinct.values()}
    write(files, out)
    env = {k: v for k, v in os.environ.items() if not k.startswith(INHERITED_PREFIXES)} | OFFLINE_ENV
    cmd = [binary, "-d", str(out), "--framework", "kubernetes", "--skip-download", "--output", "json", "--soft-fail"]
    run = subprocess.run(cmd, cwd=out, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"checkov exited {run.returncode}:\n{run.stderr[-4000:]}"
    reports = json.loads(run.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    report = next((r for r in reports if r.get("check_type") == "kubernetes"), None)
    assert report is not None, f"checkov reported no kubernetes results (scanned nothing?): {run.stdout[:2000]}"
    result = Scan(files, report["summary"])
    for f in report["results"]["failed_checks"]:
        rel = f["file_path"].lstrip("/")
        obj = files[rel]
        result.findings.append(Finding(f["check_id"], rel, obj["kind"], obj["metadata"]["name"], f["resource"]))
    result.findings.sort(key=lambda f: (f.check_id, f.path, f.resource))
    s = result.summary
    templated = sum(1 for obj in files.values() if has_pod_template(obj))
    record("checkov", f"checkov {s['checkov_version']} (pinned {pinned_version()}), kubernetes framework, offline")
    record(
        "checkov",
        f"scanned {len(files)} files, one distinct object each, of {len(every)} objects from {len(STACKS)} stacks"
        f" ({templated} with a pod template): "
        f"{s['resource_count']} resources, {s['passed']} passed, {s['failed']} failed, {s['skipped']} skipped, "
        f"{s['parsing_errors']} parsing errors",
    )
    return result


def test_checkov_scanned_every_object(scan: Scan) -> None:
    """A silent no-op can't pass: checkov saw every file, parsed each, and ran its checks over them."""
    s = scan.summary
    assert s["parsing_errors"] == 0, "checkov could not parse some rendered objects"
    # checkov counts each object once, plus one Pod for each workload's pod template.
    templated = sum(1 for obj in scan.files.values() if has_pod_template(obj))
    assert templated, "the smoke test's Jobs are among the scanned objects"
    assert s["resource_count"] == len(scan.files) + templated, (s, len(scan.files), templated)
    assert s["passed"] + s["failed"] > len(scan.files)
    assert s["failed"] == len(scan.findings)
    if os.environ.get("GPUPLANE_REQUIRE_ENGINES") == "1":
        assert s["checkov_version"] == pinned_version(), "CI runs the checkov pinned in .ci/checkov-requirements.txt"


def test_every_finding_is_allowlisted(scan: Scan) -> None:
    entries = load_allowlist()
    unexplained = [f for f in scan.findings if not any(f.matches(e) for e in entries)]
    for e in entries:
        hits = [f for f in scan.findings if f.matches(e)]
        record("checkov", f"allowlisted {e['id']} {e['kind']} {e['name']}: {len(hits)} findings; why: {e['why']}")
        for f in hits:
            record("checkov", f"    {f.check_id} {f.path} ({f.resource})")
    allowed = len(scan.findings) - len(unexplained)
    record("checkov", f"allowlisted findings: {allowed} of {len(scan.findings)} ({len(entries)} allowlist entries)")
    assert not unexplained, "checkov findings not in tests/checkov-allowlist.yaml (fix them, or add an entry):\n" + (
        "\n".join(f"{f.check_id} {f.kind} {f.name} in {f.path} ({f.resource})" for f in unexplained)
    )


def test_no_stale_allowlist_entries(scan: Scan) -> None:
    stale = [e for e in load_allowlist() if not any(f.matches(e) for f in scan.findings)]
    assert not stale, f"allowlist entries that match no finding any more (remove them): {stale}"


def test_allowlist_entries_are_complete() -> None:
    for e in load_allowlist():
        assert set(e) == ENTRY_KEYS, e
        assert re.fullmatch(r"CKV2?_K8S_\d+", e["id"]), e
        assert e["why"].strip() and "\n" not in e["why"].strip(), f"one-line why: {e}"


def test_every_stack_renders_to_distinct_files() -> None:
    for stack in STACKS:
        files = stack_files(stack)
        assert files, stack
        assert all(rel.startswith(f"{stack}/") for rel in files)
        if stack in FLEETS:
            assert len({rel.split("/")[1] for rel in files}) >= 3, "a folder per region cluster"
        jobs = [obj for obj in files.values() if obj["kind"] == "Job"]
        assert jobs, f"{stack}: the smoke test's Jobs are rendered too"
