"""Kueue MultiKueue on a manager cluster, as plain manifests (kueue.x-k8s.io/v1beta2, Kueue v0.19.2).

A ClusterQueue on the manager carries the fleet's quota and the MultiKueue AdmissionCheck; a workload that gets
quota there is copied to the worker clusters of the check's MultiKueueConfig, and runs where a worker's own
Kueue admits it (kubernetes-sigs/kueue v0.19.2 site/content/en/docs/concepts/multikueue.md, "Job Flow"). The
manager reaches each worker through a MultiKueueCluster whose kubeconfig is a Secret in Kueue's namespace
(site/content/en/docs/tasks/manage/setup_multikueue.md; site/static/examples/multikueue/multikueue-setup.yaml).
MultiKueue is beta and on by default since 0.9 (pkg/features/kube_features.go, feature gate `MultiKueue`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

import yaml

from .render import meta

NAME = "gpuplane-multikueue"
"""Name of the MultiKueueConfig, the AdmissionCheck and the manager's ResourceFlavor."""
QUEUE = "gpuplane-fleet"
"""Default name of the manager's ClusterQueue and LocalQueues."""
KUEUE_NAMESPACE = "kueue-system"
"""Where Kueue's controller runs, and so where it reads the kubeconfig Secrets (`configNamespace`: kueue v0.19.2
pkg/controller/admissionchecks/multikueue/multikueuecluster.go `getKubeConfigFromSecret`)."""
CONTROLLER = "kueue.x-k8s.io/multikueue"
"""AdmissionCheck controller of MultiKueue (kueue v0.19.2 apis/kueue/v1beta2/multikueue_types.go
`MultiKueueControllerName`)."""
SECRET_KEY = "kubeconfig"
"""Key of the kubeconfig in the Secret (apis/kueue/v1beta2/multikueue_types.go `MultiKueueConfigSecretKey`)."""
MAX_WORKERS = 20
"""MultiKueueConfig `spec.clusters` maxItems (config/components/crd/bases/kueue.x-k8s.io_multikueueconfigs.yaml)."""
LABELS = {"app.kubernetes.io/managed-by": "gpuplane"}


def secret_name(worker: str) -> str:
    return f"{NAME}-{worker}"


def kubeconfig_secret(worker: str, kubeconfig: Any) -> dict[str, Any]:
    """The worker's kubeconfig as an Opaque Secret in Kueue's namespace, under key `kubeconfig` (kueue v0.19.2
    site/content/en/docs/tasks/manage/setup_multikueue.md, "Create worker's Kubeconfig secret":
    `kubectl create secret generic worker1-secret -n kueue-system --from-file=kubeconfig=...`). `kubeconfig` may
    be an Output; the component keeps it secret."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": secret_name(worker), "namespace": KUEUE_NAMESPACE, "labels": dict(LABELS)},
        "type": "Opaque",
        "stringData": {SECRET_KEY: kubeconfig},
    }


def multikueue_cluster(worker: str) -> dict[str, Any]:
    """The worker as Kueue knows it: `spec.clusterSource.kubeConfig` names the Secret (`locationType: Secret`;
    v1beta2 moved v1beta1's `spec.kubeConfig` under `clusterSource`, whose CEL rule wants exactly one of
    `kubeConfig` and `clusterProfileRef`: kueue.x-k8s.io_multikueueclusters.yaml v0.19.2)."""
    source = {"kubeConfig": {"locationType": "Secret", "location": secret_name(worker)}}
    return {**meta("MultiKueueCluster", worker), "spec": {"clusterSource": source}}


def multikueue_config(workers: Sequence[str]) -> dict[str, Any]:
    """The workers a workload may go to, in the given order (the Incremental dispatcher nominates in this order;
    the default AllAtOnce copies to all: concepts/multikueue.md, "Workload Dispatching"). CRD:
    kueue.x-k8s.io_multikueueconfigs.yaml (1 to 20 unique names)."""
    return {**meta("MultiKueueConfig", NAME), "spec": {"clusters": list(workers)}}


def admission_check() -> dict[str, Any]:
    """The MultiKueue AdmissionCheck, its parameters the MultiKueueConfig (kueue.x-k8s.io_admissionchecks.yaml;
    site/static/examples/multikueue/multikueue-setup.yaml)."""
    parameters = {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": NAME}
    return {**meta("AdmissionCheck", NAME), "spec": {"controllerName": CONTROLLER, "parameters": parameters}}


def resource_flavor() -> dict[str, Any]:
    """A flavor without node labels or taints: the manager only reserves quota, the workers' own Kueue picks their
    flavors (multikueue-setup.yaml's `default-flavor`; kueue.x-k8s.io_resourceflavors.yaml)."""
    return {**meta("ResourceFlavor", NAME), "spec": {}}


def cluster_queue(quotas: Mapping[str, int], namespaces: Sequence[str] = (), name: str = QUEUE) -> dict[str, Any]:
    """The manager's ClusterQueue: one resource group covering each resource with the fleet's total as nominal
    quota, and the MultiKueue check on every workload. v1beta2 has no `spec.admissionChecks`, only
    `admissionChecksStrategy` (kueue.x-k8s.io_clusterqueues.yaml v0.19.2; an empty `onFlavors` means every
    workload). `namespaces` limits who may submit (none: any namespace, `namespaceSelector: {}`)."""
    resources = sorted(quotas)
    flavor = {"name": NAME, "resources": [{"name": r, "nominalQuota": quotas[r]} for r in resources]}
    selector: dict[str, Any] = {}
    if namespaces:
        expr = {"key": "kubernetes.io/metadata.name", "operator": "In", "values": sorted(set(namespaces))}
        selector = {"matchExpressions": [expr]}
    spec = {
        "namespaceSelector": selector,
        "resourceGroups": [{"coveredResources": resources, "flavors": [flavor]}],
        "admissionChecksStrategy": {"admissionChecks": [{"name": NAME}]},
    }
    return {**meta("ClusterQueue", name), "spec": spec}


def local_queue(namespace: str, name: str = QUEUE) -> dict[str, Any]:
    """A namespace's LocalQueue of the manager's ClusterQueue (kueue.x-k8s.io_localqueues.yaml). MultiKueue
    creates the remote workload in the same namespace and LocalQueue on the worker, so the workers need both
    (setup_multikueue.md, "In the Worker Cluster")."""
    return {**meta("LocalQueue", name, namespace), "spec": {"clusterQueue": name}}


def manager_objects(
    workers: Mapping[str, Any], quotas: Mapping[str, int], namespaces: Sequence[str] = (), queue: str = QUEUE
) -> list[dict[str, Any]]:
    """Everything on the manager, in creation order: each worker's Secret then its MultiKueueCluster, the config,
    the check, the flavor, the ClusterQueue, the LocalQueues."""
    out: list[dict[str, Any]] = []
    for worker, kubeconfig in workers.items():
        out += [kubeconfig_secret(worker, kubeconfig), multikueue_cluster(worker)]
    out += [multikueue_config(list(workers)), admission_check(), resource_flavor()]
    out.append(cluster_queue(quotas, namespaces, queue))
    out += [local_queue(ns, queue) for ns in dict.fromkeys(namespaces)]
    return out


# --- What Kueue accepts in a kubeconfig -------------------------------------------------------------------------

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _named(items: Any, key: str, name: Any) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, Mapping) and item.get("name") == name and isinstance(item.get(key), Mapping):
            return dict(item[key])
    return {}


def kubeconfig_problems(text: str) -> list[str]:
    """Why Kueue would refuse this kubeconfig (empty: it accepts it). As kueue v0.19.2
    pkg/controller/admissionchecks/multikueue/multikueuecluster.go `validateKubeconfig` and `validateRestConfig`
    (the MultiKueueCluster then stays inactive with reason `InsecureKubeConfig`): no user's `tokenFile`; no cluster
    with `insecure-skip-tls-verify` or a `certificate-authority` file, each with a server; and for the current
    context no exec plugin, auth provider or basic auth, and a server host that is an IP or a DNS subdomain.
    A static `token` (a ServiceAccount's) or a client certificate passes."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        doc = None
    if not isinstance(doc, Mapping):
        return ["not a kubeconfig (YAML with clusters, users and contexts)"]
    problems = []
    for u in doc.get("users") or []:
        user = (u or {}).get("user") or {}
        if isinstance(user, Mapping) and user.get("tokenFile"):
            problems.append(f"user {u.get('name')!r} has a tokenFile: Kueue allows an inline token only")
    for c in doc.get("clusters") or []:
        cluster, name = (c or {}).get("cluster") or {}, (c or {}).get("name")
        if cluster.get("insecure-skip-tls-verify"):
            problems.append(f"cluster {name!r} skips TLS verification")
        if cluster.get("certificate-authority"):
            problems.append(f"cluster {name!r} names a certificate-authority file: use certificate-authority-data")
        if not cluster.get("server"):
            problems.append(f"cluster {name!r} has no server")
    context = _named(doc.get("contexts"), "context", doc.get("current-context"))
    if not context:
        return [*problems, "no current-context naming a context"]
    user = _named(doc.get("users"), "user", context.get("user"))
    server = str(_named(doc.get("clusters"), "cluster", context.get("cluster")).get("server") or "")
    host = (urlparse(server.lower()).hostname or "") if server else ""
    if server and not _ip(host) and not DNS_SUBDOMAIN.match(host):
        problems.append(f"server {server!r} is not an IP or DNS name Kueue trusts")
    if user.get("exec"):
        problems.append("its user runs an exec plugin, which Kueue refuses: use a ServiceAccount token")
    if user.get("auth-provider"):
        problems.append("its user names an auth-provider, which Kueue refuses")
    if user.get("username") or user.get("password"):
        problems.append("its user signs in with basic auth, which Kueue refuses")
    return problems


def _ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
