"""Autoscaling on GPU and serving signals: KEDA scales a Deployment on a GPU pool on a DCGM series or a serving
metric of the stack's Prometheus (`gpuplane:autoscaling`, docs/autoscaling.md)."""

from ..args.autoscaling import GpuAutoscalerArgs, KedaArgs, ScalingMetricArgs, ScalingSignal
from .component import GpuAutoscaler, Keda
from .stack import autoscaled

__all__ = ["GpuAutoscaler", "GpuAutoscalerArgs", "Keda", "KedaArgs", "ScalingMetricArgs", "ScalingSignal", "autoscaled"]
