"""Autoscaled Deployments (`gpuplane:autoscaling`): KEDA scales each on a GPU or serving metric queried from the
stack's Prometheus (docs/autoscaling.md).

Checks of one workload run in its models; the ones that read other sections (the pools, the monitoring
integration, the platform) run over the validated config (`autoscaling_problems`, from `config.load`), so each
bad key is named at its own path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, ValidationInfo, field_validator

from .base import DNS_LABEL, Model, context_value, own_namespace, repeated, shaped, suggest, valid_labels

if TYPE_CHECKING:
    from .model import StackConfig

NAME_MAX = 40
"""A Deployment's pods are named `<name>-<ReplicaSet hash>-<5 characters>` and Kubernetes cuts a generated name's
base at 58 characters (apiserver pkg/storage/names `maxGeneratedNameLength`): at 40 the hash (up to 10) survives,
which the queries' pod pattern relies on."""
METRIC_NAME = shaped(
    r"^[a-zA-Z_:][a-zA-Z0-9_:]*$",
    "must be a Prometheus metric name: letters, digits, '_' and ':', not starting with a digit",
)
PORT_NAME = shaped(
    r"^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$",
    "must be a port name: at most 15 lowercase letters, digits and '-' (e.g. http)",
)
PATH = shaped(r"^/[!-~]*$", "must be an HTTP path starting with '/' (e.g. /metrics)")
URL = shaped(r"^https?://[^\s/]+(/\S*)?$", "must be an http(s) URL (e.g. http://prometheus-operated.monitoring:9090)")
GPU_KINDS = ("gpu-utilization", "gpu-memory")
NEEDS_URL = ("prometheus-operator", "scrape-config")
"""Integrations whose Prometheus gpuplane neither installs nor knows: the query address must be given."""


class Metric(Model):
    """What a workload scales on, and the value one replica should carry."""

    kind: Literal["serving", "gpu-utilization", "gpu-memory"]
    """`serving` (a metric the serving pods export, summed), `gpu-utilization` or `gpu-memory` (DCGM, the pods'
    GPUs averaged, in %)."""
    name: str | None = Field(default=None, pattern=METRIC_NAME, validate_default=True)
    """`serving`: the Prometheus metric, e.g. `vllm:num_requests_waiting`."""
    target: float = Field(gt=0)
    """`serving`: the value per replica (replicas = total / target); GPU kinds: the percentage to hold."""
    activation: float = Field(default=0, ge=0)
    """Scale up from zero replicas once the value exceeds this (KEDA `activationThreshold`)."""
    port: str = Field(default="http", pattern=PORT_NAME)
    """`serving`: the container port name that serves the metrics."""
    path: str = Field(default="/metrics", pattern=PATH)
    """`serving`: the metrics path."""
    servedBy: dict[str, str] | None = None
    """`serving`: pod labels of other pods in the namespace that export the metric (a router, a gateway), when the
    scaled pods do not; needed to scale to zero."""

    @field_validator("name")
    @classmethod
    def _named_for_serving(cls, v: str | None, info: ValidationInfo) -> str | None:
        kind = info.data.get("kind")
        if kind == "serving" and v is None:
            raise ValueError("required for a serving metric: the metric's name, e.g. vllm:num_requests_waiting")
        if kind in GPU_KINDS and v is not None:
            raise ValueError(f"{kind} reads the GPUs' DCGM series; a metric name goes with kind: serving")
        return v

    @field_validator("target")
    @classmethod
    def _percent(cls, v: float, info: ValidationInfo) -> float:
        if info.data.get("kind") in GPU_KINDS and v > 100:
            raise ValueError(f"a GPU percentage is at most 100, not {v:g}")
        return v

    @field_validator("servedBy")
    @classmethod
    def _labels(cls, v: dict[str, str] | None, info: ValidationInfo) -> dict[str, str] | None:
        if v is None:
            return v
        if info.data.get("kind") in GPU_KINDS:
            raise ValueError("applies to kind: serving (GPU series come from the GPU exporter)")
        if not v:
            raise ValueError("at least one pod label")
        return valid_labels(v)


QUANTITY = shaped(
    r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$",
    "must be a Kubernetes quantity: a number and an optional unit m, k, M, G, T, Ki, Mi, Gi or Ti (e.g. 500m, 3Gi)",
)
"""A Kubernetes resource quantity as gpuplane accepts it (apimachinery resource.Quantity, decimal and binary SI)."""


class Deployment(Model):
    """The inference Deployment gpuplane creates, with a Service, on one GPU pool (`placement()`)."""

    pool: str
    """The GPU pool its pods run on."""
    gpus: int = Field(default=1, ge=1)
    """GPUs (or the pool's MIG slices or shares) per replica."""
    image: str | None = Field(default=None, min_length=1)
    """Container image; unset: vLLM's OpenAI-compatible server, pinned in `gpuplane.pins.IMAGES`."""
    args: list[str] = Field(default_factory=list)
    """Container arguments (vLLM: `--model`, ...)."""
    port: int = Field(default=8000, ge=1, le=65535)
    """The port serving requests and metrics (named `http`; vLLM is told with `--port`)."""
    cpu: str = Field(default="500m", pattern=QUANTITY)
    """CPU request per replica (a Kubernetes quantity)."""
    memory: str = Field(default="3Gi", pattern=QUANTITY)
    """Memory request per replica (a Kubernetes quantity): vLLM's server and engine with torch and CUDA; raise it
    for bigger models."""
    stores: dict[str, str] = Field(default_factory=dict)
    """Model stores (`gpuplane:storage`) to mount, by name, at a path each (e.g. `{models: /models}`): read-only
    where `serviceAccount` reads the store, read-write where it writes it."""
    serviceAccount: str | None = Field(default=None, pattern=DNS_LABEL, max_length=63)
    """The service account the pods run as: with `stores`, one the stores name in the workload's namespace."""

    @field_validator("stores")
    @classmethod
    def _absolute_paths(cls, v: dict[str, str]) -> dict[str, str]:
        bad = sorted(path for path in v.values() if not path.startswith("/") or path.rstrip("/") in ("", "/dev/shm"))
        if bad:
            raise ValueError(f"mount paths must be absolute and not / or /dev/shm (got {', '.join(map(repr, bad))})")
        dupes = repeated([p.rstrip("/") for p in v.values()])
        if dupes:
            raise ValueError(f"two stores at one path ({', '.join(dupes)})")
        return v

    @field_validator("pool")
    @classmethod
    def _known_pool(cls, v: str, info: ValidationInfo) -> str:
        known = context_value(info, "pool_names")
        if isinstance(known, list) and v not in known:
            pools = [str(n) for n in known]
            raise ValueError(f"no GPU pool named {v!r}{suggest(v, pools)} (pools: {', '.join(pools) or 'none'})")
        return v


class Workload(Model):
    """One Deployment KEDA scales."""

    name: str = Field(pattern=DNS_LABEL, min_length=1, max_length=NAME_MAX)
    """The Deployment's name (at most 40 characters)."""
    namespace: str = Field(default="default", pattern=DNS_LABEL, max_length=63)
    """Its namespace (gpuplane creates it for a Deployment it creates, unless it is `default`)."""
    deployment: Deployment | None = None
    """Create the Deployment on a GPU pool; unset: a Deployment of this name exists (say its `podLabels`)."""
    podLabels: dict[str, str] | None = None
    """An existing Deployment's pod labels: a serving metric is scraped from the pods that carry them."""
    metric: Metric
    """The signal and its target."""
    minReplicas: int = Field(default=1, ge=0)
    """Fewest replicas; 0 scales to zero (a serving metric `servedBy` other pods)."""
    maxReplicas: int = Field(ge=1)
    """Most replicas."""

    @field_validator("namespace")
    @classmethod
    def _not_system(cls, v: str) -> str:
        return own_namespace(v, "run the workload in one of its own")

    @field_validator("podLabels")
    @classmethod
    def _existing_only(cls, v: dict[str, str] | None, info: ValidationInfo) -> dict[str, str] | None:
        if v is None:
            return v
        if info.data.get("deployment") is not None:
            raise ValueError("gpuplane labels the pods of the Deployment it creates; podLabels name an existing one's")
        if not v:
            raise ValueError("at least one pod label")
        return valid_labels(v)

    @field_validator("minReplicas")
    @classmethod
    def _zero_needs_a_survivor(cls, v: int, info: ValidationInfo) -> int:
        metric = info.data.get("metric")
        if v == 0 and isinstance(metric, Metric) and metric.servedBy is None:
            what = "GPU series" if metric.kind in GPU_KINDS else f"{metric.name} series"
            raise ValueError(
                f"at zero replicas the scaled pods' {what} are gone, so KEDA would never scale it up again: keep "
                "minReplicas at 1 or more, or take a serving metric from pods that stay up (metric.servedBy)"
            )
        return v

    @field_validator("maxReplicas")
    @classmethod
    def _max_ge_min(cls, v: int, info: ValidationInfo) -> int:
        low = info.data.get("minReplicas")
        if isinstance(low, int) and v < low:
            raise ValueError(f"must be at least minReplicas ({low})")
        return v


class AutoscalingConfig(Model):
    """KEDA, and one ScaledObject per workload on a GPU or serving metric of the stack's Prometheus."""

    prometheusUrl: str | None = Field(default=None, pattern=URL)
    """The Prometheus HTTP API KEDA queries. Unset: kube-prometheus-stack's Service (`install`) or GKE Managed
    Prometheus' API of the project (`gke-managed`); required with `prometheus-operator` and `scrape-config`."""
    workloads: list[Workload] = Field(min_length=1)
    """The scaled Deployments."""

    @field_validator("workloads")
    @classmethod
    def _unique(cls, v: list[Workload]) -> list[Workload]:
        names = [w.name for w in v]
        dupes = repeated(names)
        if dupes:
            raise ValueError(f"workload names must be unique (repeated: {', '.join(dupes)})")
        return v


def url_problem(integration: str, url: str | None) -> str | None:
    """Why a missing Prometheus address is refused, for the integrations whose Prometheus gpuplane does not know."""
    if url is not None or integration not in NEEDS_URL:
        return None
    return (
        f"required with monitoring.integration {integration}: gpuplane does not know where your Prometheus answers "
        "queries (e.g. http://prometheus-operated.monitoring:9090, a Prometheus Operator's Service)"
    )


def autoscaling_problems(cfg: StackConfig) -> list[tuple[tuple[str | int, ...], str]]:
    """What one workload's models cannot see: the integration's Prometheus address, the pool's GPUs and how it
    hands them out, and the scrape target of an existing Deployment's serving metric."""
    a = cfg.autoscaling
    if a is None:
        return []
    out: list[tuple[tuple[str | int, ...], str]] = []
    integration = cfg.monitoring.integration
    missing = url_problem(integration, a.prometheusUrl)
    if missing:
        out.append((("autoscaling", "prometheusUrl"), missing))
    pools = {p.name: p for p in cfg.gpuPools}
    for i, w in enumerate(a.workloads):
        at: tuple[str | int, ...] = ("autoscaling", "workloads", i)
        d = w.deployment
        if d is not None and d.pool in pools:
            from ..scheduling.placement import node_units

            units = node_units(cfg, d.pool)
            if d.gpus > units:
                out.append(((*at, "deployment", "gpus"), f"{d.pool} nodes offer 1 to {units}, not {d.gpus}"))
        if d is None and w.podLabels is None and w.metric.kind == "serving" and w.metric.servedBy is None:
            out.append(
                (
                    (*at, "podLabels"),
                    f"required to scrape {w.metric.name} from the existing Deployment {w.name}: its pods' labels "
                    "(or create it with deployment, or name the pods that serve the metric in metric.servedBy)",
                )
            )
    return out
