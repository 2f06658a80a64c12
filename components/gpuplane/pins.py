"""Every Helm chart gpuplane installs, pinned in one place, from the official repositories."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class ChartPin:
    """A chart at an exact version in its official repository."""

    chart: str
    version: str
    repo: str
    app_version: str


CHARTS: Mapping[str, ChartPin] = MappingProxyType(
    {
        "dcgm-exporter": ChartPin(
            chart="dcgm-exporter",
            version="4.8.2",
            repo="https://nvidia.github.io/dcgm-exporter/helm-charts",
            app_version="4.8.2",
        ),
        "gpu-operator": ChartPin(
            chart="gpu-operator",
            version="v26.7.0",
            repo="https://helm.ngc.nvidia.com/nvidia",
            app_version="v26.7.0",
        ),
        "nvidia-device-plugin": ChartPin(
            chart="nvidia-device-plugin",
            version="0.20.0",
            repo="https://nvidia.github.io/k8s-device-plugin",
            app_version="0.20.0",
        ),
        "cluster-autoscaler": ChartPin(
            chart="cluster-autoscaler",
            version="9.59.0",
            repo="https://kubernetes.github.io/autoscaler",
            app_version="1.35.0",
        ),
        "karpenter": ChartPin(
            chart="karpenter",
            version="1.14.1",
            repo="oci://public.ecr.aws/karpenter",
            app_version="1.14.1",
        ),
        # Karpenter's CRDs, installed and upgraded on their own (the main chart's crds/ folder is
        # applied only on first install).
        "karpenter-crd": ChartPin(
            chart="karpenter-crd",
            version="1.14.1",
            repo="oci://public.ecr.aws/karpenter",
            app_version="1.14.1",
        ),
        "kube-prometheus-stack": ChartPin(
            chart="kube-prometheus-stack",
            version="88.5.3",
            repo="https://prometheus-community.github.io/helm-charts",
            app_version="v0.93.1",
        ),
        # The monitoring.coreos.com CRDs alone (ServiceMonitor, PrometheusRule, ...), for the
        # `prometheus-operator` integration on a cluster without them; the same operator version as
        # kube-prometheus-stack above (prometheus-community/helm-charts, charts/prometheus-operator-crds).
        "prometheus-operator-crds": ChartPin(
            chart="prometheus-operator-crds",
            version="31.0.1",
            repo="https://prometheus-community.github.io/helm-charts",
            app_version="v0.93.1",
        ),
        # Kueue: job queueing and gang admission (`gpuplane:queues`). Its CRDs are chart templates, so
        # they come with every install and upgrade (kubernetes-sigs/kueue charts/kueue/templates/crd).
        "kueue": ChartPin(
            chart="kueue",
            version="0.19.2",
            repo="oci://registry.k8s.io/kueue/charts",
            app_version="v0.19.2",
        ),
        # The EFA device plugin for `network: efa` pools (aws/eks-charts stable/aws-efa-k8s-device-plugin;
        # the EKS user guide installs it from this repository).
        "aws-efa-k8s-device-plugin": ChartPin(
            chart="aws-efa-k8s-device-plugin",
            version="v0.5.30",
            repo="https://aws.github.io/eks-charts",
            app_version="v0.5.20",
        ),
        # NVIDIA's DRA driver for GPUs: GPU claims (`gpuAllocation: dra`) and ComputeDomains (GB200 / GB300 NVL72)
        # (kubernetes-sigs/dra-driver-nvidia-gpu @ v0.4.1, deployments/helm/dra-driver-nvidia-gpu).
        "dra-driver-nvidia-gpu": ChartPin(
            chart="dra-driver-nvidia-gpu",
            version="0.4.1",
            repo="oci://registry.k8s.io/dra-driver-nvidia/charts",
            app_version="0.4.1",
        ),
        # KEDA: scales Deployments on Prometheus queries (`gpuplane:autoscaling`, docs/autoscaling.md). Its CRDs are
        # chart templates behind `crds.install` (kedacore/charts @ cbb9bb8 "prepare v2.20.2 release", keda/Chart.yaml
        # version and appVersion 2.20.2; keda/templates/crds).
        "keda": ChartPin(
            chart="keda",
            version="2.20.2",
            repo="https://kedacore.github.io/charts",
            app_version="2.20.2",
        ),
    }
)
"""Chart key -> pin. Tests compare these against the charts' published Chart.yaml when available."""


IMAGES: Mapping[str, str] = MappingProxyType(
    {
        # GoogleCloudPlatform/container-engine-accelerators (992db812) gpudirect-rdma/nccl-rdma-installer.yaml
        "nccl-plugin-gib": "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.1",
        # ... gpudirect-tcpxo/nccl-tcpxo-installer.yaml
        "nccl-plugin-tcpxo": "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",
        # the same manifest's pre-installation step uses an unpinned `ubuntu`; gpuplane pins its current LTS
        "ubuntu": "ubuntu:24.04",
        # container-engine-accelerators (992db812) nvidia-driver-installer/cos/daemonset-preloaded*.yaml: the COS
        # driver installer GKE preloads on its GPU node images (pulled never), for DRA pools
        "cos-nvidia-installer": "cos-nvidia-installer:fixed",
        # both manifests' main container (tag and digest as upstream)
        "gke-pause": "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830",
        # vLLM's OpenAI-compatible server (hub.docker.com/r/vllm/vllm-openai, release v0.12.0): the inference
        # Deployment a `gpuplane:autoscaling` workload runs when it names no image of its own
        "vllm-openai": "vllm/vllm-openai:v0.12.0",
    }
)
"""Container images gpuplane's own manifests run (not through a chart), pinned to a tag."""
