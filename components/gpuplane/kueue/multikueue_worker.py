"""A MultiKueue worker's side: the account a manager's Kueue uses to reach it, and the kubeconfig it gets.

Kueue refuses a worker kubeconfig that runs an exec plugin (kueue v0.19.2
pkg/controller/admissionchecks/multikueue/multikueuecluster.go `validateRestConfig`), which is how EKS and GKE
kubeconfigs authenticate. So each worker gets what Kueue's own setup script creates
(site/static/examples/multikueue/create-multikueue-kubeconfig.sh, v0.19.2): a ServiceAccount in Kueue's namespace,
a ClusterRole over the job kinds the manager copies (derived from its enabled frameworks, as Kueue's own e2e setup
does: the script's fixed role lacks trainjobs, and a watch the role refuses fails the whole connection), a
ClusterRoleBinding, and a long-lived token Secret (`kubernetes.io/service-account-token`), whose token goes into a
kubeconfig with the cluster's server and CA.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from ..k8s.objects import one_cluster_kubeconfig
from .multikueue import KUEUE_NAMESPACE, LABELS

ACCOUNT = "gpuplane-multikueue"
"""The worker's ServiceAccount, its token Secret, ClusterRole and ClusterRoleBinding (the script's `multikueue-sa`)."""
TOKEN_TYPE = "kubernetes.io/service-account-token"

VERBS = ("create", "update", "patch", "delete", "get", "list", "watch")
WORKLOAD_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("kueue.x-k8s.io", "workloads", VERBS),
    ("kueue.x-k8s.io", "workloads/status", ("get", "patch", "update")),
    ("kueue.x-k8s.io", "clusterqueues", ("get", "list", "watch")),
    ("kueue.x-k8s.io", "localqueues", ("get", "list", "watch")),
)
"""(API group, resource, verbs) a manager always needs on a worker."""
FRAMEWORK_RESOURCES: dict[str, tuple[str, str]] = {
    "batch/job": ("batch", "jobs"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "jobsets"),
    "pod": ("", "pods"),
    "statefulset": ("apps", "statefulsets"),
    "kubeflow.org/tfjob": ("kubeflow.org", "tfjobs"),
    "kubeflow.org/paddlejob": ("kubeflow.org", "paddlejobs"),
    "kubeflow.org/pytorchjob": ("kubeflow.org", "pytorchjobs"),
    "kubeflow.org/xgboostjob": ("kubeflow.org", "xgboostjobs"),
    "kubeflow.org/jaxjob": ("kubeflow.org", "jaxjobs"),
    "kubeflow.org/mpijob": ("kubeflow.org", "mpijobs"),
    "workload.codeflare.dev/appwrapper": ("workload.codeflare.dev", "appwrappers"),
    "ray.io/rayjob": ("ray.io", "rayjobs"),
    "ray.io/raycluster": ("ray.io", "rayclusters"),
    "ray.io/rayservice": ("ray.io", "rayservices"),
    "leaderworkerset.x-k8s.io/leaderworkerset": ("leaderworkerset.x-k8s.io", "leaderworkersets"),
    "trainer.kubeflow.org/trainjob": ("trainer.kubeflow.org", "trainjobs"),
}
"""Kueue framework -> the (API group, resource) the manager copies to a worker and watches there: kueue v0.19.2
test/util/multikueue.go `frameworkRules` (each with `VERBS`, and `get` on its status). `deployment` has none: a
Deployment's pods travel as pods."""


def rules(frameworks: Sequence[str]) -> list[dict[str, Any]]:
    """The worker's ClusterRole rules for a manager with these frameworks enabled: kueue v0.19.2
    test/util/multikueue.go `MultiKueueRulesForManager` (the workload rules, then each framework's)."""
    out = [{"apiGroups": [g], "resources": [r], "verbs": list(v)} for g, r, v in WORKLOAD_RULES]
    for framework in frameworks:
        if framework in FRAMEWORK_RESOURCES:
            group, resource = FRAMEWORK_RESOURCES[framework]
            out.append({"apiGroups": [group], "resources": [resource], "verbs": list(VERBS)})
            out.append({"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]})
    return out


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(LABELS)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def worker_objects(frameworks: Sequence[str], namespace: str = KUEUE_NAMESPACE) -> list[dict[str, Any]]:
    """ServiceAccount, ClusterRole (for a manager with `frameworks` enabled), ClusterRoleBinding and token Secret, in
    creation order."""
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(ACCOUNT, namespace)}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(ACCOUNT),
        "rules": rules(frameworks),
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": _meta(ACCOUNT),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ACCOUNT},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": namespace}],
    }
    token = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": TOKEN_TYPE,
        "metadata": {
            **_meta(ACCOUNT, namespace),
            # the token controller fills `data` (token, ca.crt, namespace) for the account named here
            "annotations": {"kubernetes.io/service-account.name": ACCOUNT},
        },
    }
    return [account, role, binding, token]


def worker_kubeconfig(kubeconfig: Any, token: str, name: str) -> str:
    """The cluster's kubeconfig (`kubeconfig`: text or mapping, as the platform outputs it) with its current
    context's server and CA kept and the user replaced by the ServiceAccount's `token`: what Kueue accepts
    (`multikueue.kubeconfig_problems` is empty for it). `name` names the cluster, user and context."""
    doc = yaml.safe_load(kubeconfig) if isinstance(kubeconfig, str) else kubeconfig
    contexts = {c["name"]: c["context"] for c in doc.get("contexts") or []}
    clusters = {c["name"]: c["cluster"] for c in doc.get("clusters") or []}
    current = contexts.get(doc.get("current-context")) or next(iter(contexts.values()))
    cluster = clusters[current["cluster"]]
    return one_cluster_kubeconfig(name, cluster["server"], cluster["certificate-authority-data"], {"token": token})
