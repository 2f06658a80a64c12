"""Kueue job queues: whole jobs admitted within the GPU pools' quota (`gpuplane:queues`, docs/queues.md), and
MultiKueue across a fleet (`MultiKueueManager`)."""

from ..args.kueue import KueueQueuesArgs, KueueTeamArgs, KueueTopologyArgs
from ..args.multikueue import MultiKueueManagerArgs
from .component import KueueQueues
from .multikueue_component import MultiKueueManager

__all__ = [
    "KueueQueues",
    "KueueQueuesArgs",
    "KueueTeamArgs",
    "KueueTopologyArgs",
    "MultiKueueManager",
    "MultiKueueManagerArgs",
]
