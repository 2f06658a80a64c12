"""The cluster objects users already have, as gpuplane's components take them (`cluster=`), like pulumi-eks's
`ManagedNodeGroup(cluster=...)`: a `pulumi_eks.Cluster`, an `aws.eks.Cluster` or a `gcp.container.Cluster`.

`facts(cluster)` reads, from the object's own outputs, what the components would otherwise ask for one
by one: the name, Kubernetes version, subnets and security group (EKS), ID, location and project (GKE),
the region, and a kubeconfig for a Kubernetes provider. `KINDS` is the table of what each class offers,
with where its attribute comes from.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..args.checks import ArgsError, shape_problems
from ..catalog.regions import gcp_region_of
from ..config.pool import KUBERNETES_SERVICES
from .kubeconfig import eks_kubeconfig, gke_kubeconfig, region_of_arn


@dataclass(frozen=True)
class ClusterFacts:
    """What a cluster object tells the components (each an Output of the object's own outputs)."""

    cloud: str
    """`aws` or `gcp`."""
    logical_name: str
    """The object's Pulumi resource name: the default `gpuplane.io/cluster` label (a plain string)."""
    name: pulumi.Output[str]
    """The cluster's name as the cloud knows it (engine-made when the program gave none)."""
    region: pulumi.Output[str]
    """Its region (EKS: from the cluster ARN; GKE: the location, a zone's region for a zonal cluster)."""
    kubeconfig: pulumi.Output[str]
    """A secret kubeconfig that authenticates with the cloud CLI (`gpuplane.k8s.kubeconfig`)."""
    version: pulumi.Output[str] | None = None
    """EKS: the control plane's Kubernetes version (node groups follow it)."""
    subnet_ids: pulumi.Output[list[str]] | None = None
    """EKS: the cluster's subnets: pulumi-eks's private ones when it has them, else all of them;
    an `aws.eks.Cluster`'s `vpc_config.subnet_ids` (public ones included, if it has any)."""
    cluster_id: pulumi.Output[str] | None = None
    """GKE: `projects/P/locations/L/clusters/C` (what a node pool's `cluster` takes)."""
    location: pulumi.Output[str] | None = None
    """GKE: the cluster's region, or zone for a zonal cluster."""
    project: pulumi.Output[str] | None = None
    """GKE: the cluster's project."""


def _eks(c: Any, inner: Any, subnet_ids: pulumi.Output[list[str]]) -> ClusterFacts:
    """Facts of an EKS cluster object `c` whose `aws.eks.Cluster` is `inner` (itself, or pulumi-eks's)."""
    return ClusterFacts(
        cloud="aws",
        logical_name=c._name,
        name=inner.name,
        region=inner.arn.apply(region_of_arn),
        kubeconfig=eks_kubeconfig(c),
        version=inner.version,
        subnet_ids=subnet_ids,
    )


def _aws_eks(c: Any) -> ClusterFacts:
    # aws.eks.Cluster outputs (pulumi-aws sdk/python/pulumi_aws/eks/cluster.py): name, version, arn,
    # vpc_config.subnet_ids.
    return _eks(c, c, c.vpc_config.apply(lambda v: list(v.subnet_ids or []) if v else []))


def _pulumi_eks(c: Any) -> ClusterFacts:
    # pulumi-eks Cluster outputs (pulumi-eks sdk/python/pulumi_eks/cluster.py): `eks_cluster` (the
    # aws.eks.Cluster it creates), `core.private_subnet_ids` / `core.subnet_ids`. gpuplane's GPU nodes go to
    # the private subnets when the cluster has any, else to all of its subnets. (pulumi-eks's own
    # ManagedNodeGroup takes `core.subnetIds` first, which holds public subnets too:
    # nodejs/eks/nodes/nodegroup.ts; its self-managed NodeGroup prefers the private ones.)
    def subnets(core: Any) -> list[str]:  # CoreData: a dict whose keys are the Python names, with properties
        return list(getattr(core, "private_subnet_ids", None) or getattr(core, "subnet_ids", None) or [])

    return _eks(c, c.eks_cluster, c.core.apply(subnets))


def _gke(c: Any) -> ClusterFacts:
    # gcp.container.Cluster outputs (pulumi-gcp sdk/python/pulumi_gcp/container/cluster.py): id
    # (`projects/P/locations/L/clusters/C`), name, location, project.
    return ClusterFacts(
        cloud="gcp",
        logical_name=c._name,
        name=c.name,
        region=c.location.apply(lambda loc: gcp_region_of(str(loc))[0]),
        kubeconfig=gke_kubeconfig(c),
        cluster_id=c.id,
        location=c.location,
        project=c.project,
    )


KINDS: dict[tuple[str, str], Callable[[Any], ClusterFacts]] = {
    ("pulumi_eks", "Cluster"): _pulumi_eks,
    ("pulumi_aws.eks", "Cluster"): _aws_eks,
    ("pulumi_gcp.container", "Cluster"): _gke,
}
"""(module, class) of each cluster object gpuplane reads -> what it reads from it."""

KNOWN = ", ".join(f"{m}.{c}" for m, c in KINDS)


def _class(module: str, name: str) -> type | None:
    try:
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
    except ImportError:  # that SDK is not installed: no object can be of its class
        return None


def is_cluster(value: Any) -> bool:
    """A cluster object gpuplane reads (as opposed to a name or ID, plain or an Output)."""
    return _reader(value) is not None


def _reader(value: Any) -> Callable[[Any], ClusterFacts] | None:
    if not isinstance(value, pulumi.Resource):
        return None
    for (module, name), read in KINDS.items():
        cls = _class(module, name)
        if cls is not None and isinstance(value, cls):
            return read
    return None


def facts(value: Any) -> ClusterFacts:
    """What `value`, a cluster object (`is_cluster`), tells the components."""
    read = _reader(value)
    assert read is not None, f"not a cluster object: {type(value).__name__}"
    return read(value)


def cluster_problem(value: Any, cloud: str | None, arg: str = "cluster") -> tuple[str, str] | None:
    """`(arg, reason)` when `value` is not a cluster object of `cloud` (None: either cloud)."""
    read = _reader(value)
    if read is None:
        got = (
            "an Output (pass a name or ID as its own argument)"
            if isinstance(value, pulumi.Output)
            else type(value).__name__
        )
        return (arg, f"must be a cluster object ({KNOWN}), got {got}")
    if cloud is not None and read(value).cloud != cloud:
        article, service = KUBERNETES_SERVICES[cloud]
        return (arg, f"must be {article} {service} cluster, got {type(value).__name__}")
    return None


def cluster_problems(args: Mapping[str, Any], cloud: str | None = None, arg: str = "cluster") -> list[tuple[str, str]]:
    """The problem with `args[arg]`, if given and not a cluster object (of `cloud`), as a list."""
    if arg not in args:
        return []
    found = cluster_problem(args[arg], cloud, arg)
    return [found] if found else []


def from_cluster(
    args: Mapping[str, Any], cloud: str, fills: Mapping[str, Callable[[ClusterFacts], Any]], arg: str = "cluster"
) -> dict[str, Any]:
    """`args` with what `args[arg]`, a cluster object of `cloud`, tells filled in: each `fills` argument the
    caller left unset (given arguments win). Anything else in `args[arg]` is left for `cluster_problems`
    to report; the label it gives is `label_of`'s."""
    value = args.get(arg)
    if cluster_problem(value, cloud, arg) is not None:
        return dict(args)
    found = facts(value)
    out = dict(args)
    for key, read in fills.items():
        if out.get(key) is None:
            out[key] = read(found)
    return out


def label_of(args: Mapping[str, Any], name_arg: str, component: str, by_id: bool = False) -> tuple[str, str]:
    """The nodes' `gpuplane.io/cluster` label and the argument it comes from (for errors about it): the
    caller's `cluster_label`, else the cluster object's resource name (`cluster`), else `args[name_arg]`
    when plain (with `by_id`, the last segment of a `projects/.../clusters/C` ID), else the component's
    own name."""
    if args.get("cluster_label"):
        return str(args["cluster_label"]), "cluster_label"
    if is_cluster(args.get("cluster")):
        return facts(args["cluster"]).logical_name, "cluster"
    given = args.get(name_arg)
    if isinstance(given, str):
        return (given.rsplit("/", 1)[-1] if by_id else given), name_arg
    return component, name_arg


def adopt_kubernetes_provider(component: pulumi.ComponentResource, name: str, cluster: Any) -> k8s.Provider | None:
    """Give `component`'s children a Kubernetes provider for `cluster` (a cluster object), made here as
    `{name}-k8s` with server-side apply, unless the component was given one (`provider` or `providers`).
    Returns the provider made, if any."""
    if component.get_provider("kubernetes::") is not None or not is_cluster(cluster):
        return None
    provider = k8s.Provider(
        f"{name}-k8s",
        kubeconfig=facts(cluster).kubeconfig,
        enable_server_side_apply=True,
        opts=pulumi.ResourceOptions(parent=component),
    )
    # Children created with `parent=component` take their providers from the parent's map
    # (pulumi sdk/python/lib/pulumi/resource.py, Resource.__init__: `self._providers = opts.parent._providers`);
    # a component's own map is set only at construction, so the provider made after it is added here.
    component._providers = {**component._providers, "kubernetes": provider}
    return provider


__all__ = [
    "KINDS",
    "ClusterFacts",
    "adopt_kubernetes_provider",
    "cluster_problem",
    "cluster_problems",
    "facts",
    "from_cluster",
    "is_cluster",
    "label_of",
]


def check_component_args(
    where: str, args: Mapping[str, Any], cls: Any, choice: tuple[str, str, Collection[str]]
) -> None:
    """Raise one `ArgsError` for `where` naming every bad argument: undeclared or mistyped ones (`cls`), a
    `cluster` that is not a cluster object, and the `(argument, value, allowed)` choice outside `allowed`."""
    key, value, allowed = choice
    problems = shape_problems(args, cls) + cluster_problems(args)
    if value not in allowed:
        problems.append((key, f"{value!r} is not one of {list(allowed)}"))
    if problems:
        raise ArgsError(where, problems)
