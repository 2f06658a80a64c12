"""Counts that tests want printed at the end of the run (bad-input catalogue, Hypothesis examples,
checkov findings), so CI's log shows them even with `pytest -q`.

A test calls `record("section", "line")`; conftest's `pytest_terminal_summary` prints every section.
"""

from __future__ import annotations

LINES: dict[str, list[str]] = {}


def record(section: str, line: str) -> None:
    """Add one line under `section` in the end-of-run summary."""
    LINES.setdefault(section, []).append(line)
