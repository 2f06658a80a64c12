"""MultiKueue in the deploy simulator: a manager's MultiKueueCluster needs its worker's kubeconfig Secret.

Kueue reads the Secret named by `spec.clusterSource.kubeConfig.location` (`locationType: Secret`, the default) in
its own namespace, under key `kubeconfig` (kubernetes-sigs/kueue v0.19.2
pkg/controller/admissionchecks/multikueue/multikueuecluster.go `getKubeConfigFromSecret`; apis/kueue/v1beta2
multikueue_types.go `MultiKueueConfigSecretKey`). Without it the MultiKueueCluster is inactive (`BadKubeConfig`),
so the MultiKueue AdmissionCheck and the manager's ClusterQueue are too, and no job leaves the manager. Kueue
retries when the Secret appears, but a Secret that nothing creates never appears, and one created after the
cluster object leaves the fleet's queue inactive meanwhile: the plan must create it, on the same cluster, first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..mocks_engine import kubernetes_name
from .graph import DeployGraph, at_path, provider_urn

MULTIKUEUE_CLUSTER = "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster"
MULTIKUEUE_CLUSTER_V1BETA1 = "kubernetes:kueue.x-k8s.io/v1beta1:MultiKueueCluster"
SECRET = "kubernetes:core/v1:Secret"
KUEUE_NAMESPACE = "kueue-system"
"""Kueue's namespace as its chart and manifests install it (kueue config/default/kustomization.yaml)."""
KEY = "kubeconfig"
SECRET_MASK = "[secret]"
"""How a plan records a secret input (`plan.monitor.SECRET`): its keys are not known, so not checked."""

Found = tuple[str, str, str, str]
"""(rule, URN, message, fix), as `Violation` takes them."""


def _kubeconfig_ref(r: Any) -> Mapping[str, Any] | None:
    """The kubeConfig reference of a MultiKueueCluster (v1beta2 `clusterSource.kubeConfig`, v1beta1
    `kubeConfig`), or None when it connects through a ClusterProfile."""
    for path in ("spec.clusterSource.kubeConfig", "spec.kubeConfig"):
        ref = at_path(r.inputs, path)
        if isinstance(ref, Mapping):
            return ref
    return None


def _keys(secret: Any) -> set[str] | None:
    """The Secret's data keys, or None when the plan does not show them (a secret input)."""
    keys: set[str] = set()
    for field in ("data", "stringData"):
        value = secret.inputs.get(field)
        if value == SECRET_MASK:
            return None
        if isinstance(value, Mapping):
            keys |= set(value)
    return keys


def check_multikueue_secrets(g: DeployGraph) -> Iterator[Found]:
    """Each MultiKueueCluster whose kubeconfig is a Secret: that Secret is in the plan on the same cluster (the
    same Kubernetes provider), in `kueue-system`, with key `kubeconfig` where the plan shows its keys, and the
    MultiKueueCluster waits for it."""
    fix = (
        f"create the worker's kubeconfig as a Secret in {KUEUE_NAMESPACE} (key {KEY}) with the manager's provider, "
        "and give the MultiKueueCluster depends_on that Secret (MultiKueueManager does both)"
    )
    for r in g.plan.resources:
        if r.type not in (MULTIKUEUE_CLUSTER, MULTIKUEUE_CLUSTER_V1BETA1):
            continue
        ref = _kubeconfig_ref(r)
        if ref is None or (ref.get("locationType") or "Secret") != "Secret":
            continue
        name = str(ref.get("location"))
        secrets = [
            s
            for s in g.plan.by_type(SECRET)
            if provider_urn(s.provider) == provider_urn(r.provider)
            and str(at_path(s.inputs, "metadata.namespace") or "default") == KUEUE_NAMESPACE
            and kubernetes_name(s.inputs.get("metadata"), s.name) == name
        ]
        if not secrets:
            problem = (
                f"its kubeconfig Secret {KUEUE_NAMESPACE}/{name} is not in this plan on the same cluster: Kueue marks "
                "the MultiKueueCluster inactive (BadKubeConfig) and no job reaches the worker"
            )
        elif (keys := _keys(secrets[0])) is not None and KEY not in keys:
            problem = (
                f"Secret {KUEUE_NAMESPACE}/{name} has no key {KEY!r} (it has {sorted(keys)}): Kueue reads the "
                "kubeconfig there only (BadKubeConfig)"
            )
        elif not g.waits_for(r.urn, secrets[0].urn):
            problem = (
                f"it does not wait for its kubeconfig Secret {KUEUE_NAMESPACE}/{name}: created first, it is inactive "
                "(BadKubeConfig) until the Secret exists, and so is the queue that dispatches to it"
            )
        else:
            continue
        yield ("multikueue-secret-first", r.urn, problem, fix)
