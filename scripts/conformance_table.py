"""Regenerate the README's conformance table from `gpuplane conformance aws-multinode` (a test checks it)."""

from __future__ import annotations

from pathlib import Path

from gpuplane.config import parse_flat
from gpuplane.health.conformance import report, to_text
from gpuplane.plan import load, plan_stack

ROOT = Path(__file__).resolve().parents[1]
STACK = "aws-multinode"
START, END = f"<!-- conformance:{STACK} -->\n", "\n<!-- conformance:end -->"


def table() -> str:
    stack = load(STACK, ROOT)
    rows = report(parse_flat(stack.flat_config()), plan_stack(stack).resources)
    return to_text(STACK, rows).split("\n", 2)[2]  # the table and its MUST line, without the title


def main() -> None:
    doc = ROOT / "README.md"
    text = doc.read_text()
    head, rest = text.split(START, 1)
    doc.write_text(head + START + table() + END + rest.split(END, 1)[1])


if __name__ == "__main__":
    main()
