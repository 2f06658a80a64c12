"""`gpuplane rightsize` against a real Prometheus holding generated series (tests/rightsize_series.py), built
into blocks by `promtool tsdb create-blocks-from openmetrics`: an oversized pool floor, a workload that fits
`1g.10gb`, one that fits nothing smaller, a share on spot and another GPU on spot on the scrape-config labels,
a pool found by GPU model where nodes have no pool label, a MIG pool held all day (memory series only),
overlapping pool classes beside another cluster with the same node names; and the errors for an unreachable
server, an HTTP error and a window without data. Hours and savings are checked against the generator's own
hours (`rightsize_series.HOURS`), not the command's arithmetic."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuplane.catalog.availability import GPU_PRICES, PRICES, SPOT_FRACTION
from gpuplane.cli import main
from gpuplane.errors import InputError
from gpuplane.rightsize import Prometheus

from .conftest import ROOT
from .engines import engine, stop
from .rightsize_series import HOURS, MIG_1G_5GB_GIB, generate
from .test_cli_conventions import CAMEL, keys

pytestmark = pytest.mark.xdist_group("rightsize")

AT = int(time.time()) // 3600 * 3600
"""The window's end: the hour before now, so the blocks are recent and the data fixed relative to it."""
WINDOW_HOURS = 48


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    promtool, server = engine("promtool"), engine("prometheus")
    work = tmp_path_factory.mktemp("rightsize")
    (work / "series.om").write_text(generate(AT))
    built = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(work / "series.om"), str(work / "data")],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (work / "prometheus.yml").write_text("global:\n  scrape_interval: 15s\n")
    port = free_port()
    proc = subprocess.Popen(
        [
            server,
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'data'}",
            "--storage.tsdb.retention.time=3650d",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as resp:  # noqa: S310 - loopback
                if resp.status == 200:
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None, "Prometheus did not become ready"
        time.sleep(0.2)
    yield url
    stop(proc)


def rightsize(capsys: pytest.CaptureFixture[str], stack: str, url: str, *extra: str) -> dict[str, Any]:
    argv = ["rightsize", stack, "--prometheus", url, "--window", f"{WINDOW_HOURS}h", "--at", str(AT), *extra]
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return dict(json.loads(out))


def by_workload(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{w['namespace']}/{w['workload']}": w for w in doc["workloads"]}


def by_pool(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{p['cluster']}/{p['pool']}": p for p in doc["pools"]}


def held_hours(name: str) -> float:
    """Hours the generator held a workload's GPU, or a cluster's GPU series span."""
    first, last = HOURS[name]
    return first - last


def span_rel(doc: dict[str, Any], cluster: str) -> float:
    """How exactly the observed span, so the monthly scaling, is known: Prometheus evaluates the span's subquery
    at multiples of its step since the epoch (promql engine: subquery start aligned to the step), so each end is
    off by up to one step, and the window's end (the hour before now) moves against the step hour by hour."""
    step = float(str(doc["step"]).removesuffix("s"))
    return 2 * step / (held_hours(cluster) * 3600)


def monthly(w: dict[str, Any], cluster: str) -> float:
    """The workload's GPU-hours, as a month of them: scaled from the hours the server holds its cluster's GPU
    series for (the generator's), not from the requested window."""
    return float(w["gpuHours"]) * 730 / held_hours(cluster)


def variant(tmp_path: Path, stack: str, name: str, old: str, new: str) -> str:
    """A copy of a shipped stack with `old` replaced by `new` (once)."""
    text = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert text.count(old) == 1, old
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(text.replace(old, new))
    return str(path)


def test_gke_managed_labels_oversized_floor_mig_and_nothing_smaller(
    prometheus: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = rightsize(capsys, "gcp-dws", prometheus)
    work = by_workload(doc)
    assert set(work) == {"prod/chat", "research/ft-small", "research/ft-large"}, "idle GPUs and other clusters stay out"
    assert "kube_pod_owner" in doc["rules"]["workloadName"], "ft-large-master-0's owner is the PyTorchJob ft-large"

    small = work["research/ft-small"]
    assert (small["pool"], small["poolFrom"], small["gpu"], small["pods"]) == ("finetune", "node label", "h100", 1)
    assert (small["peakMemoryGib"], small["peakUtilPercent"]) == (6.0, 11.0)
    assert (small["action"], small["target"]["detail"], small["target"]["spot"]) == ("mig", "1g.10gb", False)
    assert small["usdPerMonthSaved"] is None, "flex-start A3 has no catalog price"
    assert small["gpuHours"] == pytest.approx(held_hours("research/ft-small"), abs=0.05)
    gap = 20 - 17.4  # hours of missing samples, of 26
    assert small["confidence"]["gaps"] == pytest.approx(gap / held_hours("research/ft-small"), abs=0.005)
    assert small["confidence"]["verdict"] == "medium"

    large = work["research/ft-large"]
    assert (large["action"], large["peakMemoryGib"], large["peakUtilPercent"]) == ("nothing-smaller", 60.0, 97.0)
    assert "nothing cheaper holds that" in large["reason"]
    assert large["gpuHours"] == pytest.approx(held_hours("research/ft-large"), abs=0.05)
    assert large["confidence"]["gaps"] < 0.005, "an exporter restart splits the samples over two series, none lost"
    assert work["prod/chat"]["action"] == "nothing-smaller"

    pools = by_pool(doc)
    serving = pools["ml-dws/serving"]
    assert (serving["reservedNodes"], serving["peakNodes"], serving["peakBusyNodes"]) == (4, 4, 1)
    assert serving["recommendedFloor"] == 2, "a busy peak of 1 node, +20%"
    assert serving["usdPerMonthSaved"] == round(2 * PRICES["g2-standard-8"] * 730, 2)
    assert any("shrink it to 2" in a for a in serving["advice"])
    assert any("reached by idle nodes only" in a for a in serving["advice"])
    finetune = pools["ml-dws/finetune"]
    assert (finetune["peakNodes"], finetune["peakBusyNodes"], finetune["recommendedFloor"]) == (2, 2, None)
    assert any("costs nothing unless reached" in a for a in finetune["advice"])
    assert pools["ml-dws/training"]["peakNodes"] == 0
    assert doc["totals"]["unpriced"] == ["research/ft-small"]
    assert doc["totals"]["usdPerMonthSaved"] == serving["usdPerMonthSaved"]
    assert doc["window"] == "48h" and doc["confidence"]["verdict"] == "medium"
    assert doc["observedHours"] == pytest.approx(held_hours("ml-dws"), abs=0.05), "31 h to 1 h before the end"
    assert any("holds 30.0 h of GPU series of the 48h window" in n for n in doc["notes"])
    assert [k for k in keys(doc) if not CAMEL.match(k)] == []


def test_your_price_prices_the_mig_slice(prometheus: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = (ROOT / "stacks" / "Pulumi.gcp-dws.yaml").read_text()
    stack = tmp_path / "Pulumi.gcp-dws-priced.yaml"
    stack.write_text(text.replace("config:\n", "config:\n  gpuplane:prices: {onDemand: {a3-highgpu-1g: 11.0}}\n", 1))
    doc = rightsize(capsys, str(stack), prometheus)
    small = by_workload(doc)["research/ft-small"]
    assert small["current"]["usdPerHour"] == 11.0 and small["target"]["usdPerHour"] == round(11.0 / 7, 4)
    assert small["usdPerMonthSaved"] == pytest.approx(
        monthly(small, "ml-dws") * 11.0 * 6 / 7, rel=span_rel(doc, "ml-dws")
    )


def test_scrape_config_labels_share_and_spot_for_an_interruptible_workload(
    prometheus: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = rightsize(capsys, "gcp-fleet", prometheus, "--interruptible", "ml/batch-eval")
    work = by_workload(doc)
    assert set(work) == {"ml/batch-eval", "ml/embed"}

    batch = work["ml/batch-eval"]
    a100 = PRICES["a2-highgpu-8g"] / 8
    # 4 GiB +20% is more than a 1g.5gb instance holds (4.75 GiB), and a 2g.10gb on spot (0.35 x 1/3 of an A100)
    # costs more than a spot T4 (N1 with an attached T4), whose 65 TFLOPS hold 9% of an A100's 312, +20%
    assert 4.0 * 1.2 > MIG_1G_5GB_GIB and "needs 4.8 GiB" in batch["reason"]
    t4_spot = round((PRICES["n1-standard-8"] + GPU_PRICES["nvidia-tesla-t4"]) * SPOT_FRACTION["gcp"], 3)
    assert t4_spot < a100 * SPOT_FRACTION["gcp"] / 3
    assert (batch["action"], batch["target"]["gpu"], batch["target"]["spot"]) == ("gpu", "t4", True)
    fleet = "ml-fleet-us-central1"
    assert batch["usdPerMonthSaved"] == pytest.approx(
        monthly(batch, fleet) * (a100 - t4_spot), rel=span_rel(doc, fleet)
    )
    assert batch["gpuHours"] == pytest.approx(held_hours("ml/batch-eval"), abs=0.05)

    embed = work["ml/embed"]
    l4_spot = round(PRICES["g2-standard-4"] * SPOT_FRACTION["gcp"], 3)  # node_rate rounds to 3 places
    assert (embed["action"], embed["target"]["detail"]) == ("share", "mps x4")
    assert (embed["current"]["spot"], embed["target"]["spot"]) == (True, True), "a spot workload stays on spot"
    assert embed["usdPerMonthSaved"] == pytest.approx(monthly(embed, fleet) * l4_spot * 0.75, rel=span_rel(doc, fleet))

    pools = by_pool(doc)
    assert (
        pools["ml-fleet-us-central1/training"]["peakNodes"],
        pools["ml-fleet-us-central1/training"]["peakGpus"],
    ) == (1, 1)
    assert pools["ml-fleet-europe-west4/training"]["peakNodes"] == 0
    saved = batch["usdPerMonthSaved"] + embed["usdPerMonthSaved"]
    assert doc["totals"]["usdPerMonthSaved"] == pytest.approx(saved, rel=1e-3)


def test_without_pool_labels_workloads_are_matched_by_gpu_model(
    prometheus: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = rightsize(capsys, "gcp-autopilot", prometheus)
    (llm,) = doc["workloads"]
    assert (llm["workload"], llm["pool"], llm["poolFrom"]) == ("llm", "training", "gpu model")
    assert (llm["action"], llm["target"]["detail"], llm["confidence"]["verdict"]) == ("mig", "3g.40gb", "low")
    saved = monthly(llm, "ml-autopilot") * PRICES["a3-highgpu-8g"] / 8 / 2
    assert llm["usdPerMonthSaved"] == pytest.approx(saved, rel=span_rel(doc, "ml-autopilot"))
    assert all(p["peakNodes"] is None for p in doc["pools"])
    assert any(
        "no kube_node_labels matching a pool" in n and "cloud.google.com/gke-accelerator" in n for n in doc["notes"]
    )


def test_a_mig_pool_held_all_day_is_busy_and_its_utilisation_unknown(
    prometheus: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """aws-managed with its training pool (one p4d floor node) cut into 1g.5gb instances, seven of them held all
    day: dcgm-exporter writes memory series for MIG instances but no DCGM_FI_DEV_GPU_UTIL."""
    stack = variant(
        tmp_path,
        "aws-managed",
        "aws-managed-mig",
        "      spot: false\n      minNodes: 0\n",
        "      spot: false\n      minNodes: 1\n      sharing: {strategy: mig, migProfile: 1g.5gb}\n",
    )
    doc = rightsize(capsys, stack, prometheus)
    training = by_pool(doc)["ml-eks/training"]
    assert (training["minNodes"], training["peakNodes"], training["peakBusyNodes"], training["peakGpus"]) == (
        1,
        1,
        1,
        7,
    )
    assert training["recommendedFloor"] is None and training["usdPerMonthSaved"] == 0
    assert not any("lower it" in a for a in training["advice"])
    work = by_workload(doc)
    notebook = work["ml/notebook"]
    assert (notebook["pool"], notebook["pods"], notebook["peakUtilPercent"]) == ("training", 7, None)
    assert notebook["peakMemoryGib"] == 3.5 and notebook["action"] == "keep"
    assert "utilisation unknown" in notebook["reason"]
    assert notebook["gpuHours"] == pytest.approx(7 * held_hours("ml/notebook"), abs=0.2)
    assert notebook["confidence"]["gaps"] < 0.005, "samples counted from the memory series"
    embed = work["serve/embed"]
    assert (embed["pool"], embed["peakUtilPercent"], embed["memoryGib"]) == ("inference", 30.0, round(23028 / 1024, 2))
    assert doc["observedHours"] == pytest.approx(held_hours("ml-eks"), abs=0.05)


def test_overlapping_pool_classes_beside_a_cluster_with_the_same_node_names(
    prometheus: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """gcp-nap with an on-demand L4 class beside the spot one: a spot L4 node names the L4 accelerator too and
    belongs to the spot class only; another cluster's node of the same name (on demand there) stays out."""
    stack = variant(
        tmp_path,
        "gcp-nap",
        "gcp-nap-l4",
        "      maxNodes: 8\n",
        "      maxNodes: 8\n    - name: l4-standard\n      gpu: l4\n      gpusPerNode: 1\n      maxNodes: 2\n",
    )
    doc = rightsize(capsys, stack, prometheus)
    work = by_workload(doc)
    assert set(work) == {"serve/chat-spot", "serve/chat-od"}
    assert (work["serve/chat-spot"]["pool"], work["serve/chat-spot"]["current"]["spot"]) == ("l4", True)
    assert (work["serve/chat-od"]["pool"], work["serve/chat-od"]["current"]["spot"]) == ("l4-standard", False)
    pools = by_pool(doc)
    for name in ("ml-nap/l4", "ml-nap/l4-standard"):
        assert (pools[name]["peakNodes"], pools[name]["peakBusyNodes"], pools[name]["peakGpus"]) == (1, 1, 1), name
    assert pools["ml-nap/t4"]["peakNodes"] == 0


def test_table_names_each_change_and_the_confidence_rule(prometheus: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rightsize", "gcp-dws", "--prometheus", prometheus, "--at", str(AT)]) == 0
    text = capsys.readouterr().out
    assert "7d to" in text.splitlines()[0] and "30 h of GPU series held" in text.splitlines()[0]
    assert "mig 1g.10gb (h100)" in text and "nothing-smaller" in text
    assert f"{2 * PRICES['g2-standard-8'] * 730:,.2f}" in text and "unpriced: research/ft-small" in text
    assert "high: observed >= 168 h with <= 5% samples missing" in text


def error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["rightsize", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("error:") == 1 and "Traceback" not in err
    return err


def test_a_window_without_data_is_one_clear_error(prometheus: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = error(capsys, "gcp-dws", "--prometheus", prometheus, "--window", "1d", "--at", str(AT - 30 * 86400))
    assert "argument --window: " in err and "has no GPU series of this stack" in err
    assert "holds no DCGM_FI_DEV_FB_USED or DCGM_FI_DEV_GPU_UTIL at all then" in err
    err = error(capsys, "aws-karpenter", "--prometheus", prometheus, "--at", str(AT))
    assert 'DCGM_FI_DEV_FB_USED{cluster=~"ml-karpenter"} or DCGM_FI_DEV_GPU_UTIL{cluster=~"ml-karpenter"}' in err
    assert "'ml-dws'" in err and "'ml-eks'" in err


def test_unreachable_and_wrong_servers_are_one_clear_error(prometheus: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = error(capsys, "gcp-dws", "--prometheus", f"http://127.0.0.1:{free_port()}")
    assert "argument --prometheus: cannot reach Prometheus at http://127.0.0.1:" in err
    err = error(capsys, "gcp-dws", "--prometheus", f"{prometheus}/nope")
    assert f"argument --prometheus: {prometheus}/nope answered HTTP 404" in err
    with pytest.raises(InputError, match=r"answered HTTP 400: bad_data: .*parse error"):
        Prometheus(prometheus).query("sum(", AT)
