"""Real engines (Debian's promtool and prometheus): found on PATH, or a clear skip.

`GPUPLANE_REQUIRE_ENGINES=1` (set by .ci/run, which installs them) turns the skip into a failure.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def unavailable(msg: str, required_by: str = "GPUPLANE_REQUIRE_ENGINES") -> NoReturn:
    """Skip with `msg`, or fail when the environment variable `required_by` is `1` (set by .ci/run)."""
    if os.environ.get(required_by) == "1":
        pytest.fail(msg)
    pytest.skip(msg)


def engine(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        unavailable(f"{name} is not installed (Debian: apt-get install prometheus); .ci/run installs it")
    return path
