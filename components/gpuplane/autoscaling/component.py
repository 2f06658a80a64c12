"""`Keda` (the pinned KEDA chart on the system nodes) and `GpuAutoscaler` (one Deployment on a GPU pool scaled by a
KEDA ScaledObject on a GPU or serving metric of the stack's Prometheus). Docs: docs/autoscaling.md.

No `from __future__ import annotations`: the multi-language package reads the components' annotations.
"""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..args.autoscaling import GpuAutoscalerArgs, KedaArgs
from ..args.checks import ArgsError, shape_problems
from ..catalog.platforms import GPUPLANE_SYSTEM_POOL
from ..k8s.objects import custom_resource, namespace_manifest, pinned_release
from . import render as r
from .spec import spec_of

RELEASE = "keda"
NAMESPACE = "keda"


class Keda(pulumi.ComponentResource):
    """KEDA 2.20.2 (chart pinned in `gpuplane.pins`), once per cluster: its operator runs the scalers, its metrics
    server serves `external.metrics.k8s.io` to the HorizontalPodAutoscalers it makes, its webhooks check
    ScaledObjects. Make `GpuAutoscaler`s depend on it (their ScaledObjects need its CRDs)."""

    namespace: pulumi.Output[str]
    """KEDA's namespace."""
    service_account: str
    """The operator's Kubernetes ServiceAccount, `<namespace>/keda-operator` (the identity that queries Prometheus)."""

    def __init__(self, name: str, args: KedaArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        problems = shape_problems(args, KedaArgs)
        if problems:
            raise ArgsError(f"Keda {name!r}", problems)
        opts = opts or pulumi.ResourceOptions()
        after = [
            d for d in (opts.depends_on if isinstance(opts.depends_on, list) else []) if isinstance(d, pulumi.Resource)
        ]
        super().__init__("gpuplane:autoscaling:Keda", name, None, opts)
        namespace = args.get("namespace") or NAMESPACE
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=namespace_manifest(namespace, "baseline")["metadata"],
            opts=pulumi.ResourceOptions(parent=self),
        )
        selector = args.get("node_selector")
        values = r.keda_values(
            GPUPLANE_SYSTEM_POOL.node_selector if selector is None else selector,
            args.get("tolerations") or (),
            args.get("gcp_service_account"),
        )
        self.release = pinned_release(
            f"{name}-release",
            "keda",
            RELEASE,
            namespace,
            values,
            # After the identity's IAM grants. No take-ownership: Helm would then adopt another external metrics
            # adapter's APIService without its ownership check (helm pkg/action/install.go `requireAdoption`); CRDs a
            # removed `keda` release kept still carry this release's name, which Helm's check accepts.
            pulumi.ResourceOptions(parent=self, depends_on=[ns, *after]),
        )
        self.namespace = ns.metadata.name
        self.service_account = f"{namespace}/{r.KEDA_SERVICE_ACCOUNT}"
        self.register_outputs({"namespace": self.namespace})


ROLES = {
    "ResourceClaimTemplate": "claim",
    "Deployment": "deployment",
    "Service": "service",
    "PodMonitor": "podmonitor",
    "PodMonitoring": "podmonitoring",
    "TriggerAuthentication": "triggerauthentication",
    "ScaledObject": "scaledobject",
}
"""Kind -> the role in child resource names (`{name}-{role}`)."""


class GpuAutoscaler(pulumi.ComponentResource):
    """A Deployment on a GPU pool scaled by KEDA on a DCGM series (GPU utilisation or memory of its pods' GPUs) or a
    serving metric its pods export (e.g. vLLM's `vllm:num_requests_waiting`), queried from the integration's
    Prometheus with the labels that integration stores. Creates the Deployment and its Service when asked
    (`create`), the scrape of the serving pods for the integration, and the ScaledObject. Depend on `Keda` (and,
    for the scrape object's CRD, on the `GpuMonitoring` of the cluster) through `opts.depends_on`."""

    query: pulumi.Output[str]
    """The PromQL the ScaledObject's trigger carries."""
    server_address: pulumi.Output[str]
    """Where KEDA sends it."""
    scrape_config: pulumi.Output[str]
    """`scrape-config`: the serving pods' scrape job, as YAML to paste under `scrape_configs:` (else empty)."""
    integration: pulumi.Output[str]
    """The monitoring integration the query was written for."""

    def __init__(self, name: str, args: GpuAutoscalerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        spec, deferred = spec_of(f"GpuAutoscaler {name!r}", args)
        opts = opts or pulumi.ResourceOptions()
        after = [
            d for d in (opts.depends_on if isinstance(opts.depends_on, list) else []) if isinstance(d, pulumi.Resource)
        ]
        super().__init__("gpuplane:autoscaling:GpuAutoscaler", name, None, deferred.options(opts))
        self._build(name, spec, after, deferred)

    @classmethod
    def from_spec(
        cls, name: str, spec: r.AutoscalerSpec, after: list[pulumi.Resource], opts: pulumi.ResourceOptions
    ) -> "GpuAutoscaler":
        """A platform's autoscaler, from its stack config (after KEDA and the monitoring)."""
        from ..args.deferred import Deferred

        self = cls.__new__(cls)
        pulumi.ComponentResource.__init__(self, "gpuplane:autoscaling:GpuAutoscaler", name, None, opts)
        self._build(name, spec, after, Deferred())
        return self

    def _build(self, name: str, spec: r.AutoscalerSpec, after: list[pulumi.Resource], deferred: Any) -> None:
        made: list[pulumi.Resource] = []
        for obj in r.objects(spec):
            kind = obj["kind"]
            child = f"{name}-{ROLES[kind]}"
            opts = pulumi.ResourceOptions(parent=self, depends_on=[*after, *made])
            if kind == "Deployment":
                made.append(k8s.apps.v1.Deployment(child, metadata=obj["metadata"], spec=obj["spec"], opts=opts))
            elif kind == "Service":
                made.append(k8s.core.v1.Service(child, metadata=obj["metadata"], spec=obj["spec"], opts=opts))
            elif kind == "ResourceClaimTemplate":
                # The API server refuses changes to a claim template's spec: replace it, deleting first (its name is
                # fixed), as the smoke tests' templates (`scheduling.smoke`).
                replace = pulumi.ResourceOptions(replace_on_changes=["spec"], delete_before_replace=True)
                made.append(
                    k8s.resource.v1.ResourceClaimTemplate(
                        child,
                        metadata=obj["metadata"],
                        spec=obj["spec"],
                        opts=pulumi.ResourceOptions.merge(opts, replace),
                    )
                )
            else:
                made.append(custom_resource(child, obj, opts))
        outputs = {
            "query": r.query(spec),
            "server_address": spec.server_address,
            "scrape_config": r.scrape_config_yaml(spec),
            "integration": spec.integration,
        }
        resolved = {k: pulumi.Output.from_input(deferred.resolve(v)) for k, v in outputs.items()}
        self.query = resolved["query"]
        self.server_address = resolved["server_address"]
        self.scrape_config = resolved["scrape_config"]
        self.integration = resolved["integration"]
        self.register_outputs(dict(resolved))
