"""Mocks that answer like the clouds would: realistic, deterministic outputs per resource type.

Values derive from resource names through a hash, never from randomness, so two plans of one stack
are identical. Unknown types echo their inputs, as the engine would report them after a create.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
from pulumi.runtime import rpc

from ..catalog.regions import gcp_region_of
from ..config import ConfigError
from . import mocks_aws, mocks_extra
from .cloud import LIVE_READS, Cloud
from .mocks_base import State, digest, fake_ip
from .mocks_engine import (
    default_gcp_settings,
    gcp_provider_settings,
    helm_release_name,
    invented,
    kubernetes_name,
    with_gcp_defaults,
)

_FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIBgpuplaneofflineplanCA\n-----END CERTIFICATE-----\n"
).decode()


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
    # One instance group per zone the pool runs in: its node locations, else the zone of a zonal cluster,
    # else (a regional pool on the cluster's default locations) the region's first zone here.
    zones = list(i.get("nodeLocations") or gcp_region_of(str(loc))[1] or [f"{loc}-a"])
    base = f"https://www.googleapis.com/compute/v1/projects/{project}/zones"
    return {
        **i,
        "version": "1.33.5-gke.1201000",
        "instanceGroupUrls": [f"{base}/{z}/instanceGroupManagers/{group}" for z in zones],
        "managedInstanceGroupUrls": [f"{base}/{z}/instanceGroups/{group}" for z in zones],
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
            "name": helm_release_name(i, a.name),
            "namespace": i.get("namespace", "default"),
            "chart": i.get("chart", ""),
            "version": i.get("version", ""),
            "revision": 1,
            "status": "deployed",
        },
    }


PACKAGED_CHILDREN = {
    "eks:index:ManagedNodeGroup": "aws:eks/nodeGroup:NodeGroup",
    "eks:index:Cluster": "aws:eks/cluster:Cluster",
}
"""Packaged (multi-language) component -> the cloud resource it creates that a transform may change
(pulumi/pulumi-eks nodejs/eks/nodes/nodegroup.ts, cluster.ts)."""


def child_inputs(type_: str, name: str, transforms: list[Any]) -> dict[str, Any]:
    """The inputs `transforms` add to the packaged component's cloud child, as the engine would run them on it
    (the offline plan has no child: pulumi-eks's code does not run under mocks)."""
    child = PACKAGED_CHILDREN.get(type_)
    if child is None or not transforms:
        return {}
    props: dict[str, Any] = {}
    for transform in transforms:
        if not callable(transform):
            continue
        out = transform(pulumi.ResourceTransformArgs(True, child, name, dict(props), pulumi.ResourceOptions()))
        if out is not None:
            props = dict(out.props)
    return props


def _echo(a: pulumi.runtime.MockResourceArgs) -> State:
    return dict(a.inputs)


def _k8s_object(a: pulumi.runtime.MockResourceArgs) -> State:
    i = dict(a.inputs)
    meta = dict(i.get("metadata") or {})
    if not meta.get("name"):
        meta["name"] = kubernetes_name(meta, a.name)
        if not meta.get("generateName"):
            meta["annotations"] = {**(meta.get("annotations") or {}), "pulumi.com/autonamed": "true"}
    meta["uid"] = str(digest(a.typ, a.name)[:32])
    meta["resourceVersion"] = "1"
    i["metadata"] = meta
    if a.typ == "kubernetes:core/v1:Secret" and i.get("type") == SERVICE_ACCOUNT_TOKEN:
        i["data"] = _token_data(str(meta.get("namespace") or "default"), a.name)
    return i


SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"


def _token_data(namespace: str, name: str) -> dict[str, str]:
    """What the token controller writes into a service-account-token Secret, base64-encoded: `token`, `ca.crt`,
    `namespace` (kubernetes pkg/controller/serviceaccount/tokens_controller.go; pulumi-kubernetes returns the Secret
    once `data` is filled: provider/pkg/await/awaiters.go `untilCoreV1SecretInitialized`). The token is a fake JWT."""

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    token = ".".join(b64(part).rstrip("=") for part in ('{"alg":"RS256"}', f'{{"sub":"{name}"}}', digest(name)[:16]))
    ca = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
    return {"token": b64(token), "ca.crt": b64(ca), "namespace": b64(namespace)}


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
    if a.typ in mocks_aws.ID_PREFIX:
        return str(state["id"])
    if a.typ == "aws:iam/role:Role":
        return str(state["name"])
    if a.typ in ("aws:s3/bucket:Bucket", "gcp:storage/bucket:Bucket"):  # a bucket's ID is its name
        return str(state.get("bucket") or state["name"])
    if a.typ.startswith("aws:s3/bucket") and i.get("bucket"):  # its sub-resources' IDs are the bucket's name
        return str(i["bucket"])
    if a.typ in mocks_extra.PULUMISERVICE_IDS:
        return mocks_extra.pulumiservice_id(a, state)
    if a.typ.startswith("kubernetes:") and isinstance(i.get("metadata"), dict):
        meta = i["metadata"]
        return "/".join(p for p in (meta.get("namespace"), meta.get("name", a.name)) if p)
    return f"{a.name}-{digest(a.typ, a.name)[:8]}"


STACK_REFERENCES_KEY = "gpuplane:stackReferences"
"""Stack config key for offline plans: `{stack name: {output: value}}` answering `pulumi.StackReference`;
`{secure: value}` makes an output secret, as the referenced stack would keep it."""

RESOURCE_SIG: str = rpc._special_resource_sig
"""The SDK's marker of a resource reference in serialised properties (pulumi/runtime/rpc.py)."""
SIG_KEY: str = rpc._special_sig_key


class PlanMocks(pulumi.runtime.Mocks):
    """Per-type outputs for resources, and answers for the invokes gpuplane makes.

    `monitor` is set by the runner: remote components (pulumi-eks) return resources they create
    inside themselves, which must be known to the monitor to be read back.
    """

    def __init__(
        self, stack_references: Mapping[str, Mapping[str, Any]] | None = None, cloud: Cloud | None = None
    ) -> None:
        self.monitor: Any = None
        self.stack_references = dict(stack_references or {})
        """Outputs of the stacks a program reads with `pulumi.StackReference`, by stack name."""
        self.cloud = cloud or Cloud()
        """What already exists (empty: a first `up`); invokes that read live state answer from it."""
        self.live_reads: list[str] = []
        """Tokens of the invokes this run made whose answer depends on `cloud` (`LIVE_READS`)."""
        self.timeline: list[tuple[str, str]] = []
        """("register", type) and ("invoke", token) in the order the engine would see them."""
        self.aws_region: str | None = None
        """The region of the last AWS provider registered; before one, the `aws:region` config or us-east-1."""
        self.provider_regions: dict[str, str] = {}
        """AWS provider ID -> its region."""
        self.resource_region: str | None = None
        """While a resource is registered: its provider's region, when the provider is a known AWS one."""
        self.outputs: dict[str, Callable[[pulumi.runtime.MockResourceArgs], State]] = {
            **OUTPUTS,
            **mocks_aws.outputs(self.region),
            **mocks_extra.aws_outputs(self.region),
            **mocks_extra.gcp_outputs(),
            **mocks_extra.tls_outputs(),
            **mocks_extra.pulumiservice_outputs(),
        }
        self.calls = {
            **mocks_aws.calls(self.region),
            **mocks_aws.node_group_reads(lambda: self.cloud),
            **mocks_extra.aws_calls(self.region),
            **mocks_extra.gcp_calls(),
        }
        self.eks_clusters: dict[str, str] = {}
        self.gcp_providers: dict[str, dict[str, str]] = {}
        self.filled: dict[tuple[str, str], dict[str, Any]] = {}
        """(type, logical name) -> the inputs the engine or provider filled in (`PlannedResource.filled`)."""
        """GCP provider ID -> its project, region and zone (as given, else from `gcp:` stack config)."""

    def region(self) -> str:
        return self.resource_region or self.aws_region or pulumi.Config("aws").get("region") or "us-east-1"

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.timeline.append(("register", args.typ))
        made_up = invented(args.inputs)
        if made_up:
            raise ConfigError(
                [
                    (
                        f"{args.typ} {args.name!r}",
                        f"input {', '.join(made_up)} holds the text 'None': the program formatted a value the offline "
                        "mocks do not have (a real `up` would send the real one). Give the value explicitly, or "
                        "answer it in gpuplane.testing.Mocks",
                    )
                ]
            )
        # A resource's region is its own provider's (ARNs, queue URLs), not the last provider registered: a
        # fleet registers a provider per region.
        provider = str(args.provider or "").rsplit("::", 1)[-1]
        self.resource_region = self.provider_regions.get(provider)
        given = args.inputs
        args = with_gcp_defaults(args, self.gcp_providers.get(provider) or default_gcp_settings())
        filled = {k: v for k, v in args.inputs.items() if k not in given}
        if args.typ == "eks:index:Cluster" and "name" not in given:
            filled["name"] = mocks_aws.eks_cluster_name(given, args.name)
        if filled:
            self.filled[(args.typ, args.name)] = filled
        try:
            rid, state = self._new_resource(args)
        finally:
            self.resource_region = None
        if args.typ == "pulumi:providers:aws" and args.inputs.get("region"):
            self.provider_regions[rid] = str(args.inputs["region"])
        if args.typ == "pulumi:providers:gcp":
            self.gcp_providers[rid] = gcp_provider_settings(args.inputs)
        return rid, state

    def _new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "pulumi:providers:aws" and args.inputs.get("region"):
            self.aws_region = str(args.inputs["region"])
        if args.typ == "eks:index:ManagedNodeGroup":
            return self._managed_node_group(args)
        if args.typ == "pulumi:pulumi:StackReference":
            return self._stack_reference(args)
        if args.typ.startswith("kubernetes:") and args.typ != "kubernetes:helm.sh/v3:Release":
            state = _k8s_object(args)
        else:
            state = self.outputs.get(args.typ, _echo)(args)
        if args.typ == "eks:index:Cluster":
            self.eks_clusters[f"{args.name}"] = mocks_aws.eks_cluster_name(args.inputs, args.name)
            inner = mocks_aws.eks_cluster_state(state, self.eks_clusters[args.name], self.region())
            typ = "eks:index:Cluster$aws:eks/cluster:Cluster"
            state["eksCluster"] = self._inner(typ, f"{args.name}-eksCluster", str(inner["name"]), inner)
        return resource_id(args, state), state

    def _stack_reference(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        """A `pulumi.StackReference`'s outputs, as the stack config's `gpuplane:stackReferences` gives them
        (offline there is no backend to read them from)."""
        name = str(args.inputs.get("name", args.name))
        if name not in self.stack_references:
            known = ", ".join(sorted(self.stack_references)) or "none"
            raise ConfigError(
                [(STACK_REFERENCES_KEY, f"no outputs for stack {name!r} (given: {known}); add them in the stack file")]
            )
        given = self.stack_references[name]
        # `{secure: VALUE}` marks an output the referenced stack keeps secret (a kubeconfig, say).
        secret = sorted(k for k, v in given.items() if isinstance(v, Mapping) and set(v) == {"secure"})
        outputs = {k: (v["secure"] if k in secret else v) for k, v in given.items()}
        return name, {**args.inputs, "outputs": outputs, "secretOutputNames": secret}

    def _inner(self, typ: str, name: str, rid: str, state: State) -> dict[str, Any]:
        """Register a resource a remote component creates inside itself (pulumi-eks), so the program can
        read it back, and return the reference the component's output carries."""
        urn = f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{typ}::{name}"
        if self.monitor is not None:
            self.monitor.resources[urn] = type(self.monitor).ResourceRegistration(urn, rid, state)
        return {SIG_KEY: RESOURCE_SIG, "urn": urn, "id": rid, "packageVersion": ""}

    def _managed_node_group(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        """Register the `aws.eks.NodeGroup` the remote component creates, and return a reference to it."""
        cluster_ref = str(args.inputs.get("cluster", ""))
        cluster = next((n for urn_name, n in self.eks_clusters.items() if cluster_ref.endswith("::" + urn_name)), "")
        ng_state = {**mocks_aws.node_group_state(args, cluster, self.region())}
        ng_state.update(child_inputs(args.typ, args.name, list(args.transforms)))  # e.g. nodeRepairConfig
        ng_id = f"{cluster}:{ng_state['nodeGroupName']}"
        ref = self._inner("eks:index:ManagedNodeGroup$aws:eks/nodeGroup:NodeGroup", args.name, ng_id, ng_state)
        return f"{args.name}-{digest(args.name)[:8]}", {**args.inputs, "nodeGroup": ref}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        handler = self.calls.get(args.token)
        if handler is None:
            raise NotImplementedError(
                f"the offline plan has no answer for invoke {args.token}: subclass gpuplane.testing.Mocks and "
                "answer it in `call` (or add it to gpuplane/plan/mocks_extra.py)"
            )
        self.timeline.append(("invoke", args.token))
        if args.token in LIVE_READS:
            self.live_reads.append(args.token)
        return handler(args.args), []

    def again(self, cloud: Cloud) -> PlanMocks:
        """Fresh mocks like these, for the next `up` against `cloud` (a subclass overrides this when its
        constructor takes other arguments)."""
        return PlanMocks(self.stack_references, cloud)
