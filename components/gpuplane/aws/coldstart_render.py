"""Pure renders of a GPU pool's cold-start settings on EKS (`config.coldstart.ColdStartPlan`): the user data that
turns on SOCI parallel pull, and the EBS fields of the volume that holds container images (gp3 throughput and
IOPS, the Bottlerocket image-cache snapshot). Launch templates (managed node groups) and EC2NodeClasses
(Karpenter) spell the same fields their own way.

Sources: awslabs/amazon-eks-ami nodeadm/doc/examples.md (NodeConfig `featureGates.FastImagePull`, in a MIME part
of type `application/node.eks.aws` that EKS and Karpenter merge with their own); Bottlerocket 1.44.x settings
(https://bottlerocket.dev/en/os/1.44.x/api/settings/container-runtime-plugins, container-runtime); the
soci-snapshotter tuning for ECR from aws-samples/karpenter-blueprints blueprints/soci-snapshotter; the image cache
from aws-samples/bottlerocket-images-cache.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ..catalog.images import NodeImage
from ..config.coldstart import ColdStartPlan

MIME_BOUNDARY = "//"


def _nodeadm() -> str:
    """A MIME multi-part document with one NodeConfig part: FastImagePull (SOCI parallel pull)."""
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n'
        "\n"
        f"--{MIME_BOUNDARY}\n"
        "Content-Type: application/node.eks.aws\n"
        "\n"
        "apiVersion: node.eks.aws/v1alpha1\n"
        "kind: NodeConfig\n"
        "spec:\n"
        "  featureGates:\n"
        "    FastImagePull: true\n"
        "\n"
        f"--{MIME_BOUNDARY}--\n"
    )


def _bottlerocket() -> str:
    """Bottlerocket TOML settings: the soci snapshotter in parallel-pull-unpack mode, tuned for ECR as
    karpenter-blueprints does (10 downloads and unpacks per image, 16 MB chunks, unpacked layers discarded)."""
    return (
        "[settings.container-runtime]\n"
        'snapshotter = "soci"\n'
        "\n"
        "[settings.container-runtime-plugins.soci-snapshotter]\n"
        'pull-mode = "parallel-pull-unpack"\n'
        "\n"
        "[settings.container-runtime-plugins.soci-snapshotter.parallel-pull-unpack]\n"
        "max-concurrent-downloads-per-image = 10\n"
        'concurrent-download-chunk-size = "16mb"\n'
        "max-concurrent-unpacks-per-image = 10\n"
        "discard-unpacked-layers = true\n"
    )


USER_DATA: Mapping[str, Callable[[], str]] = MappingProxyType({"nodeadm": _nodeadm, "bottlerocket": _bottlerocket})
"""`NodeImage.parallel_pull` -> the user data that turns it on."""


def user_data(cold: ColdStartPlan) -> str | None:
    """The pool's user data as text (an EC2NodeClass's `userData`), or None when it needs none."""
    return USER_DATA[cold.parallel_pull]() if cold.parallel_pull else None


def launch_template_user_data(cold: ColdStartPlan) -> dict[str, str]:
    """`user_data` of a launch template: base64, as EC2 (and pulumi_aws `LaunchTemplate.user_data`) takes it."""
    text = user_data(cold)
    return {"user_data": base64.b64encode(text.encode()).decode()} if text else {}


def data_volume(image: NodeImage, device: str, cold: ColdStartPlan) -> dict[str, Any]:
    """Cold-start fields of one of the node's volumes, in neutral names (`throughput`, `iops`, `snapshot`):
    throughput and IOPS on the volume containerd writes images to, the snapshot on the image cache's device."""
    out: dict[str, Any] = {}
    if device == image.data_device:
        out.update({k: v for k, v in (("throughput", cold.throughput), ("iops", cold.iops)) if v is not None})
    if cold.snapshot and device == image.image_cache_device:
        out["snapshot"] = cold.snapshot
    return out


def launch_template_ebs(image: NodeImage, device: str, gb: int, cold: ColdStartPlan) -> dict[str, Any]:
    """A launch template's `ebs` block: encrypted gp3, except that a volume made from a snapshot takes the
    snapshot's encryption (`encrypted` can't be given then: botocore LaunchTemplateEbsBlockDeviceRequest.Encrypted),
    so docs/cold-start.md asks for an encrypted snapshot."""
    extra = data_volume(image, device, cold)
    names = {"throughput": "throughput", "iops": "iops", "snapshot": "snapshot_id"}
    return {
        "volume_size": gb,
        "volume_type": "gp3",
        **({} if "snapshot" in extra else {"encrypted": "true"}),
        "delete_on_termination": "true",
        **{names[k]: v for k, v in extra.items()},
    }


def node_class_ebs(image: NodeImage, device: str, gb: int, cold: ColdStartPlan) -> dict[str, Any]:
    """An EC2NodeClass `blockDeviceMappings[].ebs`: as `launch_template_ebs`, in the CRD's names (its `encrypted`
    says the same: "If you are creating a volume from a snapshot, you can't specify an encryption value")."""
    extra = data_volume(image, device, cold)
    names = {"throughput": "throughput", "iops": "iops", "snapshot": "snapshotID"}
    return {
        "volumeSize": f"{gb}Gi",
        "volumeType": "gp3",
        **({} if "snapshot" in extra else {"encrypted": True}),
        "deleteOnTermination": True,
        **{names[k]: v for k, v in extra.items()},
    }


__all__ = [
    "USER_DATA",
    "data_volume",
    "launch_template_ebs",
    "launch_template_user_data",
    "node_class_ebs",
    "user_data",
]
