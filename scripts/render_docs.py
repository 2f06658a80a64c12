"""Regenerate docs/config.md from the config models and docs/components.md from the component classes
(tests check both are up to date)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "components"))

from gpuplane import component_docs  # noqa: E402
from gpuplane.config.reference import reference  # noqa: E402

if __name__ == "__main__":
    (ROOT / "docs" / "config.md").write_text(reference())
    (ROOT / "docs" / "components.md").write_text(component_docs.reference())
