"""Model and dataset stores: buckets mounted in GPU pods through each cloud's CSI driver, readable (and writable) by
the service accounts named only (`gpuplane:storage`, docs/storage.md)."""

from ..args.storage import ModelStoresArgs, StoreAccessArgs, StoreArgs, StoreCloud
from .component import ModelStores
from .stack import mounts

__all__ = ["ModelStores", "ModelStoresArgs", "StoreAccessArgs", "StoreArgs", "StoreCloud", "mounts"]
