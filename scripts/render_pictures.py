"""Regenerate the plan pictures: docs/pictures/<stack>.{mmd,dot,svg} and the Mermaid blocks in
docs/offline-plan.md.

    python scripts/render_pictures.py        # SVGs need Graphviz's `dot` (Debian: apt-get install graphviz)

A test checks that docs/offline-plan.md's Mermaid blocks equal what this script writes, so the pictures
can't go stale.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "components"))

from gpuplane.plan import load, plan_stack  # noqa: E402
from gpuplane.plan.render import to_dot, to_mermaid  # noqa: E402

STACKS = ("gcp-standard", "aws-karpenter")


def main() -> None:
    out = ROOT / "docs" / "pictures"
    out.mkdir(parents=True, exist_ok=True)
    readme = (ROOT / "docs" / "offline-plan.md").read_text()
    for stack in STACKS:
        plan = plan_stack(load(stack, ROOT))
        mermaid, dot = to_mermaid(plan), to_dot(plan)
        (out / f"{stack}.mmd").write_text(mermaid + "\n")
        (out / f"{stack}.dot").write_text(dot + "\n")
        if shutil.which("dot"):
            subprocess.run(["dot", "-Tsvg", "-o", str(out / f"{stack}.svg"), str(out / f"{stack}.dot")], check=True)
        start, end = f"<!-- picture:{stack}:start -->", f"<!-- picture:{stack}:end -->"
        block = f"{start}\n```mermaid\n{mermaid}\n```\n{end}"
        pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
        readme = pattern.sub(lambda _m, b=block: b, readme)
    (ROOT / "docs" / "offline-plan.md").write_text(readme)


if __name__ == "__main__":
    main()
