"""scripts/fetch_reference.py: the list of reference artefacts agrees with the chart pins and covers every file
the reference checks read, the script writes a folder the checks accept (run offline against a local mirror)
and refuses a file whose bytes changed, and the GitHub workflow runs it and requires the checks."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from gpuplane.pins import CHARTS

from .conftest import ROOT, need_reference
from .crds import CRD_FILES


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_reference", ROOT / "scripts" / "fetch_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


FETCH = script()
SOURCES = {s.local: s for s in FETCH.sources()}

CHART_TAGS = {
    "karpenter": "v{}",
    "gpu-operator": "{}",
    "kueue": "v{}",
    "cluster-autoscaler": "cluster-autoscaler-chart-{}",
}
"""Charts whose reference files come from the release tag of the pinned version (the others from a commit of
their chart repository, whose Chart.yaml the mirror test reads)."""

NOT_FETCHED = {
    "karpenter-crd": "the CRDs themselves are fetched (pkg/apis/crds), not the CRD chart's values",
    "keda": "the reference folder holds KEDA's CRDs, not its chart: tests/test_reference.py restates the chart's keys",
}


def test_every_source_is_at_a_full_commit_with_a_digest() -> None:
    assert len(SOURCES) == len(FETCH.sources()), "one entry per file"
    for s in SOURCES.values():
        assert re.fullmatch(r"[0-9a-f]{40}", s.commit), s.local
        assert re.fullmatch(r"[0-9a-f]{64}", s.sha256), s.local
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", s.repo) and not s.path.startswith("/"), s.local
        assert s.url == f"https://raw.githubusercontent.com/{s.repo}/{s.commit}/{s.path}"


def test_the_list_follows_the_chart_pins() -> None:
    """Every pinned chart's Chart.yaml and values.yaml are listed, from the tag of the pinned version where
    the chart is released from its project's repository."""
    for key, pin in CHARTS.items():
        if key in NOT_FETCHED:
            continue
        for name in ("Chart.yaml", "values.yaml"):
            assert f"charts/{key}/{name}" in SOURCES, (key, name)
        if key in CHART_TAGS:
            assert SOURCES[f"charts/{key}/values.yaml"].ref == CHART_TAGS[key].format(pin.version), key


def test_the_list_covers_every_file_the_checks_read() -> None:
    assert {f"crds/{f}" for f in CRD_FILES.values()} <= set(SOURCES)
    assert {"dcgm/default-counters.csv", "dcgm/dcp-metrics-included.csv"} <= set(SOURCES)


def mirror_of(reference: Path, root: Path) -> Path:
    """A local mirror laid out as raw.githubusercontent.com (<owner>/<repo>/<sha>/<path>) from a reference folder."""
    for s in SOURCES.values():
        target = root / s.repo / s.commit / s.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((reference / s.local).read_bytes())
    return root


def test_the_script_rebuilds_the_reference_folder_from_a_mirror(tmp_path: Path) -> None:
    """Offline: the pinned digests are the reference folder's files, and the output is that folder again, with
    the Chart.yaml of each chart taken from a commit at the pinned version."""
    ref = need_reference()
    out = tmp_path / "out"
    assert FETCH.main(["--out", str(out), "--mirror", str(mirror_of(ref, tmp_path / "mirror"))]) == 0
    for local in SOURCES:
        assert (out / local).read_bytes() == (ref / local).read_bytes(), local
    for key, pin in CHARTS.items():
        if key in NOT_FETCHED or key in CHART_TAGS:
            continue  # a release tag's Chart.yaml in git may say `devel` or the previous version
        chart = yaml.safe_load((out / "charts" / key / "Chart.yaml").read_text())
        assert str(chart["version"]).removeprefix("v") == pin.version.removeprefix("v"), key


def test_the_script_checks_every_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With fabricated files and a one-entry table: a matching file is written, a changed one is refused."""
    data = b"kind: CustomResourceDefinition\n"
    table = tmp_path / "sources.tsv"
    sha = "0" * 40
    row = ["crds/x.yaml", "o/r", sha, "crds/x.yaml", hashlib.sha256(data).hexdigest(), "-"]
    table.write_text("# comment\n" + "\t".join(row) + "\n")
    mirror = tmp_path / "mirror" / "o" / "r" / sha / "crds"
    mirror.mkdir(parents=True)
    (mirror / "x.yaml").write_bytes(data)
    args = ["--out", str(tmp_path / "out"), "--mirror", str(tmp_path / "mirror"), "--table", str(table)]
    assert FETCH.main(args) == 0 and (tmp_path / "out" / "crds" / "x.yaml").read_bytes() == data
    (mirror / "x.yaml").write_bytes(data + b"# edited\n")
    assert FETCH.main(args) == 1
    assert "crds/x.yaml" in capsys.readouterr().err


def test_the_workflow_fetches_the_reference_and_requires_its_checks() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    steps = workflow["jobs"]["test"]["steps"]
    runs = [s.get("run", "") for s in steps]
    fetch = next(i for i, r in enumerate(runs) if "scripts/fetch_reference.py" in r)
    ci = next(i for i, r in enumerate(runs) if r.strip() == "./.ci/run")
    assert fetch < ci
    out = re.search(r"--out (\S+)", runs[fetch])
    assert out and steps[ci].get("env", {}).get("GPUPLANE_REFERENCE") == out.group(1)
    # .ci/run turns a given reference folder into a requirement: its checks fail rather than skip.
    assert "GPUPLANE_REFERENCE:-" in (ROOT / ".ci" / "run").read_text()
