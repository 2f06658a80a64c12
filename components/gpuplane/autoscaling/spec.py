"""`GpuAutoscaler`'s typed args resolved into what it builds (`render.AutoscalerSpec`), checked by the stack config's
own `gpuplane:autoscaling` models, so each rule lives in one place. Outputs (the cluster label, the region, the GCP
project) stand in as tokens until the children register (`args.deferred`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..args.autoscaling import GpuAutoscalerArgs, InferenceDeploymentArgs
from ..args.checks import ArgsError, known, plain, shape_problems, snake
from ..args.deferred import Deferred
from ..config import ConfigError
from ..config.autoscaling import QUANTITY, AutoscalingConfig, url_problem
from ..config.load import _reason as reason
from ..config.monitoring import INTEGRATIONS
from ..monitoring.labels import label_model
from ..monitoring.stack import monitor_labels
from ..pins import IMAGES
from ..scheduling.placement import placement
from . import render as r

DEPLOYMENT_KEYS = ("gpus", "image", "args", "port")
"""`create` keys the config's `deployment` section takes as they are (its `pool` comes from `gpu_nodes`)."""
RENAMES = {"name": "deployment", "deployment": "create", "deployment.pool": "create.gpu_nodes"}
"""Workload model keys -> the argument that holds them."""


def _arg_path(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc]
    if parts[:2] == ["workloads", "0"]:
        parts = parts[2:]
    elif parts == ["prometheusUrl"]:
        return "prometheus_url"
    path = ".".join(parts)
    for key in sorted(RENAMES, key=len, reverse=True):
        if path == key or path.startswith(key + "."):
            path = RENAMES[key] + path[len(key) :]
            break
    return snake(path)


def _workload_doc(args: GpuAutoscalerArgs) -> dict[str, Any]:
    metric = dict(args.get("metric") or {})
    doc: dict[str, Any] = {
        "name": args.get("deployment"),
        "metric": {
            ("servedBy" if k == "served_by" else k): (dict(v) if isinstance(v, Mapping) else plain(v))
            for k, v in metric.items()
        },
        "maxReplicas": args.get("max_replicas"),
    }
    for arg, key in (("namespace", "namespace"), ("min_replicas", "minReplicas"), ("pod_labels", "podLabels")):
        if arg in args:
            value = args[arg]  # type: ignore[literal-required]
            doc[key] = dict(value) if isinstance(value, Mapping) else value
    create = args.get("create")
    if create is not None:
        nodes = create.get("gpu_nodes") or {}
        doc["deployment"] = {
            "pool": str(nodes.get("pool", "")),
            **{k: (list(v) if isinstance(v, list | tuple) else v) for k, v in create.items() if k in DEPLOYMENT_KEYS},
        }
    return doc


def _create_problems(create: InferenceDeploymentArgs) -> list[tuple[str, str]]:
    if "gpu_nodes" not in create:
        return [("create.gpu_nodes", "required argument is missing")]
    bad = [
        (f"create.{key}", f"{create[key]!r} is not a Kubernetes quantity")
        for key in ("cpu", "memory")
        if key in create and not re.fullmatch(QUANTITY, str(create[key]))
    ]
    if bad:
        return bad
    try:
        placement(create["gpu_nodes"], gpus=int(create.get("gpus", 1)))
    except ConfigError as exc:
        return [(f"create.{p}", m) for p, m in exc.problems]
    return []


def spec_of(where: str, args: GpuAutoscalerArgs) -> tuple[r.AutoscalerSpec, Deferred]:
    """The resolved spec, or an `ArgsError` naming every bad argument (before anything registers)."""
    problems = shape_problems(args, GpuAutoscalerArgs)
    given: Mapping[str, Any] = args
    for key in ("deployment", "cluster", "integration", "metric", "max_replicas"):
        if given.get(key) is None:
            problems.append((key, "required argument is missing"))
    integration = str(plain(args.get("integration") or ""))
    if integration and integration not in INTEGRATIONS:
        problems.append(("integration", f"{integration!r} is not one of {list(INTEGRATIONS)}"))
    url: str | None = None
    if args.get("prometheus_url") is not None:
        if known(args.get("prometheus_url")):
            url = str(args.get("prometheus_url"))
        else:
            problems.append(
                ("prometheus_url", "must be a plain value, not an Output: it decides whether KEDA signs in")
            )
    create = args.get("create")
    if create is not None:
        problems += _create_problems(create)
    if not problems:
        section: dict[str, Any] = {"workloads": [_workload_doc(args)]}
        if url is not None:
            section["prometheusUrl"] = url
        pools = [str((create.get("gpu_nodes") or {}).get("pool", ""))] if create is not None else []
        try:
            AutoscalingConfig.model_validate(section, context={"pool_names": pools})
        except ValidationError as exc:
            problems += [(_arg_path(tuple(e["loc"])), snake(reason(e))) for e in exc.errors()]
        missing = url_problem(integration, url)
        if missing:
            problems.append(("prometheus_url", snake(missing)))
        if integration == "gke-managed" and url is None and args.get("gcp_project") is None:
            problems.append(("gcp_project", "required with integration gke-managed (its Managed Prometheus API)"))
    if problems:
        raise ArgsError(where, problems)
    deferred = Deferred()
    cluster = deferred.value(args["cluster"], "gpuplane-arg-{}z")
    region = deferred.value(args.get("region"), "gpuplane-arg-{}z") or ""
    project = deferred.value(args.get("gcp_project"), "gpuplane-arg-{}z") or ""
    metric = args["metric"]
    kind = str(plain(metric["kind"]))
    namespace = args.get("namespace") or "default"
    deployment = args["deployment"]
    inference = None
    if create is not None:
        inference = r.Inference(
            image=create.get("image") or IMAGES["vllm-openai"],
            fragment=placement(create["gpu_nodes"], gpus=int(create.get("gpus", 1))),
            args=tuple(create.get("args") or ()),
            port=int(create.get("port", 8000)),
            cpu=str(create.get("cpu", "500m")),
            memory=str(create.get("memory", "3Gi")),
        )
    serving = None
    if kind == "serving":
        labels = metric.get("served_by") or args.get("pod_labels") or r.selector_labels(deployment)
        serving = r.Serving(dict(labels), metric.get("port") or r.METRICS_PORT, metric.get("path") or "/metrics")
    spec = r.AutoscalerSpec(
        deployment=deployment,
        namespace=namespace,
        cluster=str(cluster),
        integration=integration,
        model=label_model("", integration),
        kind=kind,
        target=float(metric["target"]),
        max_replicas=int(args["max_replicas"]),
        server_address=r.server_address(integration, url, args.get("install_namespace") or "monitoring", str(project)),
        metric=str(metric.get("name") or ""),
        activation=float(metric.get("activation", 0)),
        min_replicas=int(args.get("min_replicas", 1)),
        region=str(region),
        create=inference,
        serving=serving,
        monitor_labels=monitor_labels(integration, args.get("selector_labels") or {"release": "kube-prometheus-stack"}),
        interval=args.get("scrape_interval") or "15s",
        timeout=args.get("scrape_timeout") or "10s",
    )
    return spec, deferred
