"""`ModelStores`: buckets of models and datasets mounted in a cluster's pods (docs/storage.md).

Per store: the bucket (created private and encrypted, or yours), a static PersistentVolume and claim per namespace and
access, and grants to the service accounts the store names only: on EKS an IAM role per service account through EKS
Pod Identity, read by Mountpoint's pod-level credentials; on GKE bucket roles for the service accounts' Workload
Identity Federation principals. On EKS also the Mountpoint and Pod Identity agent add-ons; on GKE the cluster's
`GcsFuseCsiDriver` add-on is the cluster's to enable (`GkeGpuCluster` does with a `storage` section).

No `from __future__ import annotations`: the multi-language package reads the components' annotations.
"""

import importlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..args.storage import ModelStoresArgs
from ..k8s.objects import namespace_manifest
from . import render as r
from .spec import StoresSpec, spec_of

CLOUD_PARTS: Mapping[str, str] = MappingProxyType({"aws": "gpuplane.aws.stores", "gcp": "gpuplane.gcp.stores"})
"""Cloud -> the module that makes its buckets (`buckets`) and grants (`grants`). Imported by name, as the stack
program imports a platform's builder: a GKE stack never imports the AWS SDK."""


class ModelStores(pulumi.ComponentResource):
    """Model and dataset stores of one cluster: buckets, the CSI driver's volumes and claims, and access for the named
    service accounts only. Pods mount a store with `gpuplane.storage.mounts` (or `ModelStores.mounts`)."""

    buckets: pulumi.Output[Mapping[str, str]]
    """Store -> its bucket's name."""
    claims: pulumi.Output[Mapping[str, Sequence[str]]]
    """Store -> its claims, as `<namespace>/<claim>`."""

    def __init__(self, name: str, args: ModelStoresArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Raises `ArgsError` (a `ConfigError`) naming every bad argument before registering anything."""
        spec = spec_of(f"ModelStores {name!r}", args)
        super().__init__("gpuplane:storage:ModelStores", name, None, opts)
        self._build(name, spec, args.get("eks_cluster_name"), [])

    @classmethod
    def from_spec(
        cls,
        name: str,
        spec: StoresSpec,
        eks_cluster_name: Any,
        opts: pulumi.ResourceOptions,
        after: Sequence[pulumi.Resource] = (),
    ) -> "ModelStores":
        """A platform's stores, from its stack config (its accounts and claims after `after`: their namespaces)."""
        self = cls.__new__(cls)
        pulumi.ComponentResource.__init__(self, "gpuplane:storage:ModelStores", name, None, opts)
        self._build(name, spec, eks_cluster_name, list(after))
        return self

    def _build(self, name: str, spec: StoresSpec, eks_cluster_name: Any, after: list[pulumi.Resource]) -> None:
        child = pulumi.ResourceOptions(parent=self)
        self.spec = spec
        part = importlib.import_module(CLOUD_PARTS[spec.cloud])
        names, arns = part.buckets(name, spec, child)
        namespaces = [
            k8s.core.v1.Namespace(
                f"{name}-{ns}-namespace", metadata=namespace_manifest(ns, "baseline")["metadata"], opts=child
            )
            for ns in spec.namespaces
        ]
        waits: list[pulumi.Resource] = [*namespaces, *after]
        in_ns = pulumi.ResourceOptions(parent=self, depends_on=waits)
        self.service_accounts = []
        for ns, sa in spec.service_accounts:
            doc = r.service_account(ns, sa)
            self.service_accounts.append(
                k8s.core.v1.ServiceAccount(
                    f"{name}-{ns}-{sa}-serviceaccount",
                    metadata=doc["metadata"],
                    automount_service_account_token=doc["automountServiceAccountToken"],
                    opts=in_ns,
                )
            )
        claims: dict[str, list[str]] = {}
        for store in spec.config.stores:
            for writes in (False, True):
                for ns in store.namespaces(writes):
                    role = f"{name}-{store.name}-{ns}-{'rw' if writes else 'ro'}"
                    pv = r.persistent_volume(
                        spec.cloud, spec.cluster, store, names[store.name], ns, writes, spec.region
                    )
                    volume = k8s.core.v1.PersistentVolume(
                        f"{role}-volume", metadata=pv["metadata"], spec=pv["spec"], opts=child
                    )
                    pvc = r.persistent_volume_claim(spec.cluster, store, ns, writes)
                    k8s.core.v1.PersistentVolumeClaim(
                        f"{role}-claim",
                        metadata=pvc["metadata"],
                        spec=pvc["spec"],
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[*waits, volume]),
                    )
                    claims.setdefault(store.name, []).append(f"{ns}/{r.claim_name(store.name, writes)}")
        self.access = part.grants(name, spec, arns or names, eks_cluster_name, child)
        self.buckets = pulumi.Output.from_input(names)
        self.claims = pulumi.Output.from_input(claims)
        self.register_outputs({"buckets": self.buckets, "claims": self.claims})

    def mounts(self, stores: Mapping[str, str], namespace: str, service_account: str) -> dict[str, Any]:
        """The pod-spec fragment that mounts `stores` (store -> path) for pods of `namespace/service_account`:
        `volumes`, `volumeMounts`, `annotations` and `serviceAccountName` (see `gpuplane.storage.mounts`)."""
        from .stack import fragment

        return fragment(self.spec.cloud, self.spec.config, stores, namespace, service_account)
