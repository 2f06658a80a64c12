"""Small Kubernetes manifests shared by components (rendered as plain dicts, validated by tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..pins import CHARTS
from ..text import yamltext


def namespace_manifest(name: str, level: str) -> dict[str, Any]:
    """A namespace whose Pod Security Admission level is `level` (`privileged`, `baseline` or
    `restricted`); under `baseline`, pods that would fail `restricted` are warned about and audited."""
    labels = {"pod-security.kubernetes.io/enforce": level, "app.kubernetes.io/managed-by": "gpuplane"}
    if level == "baseline":
        labels |= {"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "restricted"}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def privileged_namespace(name: str) -> dict[str, Any]:
    """A namespace for node agents that need privileged pods (Pod Security Admission level `privileged`)."""
    return namespace_manifest(name, "privileged")


def pinned_release(
    resource_name: str,
    chart_key: str,
    release: str,
    namespace: str,
    values: Mapping[str, Any] | pulumi.Output[Mapping[str, Any]] | pulumi.Output[dict[str, Any]],
    opts: pulumi.ResourceOptions,
    timeout: int = 600,
    skip_crds: bool = False,
    take_ownership: bool = False,
) -> k8s.helm.v3.Release:
    """A Helm release of a chart pinned in `gpuplane.pins`, with a fixed release name (so the
    Services and labels its templates create are known before deploy). OCI charts are addressed by URL.

    `take_ownership` adopts objects of the chart that already exist without this release's Helm
    metadata (Helm's `--take-ownership`), instead of failing on them."""
    pin = CHARTS[chart_key]
    oci = pin.repo.startswith("oci://")
    return k8s.helm.v3.Release(
        resource_name,
        k8s.helm.v3.ReleaseArgs(
            name=release,
            chart=f"{pin.repo}/{pin.chart}" if oci else pin.chart,
            version=pin.version,
            repository_opts=None if oci else k8s.helm.v3.RepositoryOptsArgs(repo=pin.repo),
            namespace=namespace,
            create_namespace=False,
            values=values if isinstance(values, pulumi.Output) else dict(values),
            timeout=timeout,
            skip_crds=skip_crds or None,
            take_ownership=take_ownership or None,
        ),
        opts=opts,
    )


def custom_resource(
    resource_name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """Create a custom resource from a rendered manifest (apiVersion, kind, metadata, spec)."""
    return k8s.apiextensions.CustomResource(
        resource_name,
        api_version=obj["apiVersion"],
        kind=obj["kind"],
        metadata=obj["metadata"],
        spec=obj["spec"],
        opts=opts,
    )


def one_cluster_kubeconfig(context: str, server: str, ca_data: str, user: Mapping[str, Any]) -> str:
    """A kubeconfig with one cluster, one user (`user`: its credentials) and one context, all named `context`."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": context, "user": dict(user)}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
    }
    return yamltext.dump(doc, sort_keys=False)


def exec_kubeconfig(context: str, server: str, ca_data: str, exec_: Mapping[str, Any]) -> str:
    """A one-cluster kubeconfig whose user gets its token from an exec credential plugin (`exec_`: its
    `command`, `args`, ...; `client.authentication.k8s.io/v1beta1`), never a static token."""
    return one_cluster_kubeconfig(
        context, server, ca_data, {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", **exec_}}
    )


def job_timeouts(job: Mapping[str, Any]) -> pulumi.CustomTimeouts:
    """How long `pulumi up` waits for a Job: its `activeDeadlineSeconds` and five minutes more (pulumi-kubernetes
    otherwise gives up after 10 minutes: provider/pkg/await/job.go `DefaultJobTimeoutMins`)."""
    minutes = int(job["spec"]["activeDeadlineSeconds"]) // 60 + 5
    return pulumi.CustomTimeouts(create=f"{minutes}m", update=f"{minutes}m")
