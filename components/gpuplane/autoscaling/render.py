"""What `GpuAutoscaler` applies, as plain manifests: the inference Deployment and its Service (when gpuplane
creates them), the scrape of the serving pods for the stack's integration, a KEDA TriggerAuthentication where the
Prometheus needs one, and the ScaledObject (keda.sh/v1alpha1, KEDA v2.20.2).

- On a DRA pool the pods claim their GPUs through a ResourceClaimTemplate of the Deployment (`placement()`'s).
- ScaledObject: `scaleTargetRef` the Deployment, one `prometheus` trigger (kedacore/keda v2.20.2
  pkg/scalers/prometheus_scaler.go: `serverAddress`, `query`, `threshold`, `activationThreshold`). A serving
  metric is a total, so `metricType: AverageValue` (the HPA keeps total / replicas at the threshold); a GPU
  percentage is already an average, so `Value` (the HPA scales replicas by value / threshold) (Kubernetes docs,
  "Horizontal Pod Autoscaling", algorithm details). KEDA's own HPA owns the replica count, so the Deployment
  leaves `replicas` unset.
- GKE Managed Prometheus answers PromQL at `monitoring.googleapis.com/v1/projects/<project>/location/global/
  prometheus` with Google credentials: a TriggerAuthentication with `podIdentity.provider: gcp` makes KEDA's
  operator use its Workload Identity (keda v2.20.2 pkg/scalers/gcp/gcp_common.go `GetGCPAuthorization`).
- The serving scrape per integration: a PodMonitor (prometheus-operator, install), a PodMonitoring (gke-managed),
  or a scrape job for your Prometheus (scrape-config), each writing `namespace`, `pod`, `container`, `cluster`
  (and `region`) and a `job` the query selects (`queries.serving_job`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..monitoring.labels import LabelModel
from ..monitoring.scrape import _literal, sd_label
from ..monitoring.stack import KPS_RELEASE
from ..text import yamltext
from . import queries as q

API_VERSION = "keda.sh/v1alpha1"
"""The version of KEDA's ScaledObject and TriggerAuthentication CRDs (keda.sh_scaledobjects.yaml, v2.20.2)."""
MANAGED_BY = MappingProxyType({"app.kubernetes.io/managed-by": "gpuplane"})
SCALE_TARGET = "gpuplane.io/scale-target"
"""Annotation on a ScaledObject whose Deployment gpuplane does not create (value `external`): the deploy simulator
then does not look for it in the plan."""
SKIP_AWAIT = "pulumi.com/skipAwait"
VLLM_IMAGE = "vllm/vllm-openai:"
"""pulumi-kubernetes waits for a Deployment's rollout unless this annotation is "true" (provider/pkg/await): an
inference Deployment may wait for a GPU node and a model download, which is KEDA's and the node autoscaler's
business, not `pulumi up`'s."""
GMP_API = "https://monitoring.googleapis.com/v1/projects/{project}/location/global/prometheus"
"""GKE Managed Prometheus' Prometheus-compatible query API (GKE docs, "Managed Service for Prometheus: query using
the Prometheus API"; KEDA docs, Prometheus scaler with Google Managed Prometheus)."""
GMP_HOST = "https://monitoring.googleapis.com/"
METRICS_PORT = "http"
"""The name of the created Deployment's container port: requests and `/metrics` (vLLM serves both on one port)."""
KPS_PROMETHEUS_PORT = 9090
"""kube-prometheus-stack's Service `<fullname>-prometheus` (templates/prometheus/service.yaml; values
`prometheus.service.port` 9090); the fullname is the release name when it contains the chart's name (_helpers.tpl)."""


@dataclass(frozen=True)
class Inference:
    """The Deployment gpuplane creates: its container and the pool's `placement()` fragment."""

    image: str
    fragment: Mapping[str, Any]
    args: Sequence[str] = ()
    port: int = 8000
    cpu: str = "500m"
    """CPU request per replica (a GPU pod without one is BestEffort: evicted first, and invisible to node sizing)."""
    memory: str = "3Gi"
    """Memory request per replica: vLLM's API server and engine process with torch and CUDA, for a small model."""
    stores: Mapping[str, Any] = field(default_factory=dict)
    """Model stores it mounts: `gpuplane.storage`'s fragment (`serviceAccountName`, `volumes`, `volumeMounts`,
    `annotations`), or empty."""


@dataclass(frozen=True)
class Serving:
    """Where a serving metric is scraped: the pods (by labels), their port name and path."""

    pod_labels: Mapping[str, str]
    port: str = METRICS_PORT
    path: str = "/metrics"


@dataclass(frozen=True)
class AutoscalerSpec:
    """One scaled Deployment, resolved (from typed args, or from a stack's `gpuplane:autoscaling`)."""

    deployment: str
    namespace: str
    cluster: str
    integration: str
    model: LabelModel
    """The label model of the stack's integration (`monitoring.labels.label_model`)."""
    kind: str
    """`serving`, `gpu-utilization` or `gpu-memory`."""
    target: float
    max_replicas: int
    server_address: str
    metric: str = ""
    """`serving`: the metric's name."""
    activation: float = 0.0
    min_replicas: int = 1
    region: str = ""
    create: Inference | None = None
    serving: Serving | None = None
    """`serving`: what the scrape selects."""
    monitor_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the Prometheus selects PodMonitors by (prometheus-operator, install)."""
    interval: str = "15s"
    timeout: str = "10s"
    """The serving scrape's interval and timeout (the stack's `monitoring.scrapeInterval` / `scrapeTimeout`)."""

    @property
    def google_auth(self) -> bool:
        """Whether the query goes to Google's API (GKE Managed Prometheus) with the operator's Google identity."""
        return self.server_address.startswith(GMP_HOST)

    @property
    def job(self) -> str:
        return q.serving_job(self.integration, self.namespace, self.deployment)


def server_address(integration: str, given: str | None, install_namespace: str, project: str) -> str:
    """Where KEDA queries: the given address, else kube-prometheus-stack's Service (`install`) or the GKE Managed
    Prometheus API of `project` (`gke-managed`). The config requires an address for the other integrations."""
    if given:
        return given
    if integration == "install":
        return f"http://{KPS_RELEASE}-prometheus.{install_namespace}.svc:{KPS_PROMETHEUS_PORT}"
    if integration == "gke-managed":
        return GMP_API.format(project=project)
    raise ValueError(f"no Prometheus address for integration {integration}")  # the config refuses it first


def pod_labels(deployment: str) -> dict[str, str]:
    """The labels of a created Deployment's pods; the first selects them."""
    return {"app.kubernetes.io/name": deployment, **MANAGED_BY}


def selector_labels(deployment: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": deployment}


def query(s: AutoscalerSpec) -> str:
    if s.kind == "serving":
        return q.serving_query(s.metric, s.job, s.namespace, s.cluster, s.integration == "gke-managed")
    return q.gpu_query(s.kind, s.model, s.namespace, s.deployment, s.cluster, s.integration == "gke-managed")


def _number(x: float) -> str:
    return f"{x:g}"


def auth_name(s: AutoscalerSpec) -> str:
    return f"{s.deployment}-gmp"


def trigger(s: AutoscalerSpec) -> dict[str, Any]:
    metadata = {
        "serverAddress": s.server_address,
        "query": query(s),
        "threshold": _number(s.target),
        "activationThreshold": _number(s.activation),
    }
    out: dict[str, Any] = {
        "type": "prometheus",
        "name": s.kind,
        "metricType": "AverageValue" if s.kind == "serving" else "Value",
        "metadata": metadata,
    }
    if s.google_auth:
        out["authenticationRef"] = {"name": auth_name(s), "kind": "TriggerAuthentication"}
    return out


def _meta(name: str, namespace: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY), **extra}


def scaled_object(s: AutoscalerSpec) -> dict[str, Any]:
    md = _meta(s.deployment, s.namespace)
    if s.create is None:
        md["annotations"] = {SCALE_TARGET: "external"}
    return {
        "apiVersion": API_VERSION,
        "kind": "ScaledObject",
        "metadata": md,
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": s.deployment},
            "minReplicaCount": s.min_replicas,
            "maxReplicaCount": s.max_replicas,
            "triggers": [trigger(s)],
        },
    }


def trigger_authentication(s: AutoscalerSpec) -> dict[str, Any]:
    """KEDA's operator authenticates with its own Google identity (Workload Identity)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "TriggerAuthentication",
        "metadata": _meta(auth_name(s), s.namespace),
        "spec": {"podIdentity": {"provider": "gcp"}},
    }


def deployment(s: AutoscalerSpec) -> dict[str, Any]:
    """The inference Deployment on the pool (`placement()`'s resources, affinity, tolerations, node selector and
    pod annotations), one container serving requests and metrics on port `http`, `/dev/shm` in memory (vLLM's
    workers share tensors there: vLLM docs, "Using Docker"), ready once the port answers; no privilege escalation,
    no capabilities, the runtime's seccomp profile, no API token (tests/checkov-allowlist.yaml says what is left)."""
    assert s.create is not None
    c, f = s.create, s.create.fragment
    # vLLM answers /health once the engine is up (vLLM docs, "OpenAI-compatible server": health endpoint).
    port = {"httpGet": {"path": "/health", "port": METRICS_PORT}}
    resources = {k: dict(v) for k, v in f["resources"].items()}
    resources["requests"] = {"cpu": c.cpu, "memory": c.memory, **resources.get("requests", {})}
    container: dict[str, Any] = {
        "name": "server",
        "image": c.image,
        "imagePullPolicy": "Always",  # the security baseline (checkov CKV_K8S_15): a tag is re-checked on each start
        "ports": [{"name": METRICS_PORT, "containerPort": c.port}],
        "resources": resources,
        # The port opens once the model is loaded: up to 20 minutes for the startup (a model download on a new node),
        # then ready and alive while it answers.
        "startupProbe": {**port, "periodSeconds": 10, "failureThreshold": 120},
        "readinessProbe": {**port, "periodSeconds": 10},
        "livenessProbe": {**port, "periodSeconds": 20, "failureThreshold": 3},
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}, *c.stores.get("volumeMounts", [])],
    }
    args = list(c.args)
    if c.image.startswith(VLLM_IMAGE) and "--port" not in args and c.port != 8000:
        args += ["--port", str(c.port)]  # vLLM listens on 8000 unless told
    if args:
        container["args"] = args
    pod: dict[str, Any] = {
        "automountServiceAccountToken": False,  # a model server has no business with the Kubernetes API
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
        "affinity": f["affinity"],
        "tolerations": f["tolerations"],
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}, *c.stores.get("volumes", [])],
    }
    if c.stores.get("serviceAccountName"):
        pod["serviceAccountName"] = c.stores["serviceAccountName"]
    if "nodeSelector" in f:
        pod["nodeSelector"] = dict(f["nodeSelector"])
    if "resourceClaimTemplate" in f:  # a DRA pool: the pods claim their GPUs through the Deployment's template
        pod["resourceClaims"] = [
            {"name": c["name"], "resourceClaimTemplateName": claim_name(s)} for c in f.get("resourceClaims") or []
        ]
    template_md: dict[str, Any] = {"labels": pod_labels(s.deployment)}
    annotations = {**dict(f.get("annotations") or {}), **dict(c.stores.get("annotations") or {})}
    if annotations:
        template_md["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(s.deployment, s.namespace, annotations={SKIP_AWAIT: "true"}),
        "spec": {
            "selector": {"matchLabels": selector_labels(s.deployment)},
            "template": {"metadata": template_md, "spec": pod},
        },
    }


def claim_name(s: AutoscalerSpec) -> str:
    return f"{s.deployment}-gpus"


def claim_template(s: AutoscalerSpec) -> dict[str, Any] | None:
    """On a DRA pool: the ResourceClaimTemplate each replica claims its GPUs from (`placement()`'s, named after the
    Deployment in its namespace), else None."""
    template = s.create.fragment.get("resourceClaimTemplate") if s.create is not None else None
    if template is None:
        return None
    return {**template, "metadata": _meta(claim_name(s), s.namespace)}


def service(s: AutoscalerSpec) -> dict[str, Any]:
    assert s.create is not None
    return {
        "apiVersion": "v1",
        "kind": "Service",
        # Endpoints come only once a GPU node is up and a model loaded, later than pulumi-kubernetes waits (10 min).
        "metadata": _meta(s.deployment, s.namespace, annotations={SKIP_AWAIT: "true"}),
        "spec": {
            "selector": selector_labels(s.deployment),
            "ports": [{"name": METRICS_PORT, "port": s.create.port, "targetPort": METRICS_PORT}],
        },
    }


def _static(s: AutoscalerSpec) -> dict[str, str]:
    return {"cluster": s.cluster, **({"region": s.region} if s.region else {})}


def pod_monitor(s: AutoscalerSpec) -> dict[str, Any]:
    """prometheus-operator: the operator writes `namespace`, `container`, `pod`, `endpoint` and `job`
    (`<namespace>/<name>`) on the pods' series (pkg/prometheus/promcfg.go `generatePodMonitorConfig`); the
    relabelings add the `cluster` (and `region`) the GPU scrape writes."""
    assert s.serving is not None
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": q.monitor_name(s.deployment), "namespace": s.namespace, "labels": dict(s.monitor_labels)},
        "spec": {
            "selector": {"matchLabels": dict(s.serving.pod_labels)},
            "podMetricsEndpoints": [
                {
                    "port": s.serving.port,
                    "path": s.serving.path,
                    "interval": s.interval,
                    "scrapeTimeout": s.timeout,
                    "relabelings": [
                        {"targetLabel": k, "replacement": v, "action": "replace"} for k, v in sorted(_static(s).items())
                    ],
                }
            ],
        },
    }


def pod_monitoring(s: AutoscalerSpec) -> dict[str, Any]:
    """GKE Managed Prometheus: `namespace` is the PodMonitoring's, here the workload's own (pod_config.go); `job`
    its name; `cluster`, `location`, `project_id` GMP's; `pod` and `container` asked for as metadata labels."""
    assert s.serving is not None
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": _meta(q.monitor_name(s.deployment), s.namespace),
        "spec": {
            "selector": {"matchLabels": dict(s.serving.pod_labels)},
            "endpoints": [
                {"port": s.serving.port, "path": s.serving.path, "interval": s.interval, "timeout": s.timeout}
            ],
            "targetLabels": {"metadata": ["pod", "container"]},
        },
    }


def scrape_job(s: AutoscalerSpec) -> dict[str, Any]:
    """scrape-config: a job for your Prometheus that writes what the PodMonitor path writes (the pods' `namespace`,
    `pod`, `container`, gpuplane's `cluster` and `region`), under the PodMonitor's job name."""
    assert s.serving is not None
    keep = [
        {"source_labels": [sd_label(k, "pod")], "action": "keep", "regex": _literal(v)}
        for k, v in sorted(s.serving.pod_labels.items())
    ]
    meta = (("namespace", "namespace"), ("pod", "pod_name"), ("container", "pod_container_name"))
    relabels = [
        *keep,
        {"source_labels": ["__meta_kubernetes_pod_container_port_name"], "action": "keep", "regex": s.serving.port},
        *(
            {"source_labels": [f"__meta_kubernetes_{src}"], "action": "replace", "target_label": label}
            for label, src in meta
        ),
        *({"target_label": k, "replacement": v, "action": "replace"} for k, v in sorted(_static(s).items())),
    ]
    return {
        "job_name": s.job,
        "scrape_interval": s.interval,
        "scrape_timeout": s.timeout,
        "metrics_path": s.serving.path,
        "scheme": "http",
        "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [s.namespace]}}],
        "relabel_configs": relabels,
    }


def scrape_config_yaml(s: AutoscalerSpec) -> str:
    """The serving pods' scrape job as YAML for `scrape_configs:` (scrape-config), else empty."""
    if s.serving is None or s.integration != "scrape-config":
        return ""
    return yamltext.dump([scrape_job(s)], sort_keys=False, default_flow_style=False)


def objects(s: AutoscalerSpec) -> list[dict[str, Any]]:
    """Every object in creation order (each may need the ones before it)."""
    out: list[dict[str, Any]] = []
    if s.create is not None:
        claim = claim_template(s)
        out += [*([claim] if claim else []), deployment(s), service(s)]
    if s.serving is not None and s.integration in ("prometheus-operator", "install"):
        out.append(pod_monitor(s))
    elif s.serving is not None and s.integration == "gke-managed":
        out.append(pod_monitoring(s))
    if s.google_auth:
        out.append(trigger_authentication(s))
    out.append(scaled_object(s))
    return out


KEDA_SERVICE_ACCOUNT = "keda-operator"
"""The operator's ServiceAccount (keda chart 2.20.2 values `serviceAccount.operator.name`), which runs the scalers."""


def keda_values(
    node_selector: Mapping[str, str], tolerations: Sequence[Mapping[str, str]] = (), gcp_service_account: Any = None
) -> dict[str, Any]:
    """KEDA chart values (kedacore/charts @ cbb9bb8, keda/values.yaml): the operator, metrics server and webhooks
    all on the system nodes (top-level `nodeSelector`/`tolerations`, which each Deployment takes unless its own
    are set: templates `.Values.operator.nodeSelector | default .Values.nodeSelector`); its CRDs kept when the
    release goes (`crds.additionalAnnotations`), so other ScaledObjects in the cluster survive; and, for GKE
    Managed Prometheus, the operator's ServiceAccount bound to a Google service account (Workload Identity's
    `iam.gke.io/gcp-service-account` annotation, through `serviceAccount.operator.annotations`)."""
    values: dict[str, Any] = {"nodeSelector": dict(node_selector)}
    if tolerations:
        values["tolerations"] = [dict(t) for t in tolerations]
    values["crds"] = {"additionalAnnotations": {"helm.sh/resource-policy": "keep"}}
    if gcp_service_account is not None:
        values["serviceAccount"] = {
            "operator": {"annotations": {"iam.gke.io/gcp-service-account": gcp_service_account}}
        }
    return values
