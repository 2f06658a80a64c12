"""A multi-language facade: the whole GPU platform as one component, for TypeScript, Go or YAML programs.

Pulumi's Python component provider host infers the package schema from these annotations (so no
`from __future__ import annotations` here). Its args must be plain schema types, so the typed config
travels as one JSON document, validated by the same `parse_config` as a stack.
"""

import json
from typing import TypedDict

import pulumi

from .config import parse_config


class GpuPlatformArgs(TypedDict):
    config: str
    """The gpuplane config as JSON: the keys under `gpuplane:` in a stack file
    (platform, cluster, gcp/aws, gpuPools, monitoring, ...)."""


class GpuPlatform(pulumi.ComponentResource):
    """A GPU-ready Kubernetes platform (GKE or EKS, fixed pools or auto-provisioning) with the NVIDIA
    software it lacks and GPU metrics wired into Prometheus."""

    cluster_name: pulumi.Output[str]
    """Name of the Kubernetes cluster (or of the first region's cluster in a fleet)."""
    kubeconfig: pulumi.Output[str]
    """Kubeconfig for the cluster (secret); for a fleet, a JSON object of one kubeconfig per region."""
    scrape_config: pulumi.Output[str]
    """The `gpu-metrics` Prometheus scrape job(s), YAML."""
    prometheus_rules: pulumi.Output[str]
    """GPU alerting and recording rules, as a Prometheus rules file."""

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:index:GpuPlatform", name, None, opts)
        cfg = parse_config(json.loads(args["config"]))
        from .program import builder_for

        if cfg.fleet is not None:
            from .fleet import build as build_fleet

            outputs = build_fleet(cfg, cfg.platform_spec.builder, opts=pulumi.ResourceOptions(parent=self))
            first = next(iter(outputs["clusters"].values()))  # type: ignore[attr-defined]
            self.cluster_name = pulumi.Output.from_input(first["clusterName"])
            # One kubeconfig per region, as a JSON object {region: kubeconfig}.
            self.kubeconfig = pulumi.Output.secret(pulumi.Output.json_dumps(outputs["kubeconfigs"]))
        else:
            outputs = builder_for(cfg)(cfg, opts=pulumi.ResourceOptions(parent=self))
            self.cluster_name = pulumi.Output.from_input(outputs["clusterName"])  # type: ignore[arg-type]
            self.kubeconfig = pulumi.Output.secret(outputs["kubeconfig"])  # type: ignore[arg-type]
        self.scrape_config = pulumi.Output.from_input(str(outputs["scrapeConfig"]))
        self.prometheus_rules = pulumi.Output.from_input(str(outputs["prometheusRules"]))
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "scrape_config": self.scrape_config,
                "prometheus_rules": self.prometheus_rules,
            }
        )


COMPONENTS = [GpuPlatform]
"""What the plugin exposes (see provider/__main__.py)."""
