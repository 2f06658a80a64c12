"""Generated GPU series for the rightsizing test: OpenMetrics text (timestamps in seconds, `# EOF`) for
`promtool tsdb create-blocks-from openmetrics`, deterministic given the window's end `at`.

Three shipped stacks share one Prometheus, told apart by their clusters (as the stacks' series are):

- gcp-dws (GKE Managed Prometheus labels: node in `node`, the workload's namespace in `exported_namespace`):
  nodes are told apart by GKE's node-pool and accelerator labels (kube-state-metrics with the allowlist);
  the `serving` pool keeps its 4 reserved L4 nodes all along but only one is ever busy (an oversized floor);
  `research/ft-small` peaks at 6 GiB and 11% of an H100 (fits `1g.10gb` with 20% margin) and misses 10% of
  its samples; `research/ft-large` (pod `ft-large-master-0` of a PyTorchJob, as kube-state-metrics'
  `kube_pod_owner` says: no name rule gives that) peaks at 60 GiB and 97% (fits nothing smaller), and its
  exporter restarted half-way (a new `instance`: two series, no missing sample); `prod/chat` fills its L4.
  Idle GPUs (no pod) and a decoy cluster's series must be ignored.
- gcp-fleet (the scrape-config job's labels: node in `kubernetes_node`): `ml/batch-eval` on an A100 40GB peaks
  at 4 GiB, +20% 4.8 GiB: more than a `1g.5gb` instance holds (4.75 GiB), so a spot T4 is cheapest; `ml/embed`
  on a spot L4 (no MIG) fits an MPS share of four.
- gcp-autopilot (GKE's managed DCGM labels) whose kube-state-metrics exposes no node labels: `serve/llm` on an
  H100 is matched to a pool by its GPU model.
- aws-managed with its training pool cut into `1g.5gb` MIG instances (kube-prometheus-stack labels, as
  prometheus-operator's): one p4d node, its first A100's seven instances held all day by `ml/notebook`'s pods.
  MIG instances have memory series only (dcgm-exporter writes no DCGM_FI_DEV_GPU_UTIL for them); the spot
  A10G inference pool's `serve/embed` has both.
- gcp-nap with a second L4 class, on demand, beside the spot one: a spot L4 node names the accelerator too, so
  it matches both classes. Another cluster in the same Prometheus has a node of the same name, in the other
  class, with its own GPU held.

Every cluster's GPU series end an hour before `at`; `HOURS` gives when each held GPU's series start and end,
the independent oracle for the hours the command reports.
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
EKS = {"cluster": "ml-eks", "region": "us-east-1"}
NAP, NAP_OTHER = {"cluster": "ml-nap", "region": "us-central1"}, {"cluster": "ml-nap-eu", "region": "europe-west4"}
H100, L4, A100, A10G = "NVIDIA H100 80GB HBM3", "NVIDIA L4", "NVIDIA A100-SXM4-40GB", "NVIDIA A10G"
MIG_1G_5GB_GIB = 4.75
"""What `nvidia-smi mig -lgip` lists for an A100-40GB `1g.5gb` instance (MIG user guide)."""
HOURS: dict[str, tuple[float, float]] = {
    **dict.fromkeys(["ml-dws", "prod/chat"], (31, 1)),
    **{"research/ft-small": (27, 1), "research/ft-large": (26, 1)},
    **dict.fromkeys(["ml-fleet-us-central1", "ml/batch-eval", "ml/embed"], (26, 1)),
    **dict.fromkeys(["ml-autopilot", "serve/llm"], (12.5, 1)),
    **dict.fromkeys(["ml-eks", "ml/notebook", "serve/embed"], (25, 1)),
    **dict.fromkeys(["ml-nap"], (10, 1)),
}
"""Cluster or workload -> (hours before `at` its first GPU series start, hours before `at` its last end): a
cluster's from its earliest GPU series to its last."""


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
    util: float | None
    """Peak utilisation, or None: no utilisation series (a MIG instance)."""
    gap: tuple[float, float] | None = None
    """Hours before `at` between which no sample was scraped."""
    total_gib: float | None = None
    """Memory the device holds: adds DCGM_FI_DEV_FB_FREE (the total less the used)."""
    restart_h: float | None = None
    """Hours before `at` the exporter restarted: its series change `instance` then."""


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

        used = shaped(h.memory_gib * 1024)
        total = (h.total_gib or 0) * 1024
        restart = at - int(h.restart_h * HOUR) if h.restart_h is not None else end + STEP
        for instance, (first, last) in (("10.0.0.1:9400", (start, restart - STEP)), ("10.0.0.2:9400", (restart, end))):
            labels, skip = {**h.labels, "instance": instance}, (first - start) // STEP

            def series(value: Callable[[int], float], skip: int = skip) -> Callable[[int], float]:
                return lambda n: value(n + skip)

            if h.util is not None:
                self.add("DCGM_FI_DEV_GPU_UTIL", labels, first, last, STEP, series(shaped(h.util)))
            self.add("DCGM_FI_DEV_FB_USED", labels, first, last, STEP, series(used))
            if h.total_gib is not None:
                self.add("DCGM_FI_DEV_FB_FREE", labels, first, last, STEP, series(lambda n: total - used(n)))

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


OWNED = {"Pod": ("kube_pod_owner", "pod"), "ReplicaSet": ("kube_replicaset_owner", "replicaset")}


def owner(series: Series, at: int, cluster: dict[str, str], namespace: str, kind: str, name: str, *by: str) -> None:
    """kube-state-metrics' owner series of an object (scraped by GKE Managed Prometheus' PodMonitoring: the
    object's namespace in `exported_namespace`, the monitor's in `namespace`)."""
    metric, label = OWNED[kind]
    labels = {"cluster": cluster["cluster"], "namespace": "gmp-public", "exported_namespace": namespace, label: name}
    labels |= {"owner_kind": by[0], "owner_name": by[1], "owner_is_controller": "true", "job": "kube-state-metrics"}
    series.add(metric, labels, at - 40 * HOUR, at - HOUR, KSM_STEP, lambda n: 1.0)


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
            *HOURS["prod/chat"],
            20,
            92,
        ),
        Held(
            dcgm(DWS, "node", finetune[0], "0", H100, exported_namespace="research", pod="ft-small-7d9f8b6c4d-x2m4q"),
            *HOURS["research/ft-small"],
            6,
            11,
            gap=(20, 17.4),
        ),
        Held(
            dcgm(DWS, "node", finetune[1], "0", H100, exported_namespace="research", pod="ft-large-master-0"),
            *HOURS["research/ft-large"],
            60,
            97,
            restart_h=13,
        ),
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
    owner(s, at, DWS, "research", "Pod", "ft-large-master-0", "PyTorchJob", "ft-large")  # not a name rule's
    owner(s, at, DWS, "prod", "Pod", "chat-6c9f7b8d4f-k2x7p", "ReplicaSet", "chat-6c9f7b8d4f")
    owner(s, at, DWS, "prod", "ReplicaSet", "chat-6c9f7b8d4f", "Deployment", "chat")
    for node in serving[1:]:  # idle GPUs: the exporter's series without a pod
        s.add("DCGM_FI_DEV_GPU_UTIL", dcgm(DWS, "node", node, "0", L4), at - 3 * HOUR, at - HOUR, STEP, lambda n: 0.0)

    training, inference = "gke-ml-fleet-us-central1-training-0", "gke-ml-fleet-us-central1-inference-0"
    node_labels(s, at, FLEET, training, 27, **gke("training", "nvidia-tesla-a100"))
    node_labels(s, at, FLEET, inference, 27, **gke("inference", "nvidia-l4", spot=True))
    s.held(
        at,
        Held(
            dcgm(FLEET, "kubernetes_node", training, "0", A100, namespace="ml", pod="batch-eval-8x2kq"),
            *HOURS["ml/batch-eval"],
            4,
            9,
        ),
    )
    s.held(
        at,
        Held(
            dcgm(FLEET, "kubernetes_node", inference, "0", L4, namespace="ml", pod="embed-5b8d9c7f6d-q4w9z"),
            *HOURS["ml/embed"],
            3,
            20,
        ),
    )

    node = "gk3-ml-autopilot-nap-1x2b3c4d"
    node_labels(s, at, AUTOPILOT, node, 13)  # a kube-state-metrics without the allowlist
    s.held(
        at,
        Held(
            dcgm(AUTOPILOT, "node", node, "3", H100, namespace="serve", pod="llm-6d8f9b7c5d-z2x4k"),
            *HOURS["serve/llm"],
            30,
            35,
        ),
    )
    eks(s, at)
    nap(s, at)
    return s.text()


def eks(s: Series, at: int) -> None:
    """aws-managed: a MIG node held all day, and a spot A10G node (kube-prometheus-stack's labels)."""
    p4d, g5 = "ip-10-0-1-23.ec2.internal", "ip-10-0-2-7.ec2.internal"
    start, end = HOURS["ml-eks"]
    node_labels(
        s, at, EKS, p4d, start, label_gpuplane_io_pool="training", label_eks_amazonaws_com_capacity_type="ON_DEMAND"
    )
    node_labels(s, at, EKS, g5, start, label_gpuplane_io_pool="inference", label_eks_amazonaws_com_capacity_type="SPOT")
    for i in range(7):
        mig = {"GPU_I_ID": str(7 + i), "GPU_I_PROFILE": "1g.5gb"}
        labels = dcgm(EKS, "kubernetes_node", p4d, "0", A100, namespace="ml", pod=f"notebook-{i}", **mig)
        s.held(at, Held(labels, start, end, 2.0 + 0.25 * i, None, total_gib=MIG_1G_5GB_GIB))
    for gpu in range(1, 8):  # the other GPUs' instances: memory series without a pod
        labels = dcgm(EKS, "kubernetes_node", p4d, str(gpu), A100, GPU_I_ID="7", GPU_I_PROFILE="1g.5gb")
        s.add("DCGM_FI_DEV_FB_USED", labels, at - 3 * HOUR, at - HOUR, STEP, lambda n: 0.0)
    labels = dcgm(EKS, "kubernetes_node", g5, "0", A10G, namespace="serve", pod="embed-5b8d9c7f6d-q4w9z")
    s.held(at, Held(labels, start, end, 5, 30, total_gib=23028 / 1024))


NAP_SPOT, NAP_ON_DEMAND, NAP_EU = "gke-ml-nap-nap-g2-spot-0", "gke-ml-nap-nap-g2-0", "gke-ml-nap-eu-nap-g2-9"


def nap(s: Series, at: int) -> None:
    """gcp-nap with spot and on-demand L4 classes, and another cluster sharing a node name."""
    start, end = HOURS["ml-nap"]
    node_labels(s, at, NAP, NAP_SPOT, start, **gke_nap("nvidia-l4", spot=True))
    node_labels(s, at, NAP, NAP_ON_DEMAND, start, **gke_nap("nvidia-l4"))
    node_labels(s, at, NAP_OTHER, NAP_SPOT, start, **gke_nap("nvidia-l4"))  # the same name, on demand, there
    node_labels(s, at, NAP_OTHER, NAP_EU, start, **gke_nap("nvidia-l4", spot=True))
    for cluster, node, pod in (
        (NAP, NAP_SPOT, "chat-spot-6c9f7b8d4f-k2x7p"),
        (NAP, NAP_ON_DEMAND, "chat-od-6c9f7b8d4f-z8x2q"),
        (NAP_OTHER, NAP_SPOT, "chat-eu-6c9f7b8d4f-w2c4v"),
        (NAP_OTHER, NAP_EU, "chat-eu-6c9f7b8d4f-m7n2b"),
    ):
        labels = dcgm(cluster, "kubernetes_node", node, "0", L4, namespace="serve", pod=pod)
        s.held(at, Held(labels, start, end, 10, 60))


def gke_nap(accelerator: str, spot: bool = False) -> dict[str, str]:
    """The node labels NAP's node pools carry that select a GPU class (no node-pool name: NAP makes them)."""
    return {GKE_ACCELERATOR: accelerator, **({GKE_SPOT: "true"} if spot else {})}
