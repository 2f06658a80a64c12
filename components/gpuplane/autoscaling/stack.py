"""From a stack's `gpuplane:autoscaling` to KEDA and one `GpuAutoscaler` per workload, the stack output that says
what each scales on, and `autoscaled()`: the placement helper's form for a Deployment you place yourself.

```python
from gpuplane.autoscaling import autoscaled
objs = autoscaled(cfg, "inference", "vllm", {"kind": "serving", "name": "vllm:num_requests_waiting", "target": 5},
                  max_replicas=4)   # Deployment, Service, PodMonitor (or PodMonitoring), ScaledObject
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import ValidationError

from ..config import ConfigError
from ..config.autoscaling import AutoscalingConfig, Workload, autoscaling_problems
from ..config.load import _reason as reason
from ..config.load import key_path
from ..config.model import StackConfig
from ..k8s.objects import namespace_manifest
from ..monitoring.labels import label_model
from ..monitoring.stack import monitor_labels
from ..pins import IMAGES
from ..scheduling.placement import placement
from ..storage.spec import store_namespaces
from ..storage.stack import fragment
from . import render as r
from .component import GpuAutoscaler, Keda


def region_of(cfg: StackConfig) -> str:
    return cfg.region


def workload_spec(cfg: StackConfig, w: Workload) -> r.AutoscalerSpec:
    """One workload of the stack, resolved against its monitoring integration and pools."""
    a, m = cfg.autoscaling, cfg.monitoring
    assert a is not None
    inference = None
    if w.deployment is not None:
        d = w.deployment
        inference = r.Inference(
            image=d.image or IMAGES["vllm-openai"],
            fragment=placement(cfg, d.pool, d.gpus),
            args=tuple(d.args),
            port=d.port,
            cpu=d.cpu,
            memory=d.memory,
            stores=store_mounts(cfg, d.stores, w.namespace, d.serviceAccount),
        )
    serving = None
    if w.metric.kind == "serving":
        labels = w.metric.servedBy or w.podLabels or r.selector_labels(w.name)
        serving = r.Serving(dict(labels), w.metric.port, w.metric.path)
    return r.AutoscalerSpec(
        deployment=w.name,
        namespace=w.namespace,
        cluster=cfg.cluster.name,
        integration=m.integration,
        model=label_model(cfg.platform, m.integration),
        kind=w.metric.kind,
        target=w.metric.target,
        max_replicas=w.maxReplicas,
        server_address=r.server_address(
            m.integration, a.prometheusUrl, m.installNamespace, str(cfg.gcp.project) if cfg.gcp else ""
        ),
        metric=w.metric.name or "",
        activation=w.metric.activation,
        min_replicas=w.minReplicas,
        region=region_of(cfg),
        create=inference,
        serving=serving,
        monitor_labels=monitor_labels(m.integration, m.selectorLabels),
        interval=m.scrapeInterval,
        timeout=m.scrapeTimeout,
    )


def specs(cfg: StackConfig) -> list[r.AutoscalerSpec]:
    return [workload_spec(cfg, w) for w in cfg.autoscaling.workloads] if cfg.autoscaling else []


def needs_google_identity(cfg: StackConfig) -> bool:
    """Whether KEDA's operator signs in to GKE Managed Prometheus (a Google service account for it)."""
    return any(s.google_auth for s in specs(cfg))


def namespaces(cfg: StackConfig) -> list[str]:
    """The namespaces gpuplane creates for the workloads and stores of a stack: those of the Deployments it creates
    and those the model stores name; not `default` (it exists), nor a Kueue team's (`gpuplane:queues` creates those:
    a serving team's queue namespace is a natural home for its Deployment). One list, so a namespace keeps its
    resource when the section that needs it changes (a Namespace replaced would take its workloads with it)."""
    found = [w.namespace for w in cfg.autoscaling.workloads if w.deployment is not None] if cfg.autoscaling else []
    found += store_namespaces(cfg.storage) if cfg.storage is not None else []
    teams = (
        {t.namespace or t.name for t in cfg.queues.teams}
        if cfg.queues is not None and cfg.queues.createNamespaces
        else set()
    )
    return [n for n in dict.fromkeys(found) if n != "default" and n not in teams]


def workload_namespaces(name: str, cfg: StackConfig, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """The `namespaces` (`{name}-<namespace>-namespace`, Pod Security `baseline`), for `gpu_autoscalers` and the
    platform's `ModelStores` to wait for."""
    return [
        k8s.core.v1.Namespace(
            f"{name}-{ns}-namespace", metadata=namespace_manifest(ns, "baseline")["metadata"], opts=opts
        )
        for ns in namespaces(cfg)
    ]


def store_mounts(cfg: StackConfig, stores: Mapping[str, str], namespace: str, account: str | None) -> dict[str, Any]:
    """The Deployment's model-store mounts (none without `stores`)."""
    if not stores or cfg.storage is None or account is None:
        return {}
    return fragment(cfg.platform_spec.cloud, cfg.storage, stores, namespace, account)


def gpu_autoscalers(
    name: str,
    cfg: StackConfig,
    after: Sequence[pulumi.Resource],
    opts: pulumi.ResourceOptions,
    gcp_service_account: Any = None,
    identity: Sequence[pulumi.Resource] = (),
    spaces: Sequence[pulumi.Resource] = (),
) -> list[GpuAutoscaler]:
    """KEDA (`{name}-keda`, on the system nodes) and a `GpuAutoscaler` per workload (`{name}-scale-<workload>`),
    after `after` (the monitoring, whose CRDs the scrape objects need) and `spaces` (`workload_namespaces`). Nothing
    without `gpuplane:autoscaling`. `gcp_service_account`: the Google identity KEDA's operator queries GKE Managed
    Prometheus with (`identity`: its IAM grants, which KEDA waits for)."""
    if cfg.autoscaling is None:
        return []
    system = cfg.platform_spec.system_pods
    keda_args: dict[str, Any] = {
        "node_selector": dict(system.node_selector),
        "tolerations": [dict(t) for t in system.tolerations],
    }
    if gcp_service_account is not None:
        keda_args["gcp_service_account"] = gcp_service_account
    keda_opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=list(identity)))
    keda = Keda(f"{name}-keda", keda_args, opts=keda_opts)  # type: ignore[arg-type]
    made = list(spaces)
    return [
        GpuAutoscaler.from_spec(f"{name}-scale-{spec.deployment}", spec, [keda, *after, *made], opts)
        for spec in specs(cfg)
    ]


def autoscaling_outputs(cfg: StackConfig) -> dict[str, Any]:
    """The stack output `autoscaling` (with the section): per workload, where KEDA queries, the query and its
    target, and with `scrape-config` the serving scrape job to add to your Prometheus."""
    out = {}
    for s in specs(cfg):
        entry: dict[str, Any] = {
            "namespace": s.namespace,
            "prometheus": s.server_address,
            "query": r.query(s),
            "target": s.target,
            "replicas": [s.min_replicas, s.max_replicas],
        }
        if r.scrape_config_yaml(s):
            entry["scrapeConfig"] = r.scrape_config_yaml(s)
        out[s.deployment] = entry
    return {"autoscaling": out} if out else {}


def autoscaled(
    cfg: StackConfig,
    pool_name: str,
    deployment: str,
    metric: Mapping[str, Any],
    max_replicas: int,
    *,
    min_replicas: int = 1,
    namespace: str = "default",
    gpus: int = 1,
    image: str | None = None,
    args: Sequence[str] = (),
    port: int = 8000,
    pod_labels: Mapping[str, str] | None = None,
    stores: Mapping[str, str] | None = None,
    service_account: str | None = None,
) -> list[dict[str, Any]]:
    """The manifests that scale a Deployment on pool `pool_name` of a parsed stack config, on `metric` (the config's
    `metric` keys: `kind`, `name`, `target`, `activation`, `port`, `path`, `servedBy`), for the stack's integration.
    With `pod_labels` the Deployment is yours (place it with `placement(cfg, pool_name, gpus)`): the ScaledObject
    and the serving scrape. Without, gpuplane's Deployment and Service on the pool come first, mounting `stores` (store
    -> path, of the stack's `storage`) as `service_account`. Raises `ConfigError`
    naming each bad key as the stack config spells it."""
    doc: dict[str, Any] = {
        "name": deployment,
        "namespace": namespace,
        "metric": dict(metric),
        "minReplicas": min_replicas,
        "maxReplicas": max_replicas,
    }
    if pod_labels is None:
        doc["deployment"] = {
            "pool": pool_name,
            "gpus": gpus,
            "args": list(args),
            "port": port,
            **({"image": image} if image else {}),
            **({"stores": dict(stores)} if stores else {}),
            **({"serviceAccount": service_account} if service_account else {}),
        }
    else:
        doc["podLabels"] = dict(pod_labels)
    given = cfg.autoscaling.prometheusUrl if cfg.autoscaling else None
    section = {"workloads": [doc], **({"prometheusUrl": given} if given else {})}
    try:
        config = AutoscalingConfig.model_validate(section, context={"pool_names": [p.name for p in cfg.gpuPools]})
    except ValidationError as exc:
        raise ConfigError([(key_path(("autoscaling", *e["loc"])), reason(e)) for e in exc.errors()]) from None
    one = cfg.model_copy(update={"autoscaling": config})
    problems = autoscaling_problems(one)
    if problems:
        raise ConfigError([(key_path(loc), why) for loc, why in problems])
    return r.objects(workload_spec(one, config.workloads[0]))
