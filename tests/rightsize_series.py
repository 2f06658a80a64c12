"""Generated GPU series for the rightsizing test: OpenMetrics text (timestamps in seconds, `# EOF`) for
`promtool tsdb create-blocks-from openmetrics`, deterministic given the window's end `at`.

Three shipped stacks share one Prometheus, told apart by their clusters (as the stacks' series are):

- gcp-dws (GKE Managed Prometheus labels: node in `node`, the workload's namespace in `exported_namespace`):
  nodes are told apart by GKE's node-pool and accelerator labels (kube-state-metrics with the allowlist);
  the `serving` pool keeps its 4 reserved L4 nodes all along but only one is ever busy (an oversized floor);
  `research/ft-small` peaks at 6 GiB and 11% of an H100 (fits `1g.10gb` with 20% margin) and misses 10% of
  its samples; `research/ft-large` peaks at 60 GiB and 97% (fits nothing smaller); `prod/chat` fills its L4.
  Idle GPUs (no pod) and a decoy cluster's series must be ignored.
- gcp-fleet (the scrape-config job's labels: node in `kubernetes_node`): `ml/batch-eval` on an A100 40GB fits
  `1g.5gb`; `ml/embed` on an L4 (no MIG) fits an MPS share of four.
- gcp-autopilot (GKE's managed DCGM labels) whose kube-state-metrics exposes no node labels: `serve/llm` on an
  H100 is matched to a pool by its GPU model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

STEP = 15
"""The stacks' scrape interval (the default `monitoring.scrapeInterval`)."""
KSM_STEP = 60
HOUR = 3600
DWS = {"cluster": "ml-dws", "location": "us-east4", "project_id": "acme-ml-prod", "namespace": "gpu-monitoring"}
FLEET = {"cluster": "ml-fleet-us-central1", "region": "us-central1"}
AUTOPILOT = {"cluster": "ml-autopilot", "location": "us-central1", "project_id": "acme-ml-prod"}
H100, L4, A100 = "NVIDIA H100 80GB HBM3", "NVIDIA L4", "NVIDIA A100-SXM4-40GB"


def wave(i: int) -> float:
    """A deterministic value in [0.5, 1] for sample `i`."""
    return 0.5 + 0.5 * ((i * 7919) % 97) / 96


@dataclass
class Held:
    """One GPU a pod holds from `start` to `end` hours before `at`, with its peaks."""

    labels: dict[str, str]
    start_h: float
    end_h: float
    memory_gib: float
    util: float
    gap: tuple[float, float] | None = None
    """Hours before `at` between which no sample was scraped."""


@dataclass
class Series:
    lines: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(
        self, metric: str, labels: dict[str, str], start: int, end: int, step: int, value: Callable[[int], float]
    ) -> None:
        text = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        for n, ts in enumerate(range(start, end + 1, step)):
            v = value(n)
            if v == v:  # NaN: a gap
                self.lines[metric].append(f"{metric}{{{text}}} {v:g} {ts}")

    def held(self, at: int, h: Held) -> None:
        start, end = at - int(h.start_h * HOUR), at - int(h.end_h * HOUR)
        peak_at = (end - start) // STEP // 2
        gap = (at - int(h.gap[0] * HOUR), at - int(h.gap[1] * HOUR)) if h.gap else (0, -1)

        def shaped(peak: float) -> Callable[[int], float]:
            def value(n: int) -> float:
                if gap[0] <= start + n * STEP < gap[1]:
                    return float("nan")
                return peak if n == peak_at else round(peak * 0.6 * wave(n), 1)

            return value

        self.add("DCGM_FI_DEV_GPU_UTIL", h.labels, start, end, STEP, shaped(h.util))
        self.add("DCGM_FI_DEV_FB_USED", h.labels, start, end, STEP, shaped(h.memory_gib * 1024))

    def text(self) -> str:
        out = []
        for metric, lines in self.lines.items():
            out += [f"# TYPE {metric} gauge", *lines]
        return "\n".join([*out, "# EOF", ""])


def dcgm(base: dict[str, str], node_label: str, node: str, gpu: str, model: str, **workload: str) -> dict[str, str]:
    return {**base, node_label: node, "gpu": gpu, "UUID": f"GPU-{node[-6:]}-{gpu}", "modelName": model, **workload}


GKE_POOL, GKE_ACCELERATOR, GKE_SPOT = (
    "label_cloud_google_com_gke_nodepool",
    "label_cloud_google_com_gke_accelerator",
    "label_cloud_google_com_gke_spot",
)
"""The GKE node labels that select a pool's nodes, as kube-state-metrics names them when allowed."""


def node_labels(series: Series, at: int, cluster: dict[str, str], node: str, start_h: float, **allowed: str) -> None:
    """kube-state-metrics' `kube_node_labels` of a node, with the node labels its allowlist lets through."""
    labels = {"cluster": cluster["cluster"], "node": node, "job": "kube-state-metrics", **allowed}
    series.add("kube_node_labels", labels, at - int(start_h * HOUR), at - HOUR, KSM_STEP, lambda n: 1.0)


def gke(pool: str, accelerator: str, spot: bool = False) -> dict[str, str]:
    return {GKE_POOL: pool, GKE_ACCELERATOR: accelerator, **({GKE_SPOT: "true"} if spot else {})}


def generate(at: int) -> str:
    """The OpenMetrics text of every series, ending an hour before `at`."""
    s = Series()
    serving = [f"gke-ml-dws-serving-{i}" for i in range(4)]
    finetune = ["gke-ml-dws-finetune-0", "gke-ml-dws-finetune-1"]
    for node in serving:
        node_labels(s, at, DWS, node, 46, **gke("serving", "nvidia-l4"))
    for node in finetune:
        node_labels(s, at, DWS, node, 28, **gke("finetune", "nvidia-h100-80gb"))
    for h in (
        Held(
            dcgm(DWS, "node", serving[0], "0", L4, exported_namespace="prod", pod="chat-6c9f7b8d4f-k2x7p"),
            31,
            1,
            20,
            92,
        ),
        Held(
            dcgm(DWS, "node", finetune[0], "0", H100, exported_namespace="research", pod="ft-small-7d9f8b6c4d-x2m4q"),
            27,
            1,
            6,
            11,
            gap=(20, 17.4),
        ),
        Held(dcgm(DWS, "node", finetune[1], "0", H100, exported_namespace="research", pod="ft-large-0"), 26, 1, 60, 97),
        # another cluster's workload in the same Prometheus
        Held(
            dcgm(
                {**DWS, "cluster": "other"},
                "node",
                "gke-other-0",
                "0",
                H100,
                exported_namespace="research",
                pod="ft-tiny-0",
            ),
            3,
            1,
            1,
            1,
        ),
    ):
        s.held(at, h)
    for node in serving[1:]:  # idle GPUs: the exporter's series without a pod
        s.add("DCGM_FI_DEV_GPU_UTIL", dcgm(DWS, "node", node, "0", L4), at - 3 * HOUR, at - HOUR, STEP, lambda n: 0.0)

    training, inference = "gke-ml-fleet-us-central1-training-0", "gke-ml-fleet-us-central1-inference-0"
    node_labels(s, at, FLEET, training, 27, **gke("training", "nvidia-tesla-a100"))
    node_labels(s, at, FLEET, inference, 27, **gke("inference", "nvidia-l4", spot=True))
    s.held(
        at,
        Held(dcgm(FLEET, "kubernetes_node", training, "0", A100, namespace="ml", pod="batch-eval-8x2kq"), 26, 1, 4, 9),
    )
    s.held(
        at,
        Held(
            dcgm(FLEET, "kubernetes_node", inference, "0", L4, namespace="ml", pod="embed-5b8d9c7f6d-q4w9z"),
            26,
            1,
            3,
            20,
        ),
    )

    node = "gk3-ml-autopilot-nap-1x2b3c4d"
    node_labels(s, at, AUTOPILOT, node, 13)  # a kube-state-metrics without the allowlist
    s.held(
        at,
        Held(dcgm(AUTOPILOT, "node", node, "3", H100, namespace="serve", pod="llm-6d8f9b7c5d-z2x4k"), 12.5, 1, 30, 35),
    )
    return s.text()
