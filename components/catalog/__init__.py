"""Data tables: the GPU catalog and the provider matrix."""

from .gpus import ALIASES, GPUS, AwsOffer, GcpOffer, Gpu, gpus_on, known_gpus, lookup
from .platforms import PLATFORMS, Platform

__all__ = [
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
