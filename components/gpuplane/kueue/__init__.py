"""Kueue job queues: whole jobs admitted within the GPU pools' quota (`gpuplane:queues`, docs/queues.md)."""

from ..args.kueue import KueueQueuesArgs, KueueTeamArgs, KueueTopologyArgs
from .component import KueueQueues

__all__ = ["KueueQueues", "KueueQueuesArgs", "KueueTeamArgs", "KueueTopologyArgs"]
