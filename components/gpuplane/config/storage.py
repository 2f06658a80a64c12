"""Model and dataset stores (`gpuplane:storage`): buckets the GPU pods read weights and datasets from, mounted through
the cloud's CSI driver, readable (and writable) by the service accounts named here only (docs/storage.md).

Checks of one store run in its models; the ones that read other sections (the platform, a fleet) run over the
validated config (`storage_problems`, from `config.load`), so each bad key is named at its own path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, ValidationInfo, field_validator, model_validator

from .base import DNS_LABEL, Model, own_namespace, repeated, shaped, suggest

if TYPE_CHECKING:
    from .model import StackConfig


BUCKET = shaped(
    r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$",
    "must be a bucket name: 3 to 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or "
    "digit (e.g. acme-llm-weights)",
)
"""A bucket name both clouds accept: S3's rules (docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html)
are the narrower ones; GCS also takes '_' and dotted names up to 222 characters (cloud.google.com/storage/docs/
buckets#naming), which S3 refuses."""
PREFIX = shaped(
    r"^([A-Za-z0-9!_.'()-]+/)+$",
    "must be a folder in the bucket: names of letters, digits and !_.'()- separated by '/', ending with '/' "
    "(e.g. models/qwen2.5/)",
)
"""A key prefix: Mountpoint mounts a prefix ending in '/' (awslabs/mountpoint-s3 doc/CONFIGURATION.md "Mounting a
bucket prefix"); S3's safe key characters (docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html) but `*`,
which IAM's `Resource` and `StringLike` would read as a wildcard (a prefix `a*/` would grant `ab/`)."""
AWS_REGION = shaped(r"^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]$", "must look like us-east-1")


class Access(Model):
    """A Kubernetes service account, by namespace: the pods that run as it may use the store."""

    namespace: str = Field(pattern=DNS_LABEL, min_length=1, max_length=63)
    """Its namespace (gpuplane creates it unless it is `default` or another section creates it)."""
    serviceAccount: str = Field(pattern=DNS_LABEL, min_length=1, max_length=63)
    """The service account (gpuplane creates it); pods name it as `serviceAccountName`."""

    @field_validator("namespace")
    @classmethod
    def _not_system(cls, v: str) -> str:
        return own_namespace(v, "give the store's readers a namespace of their own")

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.serviceAccount}"


class Store(Model):
    """One bucket of models or datasets, and who may read and write it."""

    name: str = Field(pattern=DNS_LABEL, min_length=1, max_length=30)
    """The store's name (a DNS label, at most 30 characters): its PersistentVolumeClaims are `<name>` (readers) and
    `<name>-rw` (writers) in each namespace that uses it."""
    bucket: str | None = Field(default=None, pattern=BUCKET)
    """An existing bucket, by name. Unset: gpuplane creates one (`<cluster>-<name>-` and a unique suffix), private,
    encrypted, not emptied on delete."""
    prefix: str | None = Field(default=None, pattern=PREFIX)
    """Only this folder of the bucket (e.g. `models/qwen2.5/`): pods see it as the volume's root, and on EKS the IAM
    grants cover only its keys."""
    region: str | None = Field(default=None, pattern=AWS_REGION)
    """EKS: the region of an existing `bucket` in another region than the cluster's (Mountpoint is told the region:
    the nodes' metadata is out of its reach, and it does not correct a region given wrongly). Unset: the cluster's."""
    readers: list[Access] = Field(default_factory=list)
    """Service accounts whose pods read the store (mounted read-only)."""
    writers: list[Access] = Field(default_factory=list)
    """Service accounts whose pods write it (a model download Job, a checkpointing trainer): mounted read-write."""

    @field_validator("region")
    @classmethod
    def _of_a_bucket(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and info.data.get("bucket") is None:
            raise ValueError("names an existing bucket's region: a bucket gpuplane creates is in the cluster's region")
        return v

    @model_validator(mode="after")
    def _someone(self) -> Store:
        if not self.readers and not self.writers:
            raise ValueError("name at least one reader or writer: a store nobody may use is only a cost")
        return self

    @field_validator("readers", "writers")
    @classmethod
    def _once(cls, v: list[Access], info: ValidationInfo) -> list[Access]:
        dupes = repeated([a.key for a in v])
        if dupes:
            raise ValueError(f"service accounts listed twice: {', '.join(dupes)}")
        readers = info.data.get("readers")
        if info.field_name == "writers" and isinstance(readers, list):
            both = sorted({a.key for a in v} & {a.key for a in readers if isinstance(a, Access)})
            if both:
                raise ValueError(
                    f"{', '.join(both)} also in readers: a writer reads too (its pods mount `<store>-rw`); "
                    "list it once, as a writer"
                )
        return v

    def users(self) -> list[tuple[Access, bool]]:
        """(service account, writes) for everyone who may use the store."""
        return [*((a, False) for a in self.readers), *((a, True) for a in self.writers)]

    def namespaces(self, writes: bool) -> list[str]:
        """The namespaces with a reader (or a writer), in order."""
        return list(dict.fromkeys(a.namespace for a, w in self.users() if w == writes))


class StorageConfig(Model):
    """Model and dataset stores: buckets mounted in GPU pods through the cloud's CSI driver."""

    stores: list[Store] = Field(min_length=1)
    """The stores."""

    @field_validator("stores")
    @classmethod
    def _unique(cls, v: list[Store]) -> list[Store]:
        problems = []
        dupes = repeated([s.name for s in v])
        if dupes:
            problems.append(f"store names must be unique (repeated: {', '.join(dupes)})")
        buckets = repeated([f"{s.bucket}/{s.prefix or ''}" for s in v if s.bucket is not None])
        if buckets:
            problems.append(f"two stores name the same bucket and prefix ({', '.join(buckets)}): make them one store")
        if problems:
            raise ValueError("; ".join(problems))
        return v

    def store(self, name: str) -> Store | None:
        return next((s for s in self.stores if s.name == name), None)


def storage_problems(cfg: StackConfig) -> list[tuple[tuple[str | int, ...], str]]:
    """Rules that read other sections: one cluster (a fleet's regions would each need their own buckets and
    grants)."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    if cfg.storage is not None and cfg.fleet is not None:
        out.append((("storage",), "not supported with a fleet yet: each region's cluster would need its own stores"))
    cloud = cfg.platform_spec.cloud
    for i, store in enumerate(cfg.storage.stores if cfg.storage is not None else []):
        if store.region is not None and cloud != "aws":
            out.append((("storage", "stores", i, "region"), "applies to EKS (S3 buckets): Cloud Storage needs none"))
        if cloud == "gcp" and store.bucket is None and "goog" in f"{cfg.cluster.name}-{store.name}":
            # Cloud Storage refuses names with "goog" (cloud.google.com/storage/docs/buckets#naming)
            out.append(
                (
                    ("storage", "stores", i, "name"),
                    f"the bucket gpuplane would create ({cfg.cluster.name}-{store.name}-...) holds 'goog', which "
                    "Cloud Storage refuses in bucket names: rename the store (or the cluster), or name a bucket",
                )
            )
    workloads = cfg.autoscaling.workloads if cfg.autoscaling is not None else []
    for i, w in enumerate(workloads):
        d = w.deployment
        if d is None or not d.stores:
            continue
        at: tuple[str | int, ...] = ("autoscaling", "workloads", i, "deployment")
        if d.serviceAccount is None:
            out.append(((*at, "serviceAccount"), "required with stores: the service account the stores name"))
        shared = same_bucket(cloud, cfg.storage, list(d.stores))
        if shared:
            out.append(((*at, "stores"), shared))
        for name in d.stores:
            found = cfg.storage.store(name) if cfg.storage is not None else None
            if found is None:
                known = [s.name for s in cfg.storage.stores] if cfg.storage is not None else []
                out.append(
                    (
                        (*at, "stores", name),
                        f"no store {name!r}{suggest(name, known)} in storage.stores ({', '.join(known) or 'none'})",
                    )
                )
            elif d.serviceAccount is not None and access_of(found, w.namespace, d.serviceAccount) is None:
                out.append(
                    (
                        (*at, "stores", name),
                        f"{w.namespace}/{d.serviceAccount} is neither a reader nor a writer of store {name}: add it "
                        "to the store's readers",
                    )
                )
    return out


def same_bucket(cloud: str, storage: StorageConfig | None, names: list[str]) -> str:
    """GKE: why one pod can't mount these stores (two on one bucket), or "". Kubelet mounts a volume handle once per
    pod and the Cloud Storage FUSE driver's handle is the bucket (gcs-fuse-csi-driver pkg/util/util.go: the pod would
    stay in ContainerCreating)."""
    if storage is None or cloud != "gcp":
        return ""
    buckets = [s.bucket for n in names if (s := storage.store(n)) is not None and s.bucket is not None]
    dupes = repeated(buckets)
    return f"stores on one bucket ({', '.join(dupes)}) can't be mounted in one pod on GKE: mount one" if dupes else ""


def access_of(store: Store, namespace: str, service_account: str) -> bool | None:
    """Whether `namespace/service_account` writes the store (False: reads it; None: may not use it)."""
    for a, writes in store.users():
        if a.namespace == namespace and a.serviceAccount == service_account:
            return writes
    return None
