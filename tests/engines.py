"""Real engines (Debian's promtool and prometheus): found on PATH, or a clear skip.

`GPUPLANE_REQUIRE_ENGINES=1` (set by .ci/run, which installs them) turns the skip into a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
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


def start_prometheus(config: Path, data: Path, port: int) -> subprocess.Popen[bytes]:
    """A real Prometheus on 127.0.0.1:`port` with `config`, storing in `data` (quiet)."""
    return subprocess.Popen(
        [
            engine("prometheus"),
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def checked_prometheus(workdir: Path, jobs: list[dict[str, object]]) -> tuple[subprocess.Popen[bytes], int]:
    """A real Prometheus scraping `jobs` every second, once `promtool check config` accepts its config: the
    process and its port (127.0.0.1)."""
    import socket

    import yaml

    config = workdir / "prometheus.yml"
    config.write_text(yaml.safe_dump({"global": {"scrape_interval": "1s"}, "scrape_configs": jobs}, sort_keys=False))
    checked = subprocess.run(
        [engine("promtool"), "check", "config", str(config)], capture_output=True, text=True, check=False, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    return start_prometheus(config, workdir / "data", port), port


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server started here: terminate, then kill if it has not exited in 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
