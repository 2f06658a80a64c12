"""Typed args of `Keda` and `GpuAutoscaler`, and of a platform's `autoscaling` section (no `from __future__ import
annotations`: the multi-language package reads the annotations, as in `gpuplane.args.inputs`)."""

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import NotRequired, TypedDict

import pulumi

from .inputs import GpuNodes
from .platform import MonitoringIntegration


class ScalingSignal(StrEnum):
    """What a workload scales on."""

    SERVING = "serving"
    """A metric its serving pods export (e.g. vLLM's `vllm:num_requests_waiting`), summed over them: the target is
    per replica."""
    GPU_UTILIZATION = "gpu-utilization"
    """The GPU utilisation (%) of its pods' GPUs (DCGM), averaged: the target is a percentage."""
    GPU_MEMORY = "gpu-memory"
    """The framebuffer used (%) on its pods' GPUs (DCGM), averaged: the target is a percentage."""


class ScalingMetricArgs(TypedDict):
    """The signal and its target."""

    kind: ScalingSignal
    """`serving`, `gpu-utilization` or `gpu-memory`."""
    target: float
    """`serving`: the metric's value one replica should carry (KEDA `AverageValue`); GPU kinds: the utilisation or
    memory percentage to hold (KEDA `Value`: replicas grow in proportion)."""
    name: NotRequired[str]
    """`serving`: the Prometheus metric name, e.g. `vllm:num_requests_waiting`."""
    activation: NotRequired[float]
    """Scale up from zero replicas once the value exceeds this (KEDA `activationThreshold`, default 0)."""
    port: NotRequired[str]
    """`serving`: the container port name that serves `/metrics` (default `http`)."""
    path: NotRequired[str]
    """`serving`: the metrics path (default `/metrics`)."""
    served_by: NotRequired[Mapping[str, str]]
    """`serving`: pod labels of other pods that export the metric (a router or gateway in the same namespace) when the
    scaled pods do not. Needed to scale to zero: the scaled pods' own series vanish with them."""


class InferenceDeploymentArgs(TypedDict):
    """The Deployment `GpuAutoscaler` creates (and its Service), placed on one GPU pool."""

    gpu_nodes: GpuNodes
    """The pool (a pool component's `gpu_nodes` entry or a platform's): `placement()` puts the pods there."""
    image: NotRequired[str]
    """Container image (default: vLLM's OpenAI server, pinned in `gpuplane.pins.IMAGES`)."""
    args: NotRequired[Sequence[str]]
    """Container arguments (for vLLM: `--model`, ...)."""
    port: NotRequired[int]
    """The container port serving requests and `/metrics`, named `http` (default 8000)."""
    cpu: NotRequired[str]
    """CPU request per replica (a Kubernetes quantity, default `500m`)."""
    memory: NotRequired[str]
    """Memory request per replica (a Kubernetes quantity, default `3Gi`; raise it for bigger models)."""
    gpus: NotRequired[int]
    """GPUs (or the pool's MIG slices or shares) per replica (default 1)."""


class GpuAutoscalerArgs(TypedDict):
    """Arguments of `GpuAutoscaler`: which Deployment, on which signal, queried where."""

    deployment: str
    """Name of the Deployment to scale (at most 40 characters: its pods' names must keep the ReplicaSet hash)."""
    cluster: pulumi.Input[str]
    """Cluster name: the `cluster` label every gpuplane scrape writes, which the query selects."""
    integration: MonitoringIntegration
    """The stack's monitoring integration (`GpuMonitoring`'s): where the series are stored and under which labels."""
    metric: ScalingMetricArgs
    """The signal and its target."""
    max_replicas: int
    """Most replicas."""
    min_replicas: NotRequired[int]
    """Fewest replicas (default 1; 0 scales to zero, with a `serving` metric `served_by` other pods)."""
    namespace: NotRequired[str]
    """The Deployment's namespace (default `default`); it must exist."""
    create: NotRequired[InferenceDeploymentArgs]
    """Create the Deployment (and a Service) on a GPU pool; unset: it exists (say its `pod_labels`)."""
    pod_labels: NotRequired[Mapping[str, str]]
    """An existing Deployment's pod labels: a `serving` metric is scraped from the pods that carry them."""
    prometheus_url: NotRequired[pulumi.Input[str]]
    """The Prometheus HTTP API KEDA queries. Unset: kube-prometheus-stack's Service (`install`) or GKE Managed
    Prometheus' API of `gcp_project` (`gke-managed`); required with `prometheus-operator` and `scrape-config`."""
    gcp_project: NotRequired[pulumi.Input[str]]
    """`gke-managed`: the project whose Managed Prometheus holds the series."""
    install_namespace: NotRequired[str]
    """`install`: kube-prometheus-stack's namespace (default `monitoring`)."""
    selector_labels: NotRequired[Mapping[str, str]]
    """`prometheus-operator`: labels your Prometheus selects PodMonitors by (`install`: `release:
    kube-prometheus-stack`)."""
    region: NotRequired[pulumi.Input[str]]
    """Region label the serving scrape writes beside `cluster` (as the GPU scrape does)."""
    scrape_interval: NotRequired[str]
    """How often the serving pods are scraped (default `15s`)."""
    scrape_timeout: NotRequired[str]
    """How long a scrape of a serving pod may take, at most the interval (default `10s`)."""


class KedaArgs(TypedDict):
    """Arguments of `Keda`: where its pods run and how it reaches GKE Managed Prometheus."""

    namespace: NotRequired[str]
    """Namespace of KEDA (created here; default `keda`)."""
    node_selector: NotRequired[Mapping[str, str]]
    """Where KEDA's operator, metrics server and webhooks run (default gpuplane's system nodes)."""
    tolerations: NotRequired[Sequence[Mapping[str, str]]]
    """Tolerations of KEDA's pods (for tainted system nodes)."""
    gcp_service_account: NotRequired[pulumi.Input[str]]
    """A Google service account's email for KEDA's operator (Workload Identity): it reads GKE Managed Prometheus."""


class AutoscalingMetricArgs(TypedDict):
    """A workload's signal (`gpuplane:autoscaling.workloads[].metric`)."""

    kind: ScalingSignal
    """`serving`, `gpu-utilization` or `gpu-memory`."""
    target: float
    """Per replica (`serving`) or a percentage (GPU kinds)."""
    name: NotRequired[str]
    """`serving`: the metric's name."""
    activation: NotRequired[float]
    """Scale from zero above this (default 0)."""
    port: NotRequired[str]
    """`serving`: the container port name of `/metrics` (default `http`)."""
    path: NotRequired[str]
    """`serving`: the metrics path (default `/metrics`)."""
    served_by: NotRequired[Mapping[str, str]]
    """`serving`: pod labels of other pods that export the metric (needed for `min_replicas: 0`)."""


class AutoscalingDeploymentArgs(TypedDict):
    """The inference Deployment gpuplane creates (`gpuplane:autoscaling.workloads[].deployment`)."""

    pool: str
    """The GPU pool its pods run on."""
    gpus: NotRequired[int]
    """GPUs (or slices, shares) per replica (default 1)."""
    image: NotRequired[str]
    """Container image (default vLLM's OpenAI server, pinned)."""
    args: NotRequired[Sequence[str]]
    """Container arguments."""
    port: NotRequired[int]
    """Serving and metrics port (default 8000)."""
    stores: NotRequired[Mapping[str, str]]
    """Model stores (the platform's `storage`) to mount, by name, at a path each (e.g. `{"models": "/models"}`)."""
    service_account: NotRequired[str]
    """The service account the pods run as: with `stores`, one the stores name in the workload's namespace."""


class AutoscalingWorkloadArgs(TypedDict):
    """One scaled Deployment (`gpuplane:autoscaling.workloads[]`)."""

    name: str
    """The Deployment's name."""
    metric: AutoscalingMetricArgs
    """The signal and its target."""
    max_replicas: int
    """Most replicas."""
    namespace: NotRequired[str]
    """Its namespace (default `default`)."""
    deployment: NotRequired[AutoscalingDeploymentArgs]
    """Create it on a GPU pool; unset: it exists."""
    pod_labels: NotRequired[Mapping[str, str]]
    """An existing Deployment's pod labels (a `serving` metric is scraped from them)."""
    min_replicas: NotRequired[int]
    """Fewest replicas (default 1)."""


class AutoscalingArgs(TypedDict):
    """Deployments scaled by KEDA on GPU or serving metrics (`gpuplane:autoscaling`, docs/autoscaling.md)."""

    workloads: Sequence[AutoscalingWorkloadArgs]
    """The Deployments."""
    prometheus_url: NotRequired[str]
    """The Prometheus HTTP API KEDA queries (required with `prometheus-operator` and `scrape-config`)."""
