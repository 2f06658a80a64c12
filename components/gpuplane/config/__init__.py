"""Stack config: typed models and the loader that reports every bad key at once."""

from .gcp import GcpConfig
from .load import NAMESPACE, ConfigError, from_pulumi, key_path, namespace_of, parse_config, parse_flat
from .model import ClusterConfig, GpuPool, StackConfig, SystemPool, Taint
from .monitoring import MonitoringConfig

__all__ = [
    "NAMESPACE",
    "ClusterConfig",
    "ConfigError",
    "GcpConfig",
    "GpuPool",
    "MonitoringConfig",
    "StackConfig",
    "SystemPool",
    "Taint",
    "from_pulumi",
    "key_path",
    "namespace_of",
    "parse_config",
    "parse_flat",
]
