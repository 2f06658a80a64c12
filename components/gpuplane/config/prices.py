"""A pool's machine and its price per node-hour, from the config and the catalog's price table
(`catalog.pricing`): what the capacity summary, the cost rules and `gpuplane rightsize` all read.

Pure functions over a validated config; no cloud layer needed, so monitoring (the cost rules) and the
stack summary share them.
"""

from __future__ import annotations

from ..catalog import lookup
from ..catalog.pricing import Rates, node_rate
from .capacity import capacity_order
from .model import GpuPool, StackConfig
from .network import efa_instances


def machine_of(cloud: str, pool: GpuPool) -> str:
    """The machine (GCP) or first instance type (AWS) a pool's nodes use: the configured one, or the
    catalog's smallest for its GPU count (on AWS EFA pools, the smallest that takes EFA)."""
    gpu = lookup(pool.gpu)
    if cloud == "gcp":
        if pool.machineType:
            return pool.machineType
        assert gpu is not None and gpu.gcp is not None, f"{pool.gpu} has no GCP offer (config validation missed it)"
        found = gpu.gcp.default_machine(pool.gpusPerNode)
    elif pool.instanceTypes:
        return pool.instanceTypes[0]
    elif pool.network == "efa":  # config validation checked there is one
        return efa_instances(pool.gpu, pool.gpusPerNode, None)[0]
    else:
        assert gpu is not None and gpu.aws is not None, f"{pool.gpu} has no AWS offer (config validation missed it)"
        found = gpu.aws.default_instance(pool.gpusPerNode)
    assert found is not None, f"no {pool.gpu} machine with {pool.gpusPerNode} GPUs"
    return found


def pool_rates(cfg: StackConfig) -> Rates:
    """The stack's rates: `gpuplane:prices` over the catalog's."""
    p = cfg.prices
    return Rates(p.onDemand, p.spotFraction, p.flexStartFraction)


def node_price(cfg: StackConfig, pool: GpuPool, machine: str | None = None, option: str | None = None) -> float | None:
    """Estimated USD/h of one node under `option` (`catalog.pricing.BASES`; unset: the pool's first
    capacity type beyond its reservation, or `reserved` for a reservation-only pool), or None when not known."""
    cloud = cfg.platform_spec.cloud
    machine = machine or machine_of(cloud, pool)
    if option is None:
        order = capacity_order(cfg.platform, pool)
        option = next((c for c in order if c != "reserved"), "reserved")
    gpu = lookup(pool.gpu)
    attached = gpu.gcp.accelerator if gpu is not None and gpu.gcp is not None else None
    block = pool.reservation is not None and pool.reservation.type == "capacity-block"
    return node_rate(pool_rates(cfg), cloud, machine, option, block, attached, pool.gpusPerNode)


def gpu_price(cfg: StackConfig, pool: GpuPool) -> float | None:
    """Estimated USD per GPU-hour on the pool (its node price over its GPUs per node), or None."""
    price = node_price(cfg, pool)
    return None if price is None else round(price / pool.gpusPerNode, 4)
