"""Data tables: the GPU catalog and the provider matrix."""

from .gpus import ALIASES, GPUS, AwsOffer, GcpOffer, Gpu, gpus_on, known_gpus, lookup
from .images import DEFAULT_GPU_IMAGE, NODE_IMAGES, NodeImage, operator_components
from .platforms import PLATFORMS, Platform

__all__ = [
    "DEFAULT_GPU_IMAGE",
    "NODE_IMAGES",
    "NodeImage",
    "operator_components",
    "ALIASES",
    "GPUS",
    "PLATFORMS",
    "AwsOffer",
    "GcpOffer",
    "Gpu",
    "Platform",
    "gpus_on",
    "known_gpus",
    "lookup",
]
