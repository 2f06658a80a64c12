"""`MultiKueueManager`: Kueue's MultiKueue on a manager cluster, so jobs submitted there run on whichever worker
cluster has the GPUs (docs/queues.md, "MultiKueue across a fleet")."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..args.checks import ArgsError, known, shape_problems
from ..args.multikueue import MultiKueueManagerArgs
from ..config.base import DNS_LABEL, HINTS
from ..k8s.objects import custom_resource
from . import multikueue as mk

RESOURCE_NAME = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
"""A Kubernetes resource name (`nvidia.com/gpu`, `cpu`): a qualified name, as a ResourceList key."""


def _label_problem(path: str, value: object) -> list[tuple[str, str]]:
    if isinstance(value, str) and len(value) <= 63 and re.match(DNS_LABEL, value):
        return []
    return [(path, f"{value!r} {HINTS[DNS_LABEL]}")]


def _worker_problems(workers: object) -> list[tuple[str, str]]:
    if not isinstance(workers, Mapping):
        return [("workers", "must be a mapping of worker name to kubeconfig, known when the program runs")]
    problems: list[tuple[str, str]] = []
    if not workers:
        problems.append(("workers", "at least one worker"))
    if len(workers) > mk.MAX_WORKERS:
        problems.append(("workers", f"{len(workers)} workers; a MultiKueueConfig lists at most {mk.MAX_WORKERS}"))
    for w, kubeconfig in workers.items():
        path = f"workers.{w}"
        problems += _label_problem(path, w)
        if isinstance(kubeconfig, str):  # an Output is checked by Kueue when it connects
            found = mk.kubeconfig_problems(kubeconfig)
            if found:
                problems.append((path, "Kueue would refuse this kubeconfig (InsecureKubeConfig): " + "; ".join(found)))
        elif known(kubeconfig):
            problems.append((path, "a kubeconfig is a string (or an Output of one)"))
    return problems


def _quota_problems(quotas: object) -> list[tuple[str, str]]:
    if not isinstance(quotas, Mapping) or not quotas:
        return [("quotas", "at least one resource with the fleet's total, e.g. {'nvidia.com/gpu': 72}")]
    problems = []
    for res, total in quotas.items():
        if not isinstance(res, str) or not RESOURCE_NAME.match(res):
            problems.append((f"quotas.{res}", "not a Kubernetes resource name (e.g. nvidia.com/gpu)"))
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            problems.append((f"quotas.{res}", f"{total!r}: the total must be a whole number, 0 or more"))
    return problems


def arg_problems(args: MultiKueueManagerArgs) -> list[tuple[str, str]]:
    """Every bad argument, as `(path, reason)`."""
    problems = shape_problems(args, MultiKueueManagerArgs)
    said = {p for p, _ in problems}
    for key, check in (("workers", _worker_problems), ("quotas", _quota_problems)):
        if key not in args:
            problems.append((key, "required argument is missing"))
        elif key not in said:
            problems += check(args[key])  # type: ignore[literal-required]
    namespaces = args.get("namespaces") or []
    if "namespaces" not in said:
        if isinstance(namespaces, str):
            problems.append(("namespaces", "a list of namespaces, not one string"))
        else:
            for i, ns in enumerate(namespaces):
                problems += _label_problem(f"namespaces[{i}]", ns)
            twice = sorted({n for n in namespaces if list(namespaces).count(n) > 1})
            problems += [("namespaces", f"{n!r} appears twice") for n in twice]
    if "queue_name" in args and "queue_name" not in said:
        problems += _label_problem("queue_name", args["queue_name"])
    return problems


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


class MultiKueueManager(pulumi.ComponentResource):
    """On a manager cluster running Kueue: one Secret and MultiKueueCluster per worker, a MultiKueueConfig, the
    MultiKueue AdmissionCheck, a plain ResourceFlavor, a ClusterQueue holding the fleet's totals and a LocalQueue
    per namespace. Give the Kueue install (chart or CRDs) as `opts.depends_on`: every object waits for it."""

    queue: str
    """The ClusterQueue's name (also the LocalQueues')."""
    local_queues: dict[str, str]
    """Namespace -> `namespace/name` of its LocalQueue (what jobs name in `kueue.x-k8s.io/queue-name`)."""
    clusters: list[str]
    """The MultiKueueClusters' names (the workers')."""
    admission_check: str
    """The MultiKueue AdmissionCheck's name."""

    def __init__(self, name: str, args: MultiKueueManagerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        problems = arg_problems(args)
        if problems:
            raise ArgsError(f"MultiKueueManager {name!r}", problems)
        super().__init__("gpuplane:kueue:MultiKueueManager", name, None, opts)
        installers = _listed(opts.depends_on if opts is not None else None)
        workers = dict(args["workers"])
        namespaces = list(args.get("namespaces") or [])
        queue = args.get("queue_name") or mk.QUEUE
        made: dict[tuple[str, str], pulumi.Resource] = {}

        def create(obj: dict[str, Any], role: str, needs: Sequence[pulumi.Resource] = ()) -> pulumi.Resource:
            res = custom_resource(
                f"{name}-{role}", obj, pulumi.ResourceOptions(parent=self, depends_on=[*installers, *needs])
            )
            made[obj["kind"], obj["metadata"]["name"]] = res
            return res

        for worker, kubeconfig in workers.items():
            doc = mk.kubeconfig_secret(worker, kubeconfig)
            secret = k8s.core.v1.Secret(
                f"{name}-secret-{worker}",
                metadata=doc["metadata"],
                type=doc["type"],
                string_data={mk.SECRET_KEY: pulumi.Output.secret(kubeconfig)},
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=installers, additional_secret_outputs=["data", "stringData"]
                ),
            )
            create(mk.multikueue_cluster(worker), f"cluster-{worker}", [secret])
        clusters = [made["MultiKueueCluster", w] for w in workers]
        config = create(mk.multikueue_config(list(workers)), "config", clusters)
        check = create(mk.admission_check(), "check", [config])
        flavor = create(mk.resource_flavor(), "flavor")
        cq = create(mk.cluster_queue(args["quotas"], namespaces, queue), "cq", [flavor, check])
        for ns in dict.fromkeys(namespaces):
            create(mk.local_queue(ns, queue), f"lq-{ns}", [cq])
        self.queue = queue
        self.local_queues = {ns: f"{ns}/{queue}" for ns in namespaces}
        self.clusters = list(workers)
        self.admission_check = mk.NAME
        self.register_outputs(
            {
                "queue": self.queue,
                "local_queues": self.local_queues,
                "clusters": self.clusters,
                "admission_check": self.admission_check,
            }
        )
