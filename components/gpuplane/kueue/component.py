"""`KueueQueues`: the pinned Kueue chart on the system nodes, and the queues that admit whole jobs within
the GPU pools' quota (ResourceFlavors, ClusterQueues, LocalQueues, and on GKE the DWS admission check)."""

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..args.checks import ArgsError, shape_problems
from ..args.inputs import GpuNodes
from ..args.kueue import KueueQueuesArgs, KueueTeamArgs
from ..config.queues import KUEUE_FRAMEWORKS
from ..k8s.clusters import adopt_kubernetes_provider, cluster_problems
from ..k8s.objects import custom_resource, namespace_manifest, pinned_release
from ..scheduling.claims import serves
from . import multikueue_worker as mkw
from . import render as r

RELEASE = "kueue"
NAMESPACE = "kueue-system"
"""Kueue's own namespace (its chart and manifests install there: kueue config/default/kustomization.yaml)."""


def ceilings_of(args: KueueQueuesArgs) -> dict[str, int]:
    """Each pool's ceiling: `ceilings` where given, else its `gpu_nodes` entry's (the pool components set it)."""
    nodes: Sequence[GpuNodes] = args.get("gpu_nodes") or []
    return {**{n["pool"]: n["ceiling"] for n in nodes if "ceiling" in n}, **(args.get("ceilings") or {})}


def missing_keys(args: KueueQueuesArgs) -> list[tuple[str, str]]:
    """Required keys of the nested sections (a TypedDict's are not checked at runtime)."""
    problems = [
        (f"teams[{i}].{k}", "required")
        for i, t in enumerate(args.get("teams") or [])
        for k in ("name", "quota")
        if k not in t
    ]
    problems += [
        (f"gpu_nodes[{i}].pool", "required") for i, n in enumerate(args.get("gpu_nodes") or []) if "pool" not in n
    ]
    topo = args.get("topology")
    if topo is not None and "pools" not in topo:
        problems.append(("topology.pools", "required"))
    return problems


def arg_problems(args: KueueQueuesArgs) -> list[tuple[str, str]]:
    """Every bad argument, as `(path, reason)`."""
    nodes: Sequence[GpuNodes] = args.get("gpu_nodes") or []
    pools = [n["pool"] for n in nodes]
    teams: Sequence[KueueTeamArgs] = args.get("teams") or []
    problems: list[tuple[str, str]] = []
    if not teams:
        problems.append(("teams", "at least one team"))
    names = [t["name"] for t in teams]
    problems += [("teams", f"team {n!r} appears twice") for n in sorted({n for n in names if names.count(n) > 1})]
    queues = [f"{r.namespace_of(t)}/{r.local_queue_of(t)}" for t in teams]
    problems += [("teams", f"LocalQueue {q} appears twice") for q in sorted({q for q in queues if queues.count(q) > 1})]
    for i, t in enumerate(teams):
        bad = [p for p in t["quota"] if p not in pools]
        if bad:
            problems.append((f"teams[{i}].quota", f"no pool {bad} in gpu_nodes (pools: {', '.join(pools)})"))
    for key in ("queued_provisioning",):
        bad = [p for p in args.get(key) or [] if p not in pools]
        if bad:
            problems.append((key, f"no pool {bad} in gpu_nodes"))
    unknown = [f for f in args.get("frameworks") or [] if f not in KUEUE_FRAMEWORKS]
    if unknown:
        problems.append(("frameworks", f"not Kueue integrations: {unknown} (known: {', '.join(KUEUE_FRAMEWORKS)})"))
    topo = args.get("topology")
    if topo is not None and [p for p in topo["pools"] if p not in pools]:
        problems.append(("topology.pools", f"no pool {[p for p in topo['pools'] if p not in pools]} in gpu_nodes"))
    over = r.overcommitted(teams, ceilings_of(args))
    if over and not args.get("overcommit"):
        text = "; ".join(f"{p}: {s} > {c}" for p, (s, c) in over.items())
        problems.append(("teams", f"quotas sum past the pools' ceilings ({text}); set overcommit to allow it"))
    for n in nodes:
        if len(n["taints"]) + 1 > r.MAX_FLAVOR_TAINTS:
            problems.append(("gpu_nodes", f"pool {n['pool']} has more taints than a ResourceFlavor holds (8)"))
    return problems


class KueueQueues(pulumi.ComponentResource):
    """Kueue (chart pinned in `gpuplane.pins`) and one ResourceFlavor per GPU pool, a ClusterQueue and a
    LocalQueue per team, gang admission (`waitForPodsReady`), DWS admission check and topology."""

    namespace: pulumi.Output[str]
    """Kueue's namespace."""
    queues: dict[str, str]
    """Team -> `namespace/name` of its LocalQueue (what jobs name in `kueue.x-k8s.io/queue-name`)."""
    flavors: dict[str, str]
    """Pool -> the name of its ResourceFlavor (a flavor on a topology carries a digest of its immutable fields)."""
    multikueue_token: pulumi.Output[str] | None
    """With `multikueue_worker`: the worker ServiceAccount's token (secret), for a MultiKueue manager's kubeconfig
    (`gpuplane.kueue.multikueue_worker.worker_kubeconfig`); else None."""

    def __init__(self, name: str, args: KueueQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        problems = (shape_problems(args, KueueQueuesArgs) + cluster_problems(args)) or missing_keys(args)
        problems = problems or arg_problems(args)
        if problems:
            raise ArgsError(f"KueueQueues {name!r}", problems)
        super().__init__("gpuplane:kueue:KueueQueues", name, None, opts)
        adopt_kubernetes_provider(self, name, args.get("cluster"))
        namespace = args.get("namespace") or NAMESPACE
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=namespace_manifest(namespace, "baseline")["metadata"],
            opts=pulumi.ResourceOptions(parent=self),
        )
        values = r.chart_values(
            args.get("pods_ready_timeout") or "10m",
            args.get("node_selector") or {},
            args.get("tolerations") or (),
            dra=any(serves(n) for n in args["gpu_nodes"]),
            frameworks=args.get("frameworks"),
        )
        release = pinned_release(
            f"{name}-release", "kueue", RELEASE, namespace, values, pulumi.ResourceOptions(parent=self, depends_on=[ns])
        )
        made: dict[tuple[str, str], pulumi.Resource] = {}
        planned = objects(args)
        for obj in planned:
            kind, md = obj["kind"], obj["metadata"]
            # a LocalQueue is named after its team's ClusterQueue: teams may share a LocalQueue name
            res_name = f"{name}-{ROLES[kind]}-{obj['spec']['clusterQueue'] if kind == 'LocalQueue' else md['name']}"
            if kind == "Namespace":
                made[kind, md["name"]] = k8s.core.v1.Namespace(
                    res_name, metadata=md, opts=pulumi.ResourceOptions(parent=self)
                )
                continue
            deps = [release, *(made[k] for k in needs(obj) if k in made)]
            made[kind, md["name"]] = custom_resource(
                res_name, obj, pulumi.ResourceOptions(parent=self, depends_on=deps)
            )
        self.multikueue_token = (
            worker_access(name, namespace, frameworks_of(args), pulumi.ResourceOptions(parent=self, depends_on=[ns]))
            if args.get("multikueue_worker")
            else None
        )
        self.namespace = ns.metadata.name
        self.queues = {t["name"]: f"{r.namespace_of(t)}/{r.local_queue_of(t)}" for t in args["teams"]}
        self.flavors = r.flavor_names([o for o in planned if o["kind"] == "ResourceFlavor"])
        self.register_outputs({"namespace": self.namespace, "queues": self.queues, "flavors": self.flavors})


def frameworks_of(args: KueueQueuesArgs) -> list[str]:
    """Kueue's enabled frameworks: `frameworks`, else the chart's."""
    given = args.get("frameworks")
    return list(given) if given is not None else list(r.CHART_CONFIG["integrations"]["frameworks"])


def worker_access(
    name: str, namespace: str, frameworks: Sequence[str], opts: pulumi.ResourceOptions
) -> pulumi.Output[str]:
    """The worker's ServiceAccount, ClusterRole, binding and token Secret (`multikueue_worker.worker_objects`); the
    token, secret. pulumi-kubernetes waits until the token controller has filled a service-account-token Secret's
    `data` (provider/pkg/await/awaiters.go `untilCoreV1SecretInitialized`), so `data.token` is there on create."""
    account, role, binding, token = mkw.worker_objects(frameworks, namespace)
    sa = k8s.core.v1.ServiceAccount(f"{name}-mk-account", metadata=account["metadata"], opts=opts)
    cluster_role = k8s.rbac.v1.ClusterRole(
        f"{name}-mk-role",
        metadata=role["metadata"],
        rules=role["rules"],
        opts=pulumi.ResourceOptions(parent=opts.parent),
    )
    k8s.rbac.v1.ClusterRoleBinding(
        f"{name}-mk-binding",
        metadata=binding["metadata"],
        role_ref=binding["roleRef"],
        subjects=binding["subjects"],
        opts=pulumi.ResourceOptions(parent=opts.parent, depends_on=[sa, cluster_role]),
    )
    secret = k8s.core.v1.Secret(
        f"{name}-mk-token",
        metadata=token["metadata"],
        type=token["type"],
        opts=pulumi.ResourceOptions(parent=opts.parent, depends_on=[sa], additional_secret_outputs=["data"]),
    )
    return pulumi.Output.secret(secret.data.apply(lambda data: base64.b64decode(data["token"]).decode()))


ROLES = {
    "Namespace": "ns",
    "Topology": "topology",
    "ResourceFlavor": "flavor",
    "ProvisioningRequestConfig": "provisioning",
    "AdmissionCheck": "check",
    "ClusterQueue": "cq",
    "LocalQueue": "lq",
}
"""Kind -> the role in child resource names (`{name}-{role}-{object name}`)."""


def needs(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`(kind, name)` of the objects `obj` refers to, which must exist first (Kueue marks a ClusterQueue
    inactive while a flavor or check it names is missing: kueue pkg/cache ClusterQueue `Active`)."""
    spec = obj.get("spec", {})
    kind = obj["kind"]
    if kind == "ResourceFlavor" and "topologyName" in spec:
        return [("Topology", spec["topologyName"])]
    if kind == "AdmissionCheck":
        return [("ProvisioningRequestConfig", spec["parameters"]["name"])]
    if kind == "ClusterQueue":
        flavors = [("ResourceFlavor", f["name"]) for g in spec["resourceGroups"] for f in g["flavors"]]
        checks = [
            ("AdmissionCheck", c["name"]) for c in spec.get("admissionChecksStrategy", {}).get("admissionChecks", [])
        ]
        return flavors + checks
    if kind == "LocalQueue":
        return [("ClusterQueue", spec["clusterQueue"]), ("Namespace", obj["metadata"]["namespace"])]
    return []


def objects(args: KueueQueuesArgs) -> list[dict[str, Any]]:
    """Every object `KueueQueues` creates after the chart, in creation order (each needs the ones before)."""
    nodes = list(args["gpu_nodes"])
    queued_pools = list(args.get("queued_provisioning") or [])
    nodes = [r.queued(n) if n["pool"] in queued_pools else n for n in nodes]
    topo = args.get("topology")
    out: list[dict[str, Any]] = []
    if topo is not None and topo["pools"]:
        out.append(r.topology_object(topo))
    on_topology = set(topo["pools"]) if topo is not None else set()
    flavors = [r.resource_flavor(n, topo["name"] if topo and n["pool"] in on_topology else None) for n in nodes]
    out += flavors
    if queued_pools:
        resources = [n["resource"] for n in nodes if n["pool"] in queued_pools]
        out += r.provisioning_objects(resources, args.get("queued_max_run_seconds"))
    cohort = args.get("cohort")
    for t in args["teams"]:
        out.append(r.cluster_queue(t, nodes, cohort, queued_pools, r.flavor_names(flavors)))
    if args.get("create_namespaces", True):
        ns_names = dict.fromkeys(r.namespace_of(t) for t in args["teams"])
        out += [namespace_manifest(n, "baseline") for n in ns_names]
    out += [r.local_queue(t) for t in args["teams"]]
    return out
