"""End to end: a real Prometheus scrapes a DCGM-format endpoint through each stack's own scrape job.

Debian's Prometheus has no Kubernetes service discovery, so only the `kubernetes_sd_configs` block is
swapped for `file_sd_configs` that carries the `__meta_kubernetes_*` labels Kubernetes discovery would
give the exporter's endpoints (derived from the planned release and the chart's templates). The relabel
rules are the stack's, byte for byte. A decoy endpoint in the same namespace must be dropped.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.plan import load

from .conftest import ROOT, cached_plan
from .conftest import SINGLE as STACKS
from .engines import engine, start_prometheus
from .graph import exporter_facts

# pytest-xdist: one worker runs the module: its fixture starts every stack's Prometheus and serves fixed pod ports.
pytestmark = pytest.mark.xdist_group("prometheus-e2e")

DCGM_METRICS = """# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0e6c",device="nvidia0",modelName="NVIDIA L4",Hostname="gpu-node-1",container="trainer",namespace="ml",pod="trainer-0"} 87
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-0e6c",device="nvidia0",modelName="NVIDIA L4",Hostname="gpu-node-1"} 61
"""
DEVICE_PLUGIN_METRICS = """# TYPE duty_cycle gauge
duty_cycle{accelerator_id="GPU-1",container="trainer",make="nvidia",model="NVIDIA L4",namespace="ml",pod="trainer-0"} 87
"""
DECOY_METRICS = "# TYPE node_load1 gauge\nnode_load1 0.5\n"
NODE = "gpu-node-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(body: str, port: int = 0) -> tuple[ThreadingHTTPServer, int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server API
            data = body.encode()
            self.send_response(200 if self.path == "/metrics" else 404)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    # A short poll interval: `shutdown()` waits for the loop to notice, up to one interval per server.
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, int(server.server_address[1])


def meta(labels: dict[str, str], namespace: str, port_name: str, kind: str = "service") -> dict[str, str]:
    """The labels Kubernetes discovery attaches to a Service's endpoint (role endpoints) or a pod (role pod)."""
    out = {f"__meta_kubernetes_{kind}_label_{re.sub(r'[^a-zA-Z0-9_]', '_', k)}": v for k, v in labels.items()}
    out.update(
        {
            "__meta_kubernetes_namespace": namespace,
            "__meta_kubernetes_pod_node_name": NODE,
            "__meta_kubernetes_pod_ip": "127.0.0.1",
        }
    )
    if kind == "service":
        out.update({"__meta_kubernetes_endpoint_port_name": port_name, "__meta_kubernetes_service_name": "svc"})
    return out


def query(base: str, promql: str) -> list[dict[str, Any]]:
    url = f"{base}/api/v1/query?query={urllib.parse.quote(promql)}"
    with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 - loopback only
        return list(json.load(resp)["data"]["result"])


@dataclass
class Run:
    """One real Prometheus scraping one stack's job, started up front so the stacks wait in parallel."""

    stack: str
    base: str = ""
    metric: str = ""
    exporter_port: int = 0
    decoy_port: int = 0
    skip: str = ""
    procs: list[subprocess.Popen[str]] = field(default_factory=list)
    servers: list[ThreadingHTTPServer] = field(default_factory=list)


def start(stack: str, workdir: Path) -> Run:
    run = Run(stack)
    plan = cached_plan(load(stack, ROOT))  # planned under fresh mocks, once a session
    facts = exporter_facts(plan)
    (job,) = yaml.safe_load(plan.outputs["scrapeConfig"])
    relabel_before = yaml.safe_dump(job["relabel_configs"])
    job.pop("kubernetes_sd_configs")
    job["file_sd_configs"] = [{"files": [str(workdir / "targets.json")]}]
    assert yaml.safe_dump(job["relabel_configs"]) == relabel_before  # the stack's rules, byte for byte

    decoy, run.decoy_port = serve(DECOY_METRICS)
    run.servers.append(decoy)
    if facts["role"] == "pod":
        # Pod discovery: the job itself rewrites the address to <pod IP>:<port>, so serve on that port.
        try:
            exporter, run.exporter_port = serve(DEVICE_PLUGIN_METRICS, facts["pod_port"])
        except OSError:
            run.skip = f"port {facts['pod_port']} is busy on this machine"
            return run
        run.metric = "duty_cycle"
        targets = [
            {"targets": ["127.0.0.1:1"], "labels": meta(facts["pod_labels"], facts["namespace"], "", "pod")},
            {
                "targets": [f"127.0.0.1:{run.decoy_port}"],
                "labels": meta({"k8s-app": "kube-dns"}, facts["namespace"], "", "pod"),
            },
        ]
    else:
        exporter, run.exporter_port = serve(DCGM_METRICS)
        run.metric = "DCGM_FI_DEV_GPU_UTIL"
        service = meta(facts["service_labels"], facts["namespace"], facts["service_port"])
        decoy_meta = meta({"app": "node-exporter"}, facts["namespace"], "http-metrics")
        targets = [
            {"targets": [f"127.0.0.1:{run.exporter_port}"], "labels": service},
            {"targets": [f"127.0.0.1:{run.decoy_port}"], "labels": decoy_meta},
        ]
    run.servers.append(exporter)
    (workdir / "targets.json").write_text(json.dumps(targets))
    (workdir / "prometheus.yml").write_text(yaml.safe_dump({"scrape_configs": [job]}, sort_keys=False))
    check = subprocess.run(
        [engine("promtool"), "check", "config", str(workdir / "prometheus.yml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    # The server scrapes every second (the stack's interval and timeout were checked above): the first
    # scrape then comes within a second of startup instead of up to one stack interval later.
    job.update({"scrape_interval": "1s", "scrape_timeout": "1s"})
    (workdir / "prometheus.yml").write_text(yaml.safe_dump({"scrape_configs": [job]}, sort_keys=False))
    port = free_port()
    run.procs.append(start_prometheus(workdir / "prometheus.yml", workdir / "data", port))
    run.base = f"http://127.0.0.1:{port}"
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    engine("prometheus")
    started = {stack: start(stack, tmp_path_factory.mktemp(stack)) for stack in STACKS}
    yield started
    procs = [proc for run in started.values() for proc in run.procs]
    for proc in procs:  # every server stops at once, then each is waited for
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    for run in started.values():
        for server in run.servers:
            server.shutdown()


@pytest.mark.parametrize("stack", STACKS)
def test_gpu_metrics_arrive_through_the_stack_scrape_job(stack: str, runs: dict[str, Run]) -> None:
    run = runs[stack]
    if run.skip:
        pytest.skip(run.skip)
    deadline = time.monotonic() + 60
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not found:
        time.sleep(0.25)
        try:
            found = query(run.base, f'{run.metric}{{job="gpu-metrics"}}')
        except OSError:
            continue
    assert found, f"{run.metric} never arrived"
    (sample,) = found
    assert sample["metric"]["kubernetes_node"] == NODE
    assert sample["metric"]["cluster"] and sample["metric"]["region"], "series name their cluster and region"
    assert sample["metric"]["pod"] == "trainer-0" and sample["value"][1] == "87"
    with urllib.request.urlopen(f"{run.base}/api/v1/targets", timeout=5) as resp:  # noqa: S310 - loopback
        data = json.load(resp)["data"]
    active = [t["scrapeUrl"] for t in data["activeTargets"]]
    dropped = [t["discoveredLabels"]["__address__"] for t in data["droppedTargets"]]
    assert active == [f"http://127.0.0.1:{run.exporter_port}/metrics"]
    assert dropped == [f"127.0.0.1:{run.decoy_port}"]
