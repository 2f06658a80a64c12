"""GKE's NVIDIA driver installer for node pools whose GPU driver GKE does not install (DRA pools: GKE documents
DRA only with `gpu-driver-version=disabled` and the driver installed by hand, GKE "Set up DRA").

The manifest follows GKE's documented manual install for Container-Optimized OS, the installer DaemonSet
GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer/cos/daemonset-preloaded.yaml
(068b15a9): the `cos-nvidia-installer:fixed` image GKE preloads on GPU nodes, in an init container, on
every node with a GKE accelerator and no `cloud.google.com/gke-gpu-driver-version` label (GKE sets that label
only where it installs the driver itself), so it runs on exactly the pools with installation disabled. Its
MIG-partitioning init container is left out: DRA pools take no GKE GPU sharing (`config.dra`).
"""

from __future__ import annotations

from typing import Any

from ..pins import IMAGES

NAME = "nvidia-driver-installer"
NAMESPACE = "kube-system"
"""kube-system admits `system-node-critical` pods without a quota."""
HOST_DIR = "/home/kubernetes/bin/nvidia"
"""Where the installer puts the driver on the host (the DRA driver's `nvidiaDriverRoot` on GKE)."""


def _env(pairs: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in pairs.items()]


def driver_installer() -> dict[str, Any]:
    """The installer DaemonSet (one per cluster, whichever pools disable GKE's installation)."""
    labels = {"k8s-app": NAME}
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
        "name": NAME,
        "image": IMAGES["cos-nvidia-installer"],
        "imagePullPolicy": "Never",  # preloaded by GKE on its GPU node images
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
        "volumeMounts": [{"name": k, "mountPath": v} for k, v in mounts.items()],
    }
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
                            {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
                        ]
                    }
                ]
            }
        }
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(labels)},
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
                    "volumes": [{"name": k, "hostPath": {"path": v}} for k, v in volumes.items()],
                    "initContainers": [installer],
                    "containers": [{"name": "pause", "image": IMAGES["gke-pause"]}],
                },
            },
        },
    }


__all__ = ["HOST_DIR", "NAME", "NAMESPACE", "driver_installer"]
