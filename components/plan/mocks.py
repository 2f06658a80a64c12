"""Mocks that answer like the clouds would: realistic, deterministic outputs per resource type.

Values derive from resource names through a hash, never from randomness, so two plans of one stack
are identical. Unknown types echo their inputs, as the engine would report them after a create.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import pulumi

State = dict[str, Any]

_FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIBgpuplaneofflineplanCA\n-----END CERTIFICATE-----\n"
).decode()


def digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def fake_ip(name: str) -> str:
    """A stable public-looking IPv4 (from TEST-NET-3, 203.0.113.0/24) for an endpoint."""
    return f"203.0.113.{int(digest(name)[:4], 16) % 254 + 1}"


def _gke_cluster(a: pulumi.runtime.MockResourceArgs) -> State:
    i = a.inputs
    name, project, loc = i.get("name", a.name), i.get("project", "project"), i.get("location", "us-central1")
    return {
        **i,
        "endpoint": fake_ip(name),
        "masterAuth": {"clusterCaCertificate": _FAKE_CA},
        "masterVersion": "1.33.5-gke.1201000",
        "selfLink": f"https://container.googleapis.com/v1/projects/{project}/locations/{loc}/clusters/{name}",
        "servicesIpv4Cidr": "34.118.224.0/20",
        "labelFingerprint": digest(name)[:8],
    }


def _gke_node_pool(a: pulumi.runtime.MockResourceArgs) -> State:
    i = a.inputs
    name, project, loc = i.get("name", a.name), i.get("project", "project"), i.get("location", "us-central1")
    group = f"gke-{name}-{digest(a.name)[:8]}-grp"
    return {
        **i,
        "version": "1.33.5-gke.1201000",
        "instanceGroupUrls": [
            f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{loc}-a/instanceGroupManagers/{group}"
        ],
        "managedInstanceGroupUrls": [
            f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{loc}-a/instanceGroups/{group}"
        ],
    }


def _service_account(a: pulumi.runtime.MockResourceArgs) -> State:
    i = a.inputs
    email = f"{i.get('accountId', a.name)}@{i.get('project', 'project')}.iam.gserviceaccount.com"
    return {
        **i,
        "email": email,
        "member": f"serviceAccount:{email}",
        "uniqueId": str(int(digest(email)[:15], 16)),
        "name": f"projects/{i.get('project', 'project')}/serviceAccounts/{email}",
    }


def _helm_release(a: pulumi.runtime.MockResourceArgs) -> State:
    i = a.inputs
    return {
        **i,
        "status": {
            "name": i.get("name", a.name),
            "namespace": i.get("namespace", "default"),
            "chart": i.get("chart", ""),
            "version": i.get("version", ""),
            "revision": 1,
            "status": "deployed",
        },
    }


def _k8s_object(a: pulumi.runtime.MockResourceArgs) -> State:
    i = dict(a.inputs)
    meta = dict(i.get("metadata") or {})
    meta.setdefault("name", a.name)
    meta["uid"] = str(digest(a.typ, a.name)[:32])
    meta["resourceVersion"] = "1"
    i["metadata"] = meta
    return i


OUTPUTS: Mapping[str, Callable[[pulumi.runtime.MockResourceArgs], State]] = {
    "gcp:container/cluster:Cluster": _gke_cluster,
    "gcp:container/nodePool:NodePool": _gke_node_pool,
    "gcp:serviceaccount/account:Account": _service_account,
    "kubernetes:helm.sh/v3:Release": _helm_release,
}
"""Type token -> outputs. `kubernetes:*` objects get server-set metadata; the rest echo inputs."""


def resource_id(a: pulumi.runtime.MockResourceArgs, state: State) -> str:
    """The ID the cloud would assign (GCP resources use their resource path)."""
    i = a.inputs
    if a.typ == "gcp:container/cluster:Cluster":
        return f"projects/{i.get('project')}/locations/{i.get('location')}/clusters/{i.get('name', a.name)}"
    if a.typ == "gcp:container/nodePool:NodePool":
        return f"{i.get('cluster')}/nodePools/{i.get('name', a.name)}"
    if a.typ == "gcp:serviceaccount/account:Account":
        return str(state["name"])
    if a.typ.startswith("kubernetes:") and isinstance(i.get("metadata"), dict):
        meta = i["metadata"]
        return "/".join(p for p in (meta.get("namespace"), meta.get("name", a.name)) if p)
    return f"{a.name}-{digest(a.typ, a.name)[:8]}"


class PlanMocks(pulumi.runtime.Mocks):
    """Per-type outputs for resources, and answers for the invokes gpuplane makes."""

    CALLS: Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ.startswith("kubernetes:") and args.typ != "kubernetes:helm.sh/v3:Release":
            state = _k8s_object(args)
        else:
            state = OUTPUTS.get(args.typ, lambda a: dict(a.inputs))(args)
        return resource_id(args, state), state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        handler = self.CALLS.get(args.token)
        if handler is None:
            return {}, None
        return handler(args.args), None
