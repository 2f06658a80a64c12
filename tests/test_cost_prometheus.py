"""The cost rules in a real Prometheus: each collector's stored series served to it (honouring their labels, as
stored), the stack-shaped rules file loaded, and the recorded dollars read back over the HTTP API.

promtool's unit tests (test_cost_rules.py) pin the edges; this shows the same rules file loads and records
the same dollars in a running server, for every collector's label set. Only the groups' `interval` and the
idle window are shortened so the server answers in seconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.config.monitoring import MonitoringConfig
from gpuplane.monitoring.rules import rule_groups, rules_file_yaml
from gpuplane.monitoring.wiring import settings_for

from .engines import engine, start_prometheus, stop
from .test_cost_rules import COST, series
from .test_prometheus_e2e import free_port, query, serve

pytestmark = pytest.mark.xdist_group("prometheus-e2e")

KINDS = {  # collector -> a platform and integration that stores series its way
    "scrape": ("gke-standard", "scrape-config"),
    "servicemonitor": ("eks-karpenter", "prometheus-operator"),
    "gmp": ("gke-standard", "gke-managed"),
    "gmp-managed-dcgm": ("gke-autopilot", "gke-managed"),
}
UTIL_NOW = {"95x40": "95", "_x19 1x20": "1", "80x4 2x35": "2", "1x40": "1", "0x40": "0"}
"""The last value of each utilisation series of test_cost_rules."""
ENDED = {"1x20"}
"""test_cost_rules' series that end before its evaluation (gone-0's)."""
WANT = {  # test_cost_rules' dollars, once every series has been there a whole idle window (new-0 is idle too)
    'gpuplane:gpu_cost_usd_per_hour:by_namespace{namespace="ml"}': 12.5,
    'gpuplane:gpu_cost_usd_per_hour:by_namespace{namespace="team-b"}': 5.0,
    'gpuplane:gpu_unallocated_cost_usd_per_hour:by_pool{pool="whole"}': 8.0,
    'gpuplane:gpu_unallocated_cost_usd_per_hour:by_pool{pool="shared"}': 1.5,
    'gpuplane:gpu_unallocated_cost_usd_per_hour:by_pool{pool="spare"}': 6.0,
    'gpuplane:gpu_empty_node_cost_usd_per_hour:by_pool{pool="whole"}': 8.0,
    'gpuplane:gpu_idle_allocated_cost_usd_per_hour:by_namespace{pool="whole"}': 8.0,
}


def exposition(kind: str) -> str:
    lines = []
    for s in series(kind):
        if s["values"] in ENDED:
            continue  # a series that ends has no place in a constant exposition
        value = UTIL_NOW.get(s["values"], s["values"].split("x")[0])
        lines.append(f"{s['series']} {value}")
    return "\n".join(lines) + "\n"


def start(kind: str, workdir: Path) -> tuple[str, list[Any]]:
    platform, integration = KINDS[kind]
    # Two scrapes long: the first scrape comes ~5 s after startup (Prometheus' discovery and scrape managers
    # update every 5 s), then the idle cost waits one whole window more.
    m = MonitoringConfig(integration=integration, idleWindow="2s")  # type: ignore[arg-type]
    groups = rule_groups(settings_for(platform, m, None, COST))
    for g in groups:
        g["interval"] = "1s"
    (workdir / "gpu.rules.yml").write_text(rules_file_yaml(groups))
    server, port = serve(exposition(kind))
    job = {
        "job_name": "stored",
        "honor_labels": True,  # the served series carry their labels as the collector stored them
        "scrape_interval": "1s",
        "scrape_timeout": "1s",
        "static_configs": [{"targets": [f"127.0.0.1:{port}"]}],
    }
    config = {"global": {"evaluation_interval": "1s"}, "rule_files": ["gpu.rules.yml"], "scrape_configs": [job]}
    (workdir / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    web = free_port()
    proc = start_prometheus(workdir / "prometheus.yml", workdir / "data", web)
    return f"http://127.0.0.1:{web}", [proc, server]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    engine("prometheus")
    started = {kind: start(kind, tmp_path_factory.mktemp(kind)) for kind in KINDS}
    yield {kind: base for kind, (base, _) in started.items()}
    for _, (proc, server) in started.values():
        stop(proc)
        server.shutdown()


def _value(base: str, promql: str) -> float | None:
    try:
        found = query(base, promql)
    except OSError:
        return None
    return float(found[0]["value"][1]) if len(found) == 1 else None


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_running_prometheus_records_the_same_dollars(kind: str, servers: dict[str, str]) -> None:
    base = servers[kind]
    deadline = time.monotonic() + 60
    got: dict[str, float | None] = {}
    while time.monotonic() < deadline:
        got = {q: _value(base, q) for q in WANT}
        if all(v is not None and abs(v - WANT[q]) < 1e-9 for q, v in got.items()):
            break
        time.sleep(0.25)
    assert got == WANT, kind
