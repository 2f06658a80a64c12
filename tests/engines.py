"""Real engines (Debian's promtool and prometheus): found on PATH, or a clear skip.

`GPUPLANE_REQUIRE_ENGINES=1` (set by .ci/run, which installs them) turns the skip into a failure.
"""

from __future__ import annotations

import os
import shutil

import pytest


def engine(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        msg = f"{name} is not installed (Debian: apt-get install prometheus); .ci/run installs it"
        if os.environ.get("GPUPLANE_REQUIRE_ENGINES") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return path
