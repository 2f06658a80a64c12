"""Fetch the pinned reference artefacts (published CRDs, chart Chart.yaml/values.yaml, DCGM counter lists) from
their upstream repositories at fixed commits, into a folder laid out as `../shared/reference` is.

The tests that hold gpuplane's objects against these files (tests/conftest.py `need_reference`) then run instead
of skipping: the GitHub workflow runs this script and sets GPUPLANE_REFERENCE to its folder, as `.ci/run` does
with `../shared/reference` where a checkout has one. Every file is fetched by its raw URL at a full commit SHA
and checked against its SHA-256, so a moved tag or an edited mirror fails loudly.

    python3 scripts/fetch_reference.py --out .reference          # from raw.githubusercontent.com
    python3 scripts/fetch_reference.py --out D --mirror M        # from M/<owner>/<repo>/<sha>/<path> (offline)

tests/test_fetch_reference.py checks the list against the chart pins and runs the script against a local mirror.
Standard library only (it runs before the project's venv exists).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class Source:
    local: str
    """Path in the reference folder (as in ../shared/reference)."""
    repo: str
    commit: str
    """Full 40-hex commit SHA (tags move; a SHA does not)."""
    path: str
    """Path in the repository at that commit."""
    sha256: str
    ref: str = ""
    """The tag the commit carries, where there is one (documentation only)."""

    @property
    def url(self) -> str:
        return f"{RAW}/{self.repo}/{self.commit}/{self.path}"


TABLE = Path(__file__).with_name("reference_sources.tsv")


def sources(table: Path = TABLE) -> tuple[Source, ...]:
    """Every reference file: where it comes from, at which commit, and its SHA-256 (scripts/reference_sources.tsv)."""
    out = []
    for line in table.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            local, repo, commit, path, sha256, ref = line.split("\t")
            out.append(Source(local, repo, commit, path, sha256, "" if ref == "-" else ref))
    return tuple(out)


def fetch(source: Source, mirror: Path | None, attempts: int = 3) -> bytes:
    """The file's bytes, from the mirror or its raw URL (retried), checked against its SHA-256."""
    if mirror is not None:
        data = (mirror / source.repo / source.commit / source.path).read_bytes()
    else:
        for attempt in range(attempts):
            try:
                with urllib.request.urlopen(source.url, timeout=60) as response:  # noqa: S310 - fixed https URLs
                    data = response.read()
                break
            except OSError:
                if attempt == attempts - 1:
                    raise
                time.sleep(2**attempt)
    digest = hashlib.sha256(data).hexdigest()
    if digest != source.sha256:
        raise ValueError(f"{source.local}: {source.url} has SHA-256 {digest}, pinned {source.sha256}")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write (laid out as ../shared/reference)")
    parser.add_argument("--mirror", type=Path, help="read <owner>/<repo>/<sha>/<path> from here instead of GitHub")
    parser.add_argument("--table", type=Path, default=TABLE, help="the list of files (default: %(default)s)")
    args = parser.parse_args(argv)
    problems = []
    found = sources(args.table)
    for source in found:
        try:
            data = fetch(source, args.mirror)
        except (OSError, ValueError) as exc:
            problems.append(f"{source.local}: {exc}")
            continue
        target = args.out / source.local
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if problems:
        print("fetch_reference: " + "\n  ".join(["could not fetch:", *problems]), file=sys.stderr)
        return 1
    print(f"fetch_reference: {len(found)} files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
