"""From a stack's `gpuplane:storage` to `ModelStores`, the stack output `storage`, and `mounts()`: the placement
helper's form for a pod that mounts stores.

```python
from gpuplane.storage import mounts
fragment = mounts(cfg, {"models": "/models"}, namespace="inference", service_account="vllm")
# {"serviceAccountName": "vllm", "volumes": [...], "volumeMounts": [...], "annotations": {...}}
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from ..config import ConfigError
from ..config.base import suggest
from ..config.model import StackConfig
from ..config.storage import StorageConfig, access_of, same_bucket
from . import render as r
from .component import ModelStores
from .spec import StoresSpec

POD_IDENTITY_BUILT_IN = ("eks-automode", "eks-karpenter")
"""Platforms whose cluster has the EKS Pod Identity agent already: Auto Mode's nodes run it (EKS user guide,
pod-id-agent-setup: "You do not need to install the EKS Pod Identity Agent on EKS Auto Mode Clusters"), and gpuplane's
Karpenter installs the add-on for its controller (`aws/karpenter.py`)."""


def stores_spec(cfg: StackConfig) -> StoresSpec | None:
    if cfg.storage is None:
        return None
    cloud = cfg.platform_spec.cloud
    return StoresSpec(
        cloud=cloud,
        cluster=cfg.cluster.name,
        region=cfg.region,
        project=cfg.gcp.project if cfg.gcp else None,
        config=cfg.storage,
        namespaces=(),  # the platform creates them (`autoscaling.stack.workload_namespaces`), with its workloads'
        pod_identity_agent=cfg.platform not in POD_IDENTITY_BUILT_IN,
    )


def model_stores(
    name: str,
    cfg: StackConfig,
    opts: pulumi.ResourceOptions,
    eks_cluster_name: Any = None,
    after: Sequence[pulumi.Resource] = (),
) -> ModelStores | None:
    """The stack's `ModelStores` (`{name}-storage`), or None without a `storage` section. Its service accounts and
    claims wait for `after`: the namespaces the platform creates and a Kueue team's."""
    spec = stores_spec(cfg)
    if spec is None:
        return None
    return ModelStores.from_spec(f"{name}-storage", spec, eks_cluster_name, opts, after)


def fragment(
    cloud: str, config: StorageConfig, stores: Mapping[str, str], namespace: str, service_account: str
) -> dict[str, Any]:
    """The pod-spec fragment mounting `stores` (store -> path) for `namespace/service_account`, read-only where it
    reads a store, read-write where it writes it. Raises `ConfigError` for a store it may not use."""
    problems, chosen = [], []
    for name, path in stores.items():
        store = config.store(name)
        writes = access_of(store, namespace, service_account) if store is not None else None
        if store is None:
            known = [s.name for s in config.stores]
            problems.append((name, f"no store {name!r}{suggest(name, known)} (stores: {', '.join(known)})"))
        elif writes is None:
            problems.append((name, f"{namespace}/{service_account} may neither read nor write store {name}"))
        else:
            chosen.append((name, path, writes))
    shared = same_bucket(cloud, config, list(stores))
    if shared:
        problems.append(("stores", shared))
    if problems:
        raise ConfigError(problems)
    return {"serviceAccountName": service_account, **r.mounts(cloud, chosen)}


def mounts(cfg: StackConfig, stores: Mapping[str, str], namespace: str, service_account: str) -> dict[str, Any]:
    """For a pod of your own: `serviceAccountName`, `volumes` and `annotations` for the pod spec, `volumeMounts` for
    its container, mounting each of `stores` (store -> path) of a parsed stack config as `namespace/service_account`
    may (read-only for a reader). Raises `ConfigError` naming a store the account may not use."""
    if cfg.storage is None:
        raise ConfigError([("storage", "this stack has no stores (gpuplane:storage)")])
    return fragment(cfg.platform_spec.cloud, cfg.storage, stores, namespace, service_account)


def storage_outputs(cfg: StackConfig, stores: ModelStores | None) -> dict[str, Any]:
    """The stack output `storage` (with the section): per store its bucket, claims and who may use it."""
    if cfg.storage is None or stores is None:
        return {}

    def entry(bucket: Any, store: Any) -> dict[str, Any]:
        return {
            "bucket": bucket,
            **({"prefix": store.prefix} if store.prefix else {}),
            "driver": r.DRIVERS[cfg.platform_spec.cloud].csi,
            "readers": [a.key for a in store.readers],
            "writers": [a.key for a in store.writers],
            "claims": [f"{ns}/{r.claim_name(store.name, w)}" for w in (False, True) for ns in store.namespaces(w)],
        }

    return {
        "storage": stores.buckets.apply(
            lambda names: {s.name: entry(names[s.name], s) for s in cfg.storage.stores} if cfg.storage else {}
        )
    }


__all__: Sequence[str] = ("model_stores", "mounts", "storage_outputs", "fragment")
