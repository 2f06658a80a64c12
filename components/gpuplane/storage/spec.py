"""What `ModelStores` builds (`StoresSpec`), from a stack config or from the component's typed args, which the stack
config's own `gpuplane:storage` models check, so each rule lives in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from ..args.checks import ArgsError, plain, shape_problems, snake
from ..args.platform import to_config
from ..args.storage import ModelStoresArgs
from ..config.load import _reason as reason
from ..config.storage import StorageConfig, Store


@dataclass(frozen=True)
class StoresSpec:
    """The stores of one cluster and how the cluster reaches them."""

    cloud: str
    """`aws` or `gcp`."""
    cluster: str
    """The cluster's name: the prefix of PersistentVolumes and of created buckets."""
    region: str
    project: str | None
    """GCP: the project whose Workload Identity pool the service accounts sign in through."""
    config: StorageConfig
    namespaces: tuple[str, ...]
    """Namespaces to create (before the claims)."""
    pod_identity_agent: bool = True
    csi_driver: bool = True

    @property
    def service_accounts(self) -> list[tuple[str, str]]:
        """Every (namespace, service account) a store names, once, in order."""
        found = [(a.namespace, a.serviceAccount) for s in self.config.stores for a, _ in s.users()]
        return list(dict.fromkeys(found))

    def uses(self, namespace: str, service_account: str) -> list[tuple[Store, bool]]:
        """The stores one service account may use, and whether it writes each."""
        return [
            (s, writes)
            for s in self.config.stores
            for a, writes in s.users()
            if (a.namespace, a.serviceAccount) == (namespace, service_account)
        ]


def store_namespaces(config: StorageConfig, exclude: Sequence[str] = ()) -> tuple[str, ...]:
    """The namespaces the stores name, but `default` and `exclude` (created elsewhere)."""
    found = [a.namespace for s in config.stores for a, _ in s.users()]
    return tuple(n for n in dict.fromkeys(found) if n != "default" and n not in exclude)


def spec_of(where: str, args: ModelStoresArgs) -> StoresSpec:
    """Validate `ModelStores`'s args: an `ArgsError` naming each bad argument (`stores[0].readers[1].namespace`)."""
    problems = shape_problems(args, ModelStoresArgs)
    problems += [(k, "required argument is missing") for k in ("cloud", "cluster", "region", "stores") if k not in args]
    stores = args.get("stores")
    doc = to_config({"stores": stores}) if stores is not None else {}  # the args' own converter (snake -> camel)
    config = None
    try:
        config = StorageConfig.model_validate(doc)
    except ValidationError as exc:
        said = {p for p, _ in problems}
        problems += [
            (path, snake(reason(e)))
            for e in exc.errors()
            if (path := snake(".".join(f"[{p}]" if isinstance(p, int) else p for p in e["loc"]).replace(".[", "[")))
            not in said
        ]
    cloud = str(plain(args.get("cloud")))
    if "cloud" in args and cloud not in ("aws", "gcp"):
        problems.append(("cloud", f"{cloud!r} is not one of 'aws', 'gcp'"))
    if cloud == "aws" and "eks_cluster_name" not in args:
        problems.append(("eks_cluster_name", "required with cloud aws: the EKS cluster the add-ons and grants are for"))
    if cloud == "gcp" and not args.get("project"):
        problems.append(("project", "required with cloud gcp: the project of the cluster's Workload Identity pool"))
    if problems or config is None:
        raise ArgsError(where, problems)
    given = args.get("namespaces")
    return StoresSpec(
        cloud=cloud,
        cluster=str(args["cluster"]),
        region=str(args["region"]),
        project=args.get("project"),
        config=config,
        namespaces=tuple(given) if given is not None else store_namespaces(config),
        pod_identity_agent=bool(args.get("pod_identity_agent", True)),
        csi_driver=bool(args.get("csi_driver", True)),
    )
