"""GKE's NVIDIA driver installer for node pools whose GPU driver GKE does not install (DRA pools: GKE documents
DRA only with `gpu-driver-version=disabled` and the driver installed by hand, GKE "Set up DRA").

The manifests follow GKE's documented manual install for Container-Optimized OS, the installer DaemonSets of
GoogleCloudPlatform/container-engine-accelerators (992db812) nvidia-driver-installer/cos/:
- `daemonset-preloaded.yaml`: the `cos-nvidia-installer:fixed` image GKE preloads on GPU nodes, in an init
  container that skips a node whose driver module is already loaded (so a rollout does not reinstall under
  running jobs), on every GPU node without `cloud.google.com/gke-gpu-driver-version` (GKE sets that label only
  where it installs the driver itself) and not confidential;
- `daemonset-preloaded-latest-a4x.yaml`: the same on A4X (GB200) machines only, installing the latest driver
  (`--version=latest`) and opening the driver directory (`chmod 755`).

gpuplane adds one thing to the first: `node.kubernetes.io/instance-type NotIn` the A4X machines, so the two
never both run on a node. Their MIG-partitioning init container is left out: DRA pools take no GKE GPU sharing
(`config.dra`). One DaemonSet per variant a DRA pool needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..pins import IMAGES

NAMESPACE = "kube-system"
"""kube-system admits `system-node-critical` pods without a quota."""
HOST_DIR = "/home/kubernetes/bin/nvidia"
"""Where the installer puts the driver on the host (the DRA driver's `nvidiaDriverRoot` on GKE)."""
A4X = ("a4x-highgpu-4g", "a4x-highgpu-4g-nolssd")


@dataclass(frozen=True)
class Variant:
    """One of GKE's installer DaemonSets: its name, the nodes it selects, and how it installs."""

    name: str
    nodes: tuple[Mapping[str, Any], ...]
    """Node-selector requirements beyond a GPU node without GKE's driver."""
    install: str
    """The install step, run only where no NVIDIA module is loaded yet."""


VARIANTS: Mapping[str, Variant] = MappingProxyType(
    {
        "default": Variant(
            "nvidia-driver-installer",
            (
                {"key": "cloud.google.com/gke-confidential-nodes-instance-type", "operator": "DoesNotExist"},
                {"key": "node.kubernetes.io/instance-type", "operator": "NotIn", "values": list(A4X)},
            ),
            "/cos-gpu-installer install || exit 1",
        ),
        "a4x": Variant(
            "nvidia-driver-installer-a4x",
            ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(A4X)},),
            f"/cos-gpu-installer install --version=latest || exit 1\nchmod 755 /root{HOST_DIR}",
        ),
    }
)
"""Installer variant -> its DaemonSet's facts (container-engine-accelerators @ 992db812)."""


def variant_of(machine: str) -> str:
    """The installer variant a GKE machine type needs."""
    return "a4x" if machine in A4X else "default"


def _env(pairs: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in pairs.items()]


SCRIPT = """echo "Checking for existing GPU driver modules"
if lsmod | grep nvidia; then
  echo "GPU driver is already installed, skipping installation"
  exit 0
else
  echo "No GPU driver module detected, installing now"
  {install}
fi
"""


def driver_installer(variant: str = "default") -> dict[str, Any]:
    """One installer DaemonSet (per cluster and variant, whichever pools disable GKE's installation)."""
    v = VARIANTS[variant]
    labels = {"k8s-app": v.name}
    volumes = {
        "dev": "/dev",
        "vulkan-icd-mount": f"{HOST_DIR}/vulkan/icd.d",
        "nvidia-install-dir-host": HOST_DIR,
        "root-mount": "/",
        "cos-tools": "/var/lib/cos-tools",
    }
    mounts = {
        "nvidia-install-dir-host": "/usr/local/nvidia",
        "vulkan-icd-mount": "/etc/vulkan/icd.d",
        "dev": "/dev",
        "root-mount": "/root",
        "cos-tools": "/build/cos-tools",
    }
    installer = {
        "name": "nvidia-driver-installer",
        "image": IMAGES["cos-nvidia-installer"],
        "imagePullPolicy": "Never",  # preloaded by GKE on its GPU node images
        "command": ["bash", "-c", SCRIPT.format(install=v.install.replace("\n", "\n  "))],
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},
        "env": _env(
            {
                "NVIDIA_INSTALL_DIR_HOST": HOST_DIR,
                "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
                "VULKAN_ICD_DIR_HOST": f"{HOST_DIR}/vulkan/icd.d",
                "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
                "ROOT_MOUNT_DIR": "/root",
                "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
                "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
            }
        ),
        "volumeMounts": [{"name": k, "mountPath": p} for k, p in mounts.items()],
    }
    required = [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
        *(dict(e) for e in v.nodes),
    ]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": required}]}
        }
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": v.name, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "automountServiceAccountToken": False,  # it never calls the API server
                    "affinity": affinity,
                    "tolerations": [{"operator": "Exists"}],
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": [{"name": k, "hostPath": {"path": p}} for k, p in volumes.items()],
                    "initContainers": [installer],
                    "containers": [{"name": "pause", "image": IMAGES["gke-pause"]}],
                },
            },
        },
    }


__all__ = ["A4X", "HOST_DIR", "NAMESPACE", "VARIANTS", "Variant", "driver_installer", "variant_of"]
