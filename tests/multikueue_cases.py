"""Broken and fixed graphs for the deploy simulator's MultiKueue rule (`plan/deploy/multikueue.py`), written from
Kueue's MultiKueue setup guide (kubernetes-sigs/kueue v0.19.2 site/content/en/docs/tasks/manage/setup_multikueue.md:
the worker's kubeconfig is a Secret in `kueue-system` under key `kubeconfig`, named by the MultiKueueCluster), not
from the rule. Shaped like `storage_cases`: `tests/test_deploy.py` may add them to its `CASES`; its builders are
passed in, so this module imports nothing from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .storage_cases import K8S, P

RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"
MKC = "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster"


def multikueue_cases(
    res: Callable[..., Any],
    plan: Callable[..., Any],
    eks_base: Callable[..., Any],
    gke_base: Callable[..., Any],
    system: Any,
) -> list[tuple[str, Any, Any]]:
    """`system`: test_deploy's untainted system node group (where Kueue's controller runs)."""
    values = {"controllerManager": {"nodeSelector": {"gpuplane.io/role": "system"}}}
    kueue = res(
        RELEASE,
        "kueue",
        {"chart": "kueue", "name": "kueue", "namespace": "kueue-system", "values": values},
        provider=K8S,
    )

    def secret(namespace: str = "kueue-system", key: str = "kubeconfig", shown: bool = False) -> Any:
        data: Any = {key: "[secret]"} if shown else "[secret]"
        meta = {"name": "gpuplane-multikueue-us-east", "namespace": namespace}
        inputs = {"metadata": meta, "type": "Opaque", "stringData": data}
        return res(SECRET, "secret", inputs, deps=(kueue.urn,), provider=K8S)

    def cluster(waits: bool = True, provider: str = K8S) -> Any:
        source = {"kubeConfig": {"locationType": "Secret", "location": "gpuplane-multikueue-us-east"}}
        deps = (kueue.urn, f"{P}{SECRET}::secret") if waits else (kueue.urn,)
        inputs = {"metadata": {"name": "us-east"}, "spec": {"clusterSource": source}}
        return res(MKC, "us-east", inputs, deps=deps, provider=provider)

    def eks(*more: Any) -> Any:
        return plan(*eks_base(), system, kueue, *more)

    fixed = eks(secret(), cluster())
    return [
        # the Secret the MultiKueueCluster names must exist: Kueue reads it (setup_multikueue.md)
        ("multikueue-secret-first", eks(cluster(waits=False)), fixed),
        # ... in Kueue's namespace, not another one
        ("multikueue-secret-first", eks(secret(namespace="default"), cluster()), fixed),
        # ... under key `kubeconfig` (apis/kueue/v1beta2 multikueue_types.go `MultiKueueConfigSecretKey`)
        (
            "multikueue-secret-first",
            eks(secret(key="config", shown=True), cluster()),
            eks(secret(shown=True), cluster()),
        ),
        # ... and before the MultiKueueCluster, or the fleet's queue is inactive until it appears
        ("multikueue-secret-first", eks(secret(), cluster(waits=False)), fixed),
    ]
