"""The README stays a five-minute read and every link in it and in docs/ points at something real."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path) -> None:
    targets = [t for t in LINK.findall(doc.read_text()) if not re.match(r"[a-z]+:", t)]
    missing = [t for t in targets if not (doc.parent / t).exists()]
    assert not missing, f"{doc.relative_to(ROOT)} links to missing files: {missing}"


def test_readme_links_every_doc() -> None:
    readme = (ROOT / "README.md").read_text()
    unlinked = [p.name for p in DOCS[1:] if f"docs/{p.name}" not in readme]
    assert not unlinked, f"README's docs index misses {unlinked}"
