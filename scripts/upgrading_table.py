"""Regenerate the routine-change table in docs/upgrading.md from `gpuplane lifecycle` over every stack."""

from __future__ import annotations

from pathlib import Path

from gpuplane.plan import load
from gpuplane.plan.routine import check_stack, markdown_table
from gpuplane.plan.stackfile import stack_names

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- lifecycle:start -->\n", "\n<!-- lifecycle:end -->"


def main() -> None:
    table = markdown_table({s: check_stack(load(s, ROOT)) for s in stack_names(ROOT)})
    doc = ROOT / "docs" / "upgrading.md"
    text = doc.read_text()
    head, rest = text.split(START, 1)
    doc.write_text(head + START + table + END + rest.split(END, 1)[1])


if __name__ == "__main__":
    main()
