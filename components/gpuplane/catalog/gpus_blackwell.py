"""NVIDIA Blackwell GPUs of the catalog (B200, GB200, GB300, B300, RTX PRO 6000 Blackwell Server Edition), in
`args.inputs.GpuType` order; `gpus.GPUS` appends them. Checked 2026-12; each fact names its source.

Sources:
- Memory and MIG: NVIDIA MIG user guide, "Supported GPUs" (docs.nvidia.com/datacenter/tesla/mig-user-guide/
  supported-gpus.html: GB200 186GB, B200 180GB, RTX PRO 6000 Blackwell Server Edition 96GB with at most 4
  instances, GB200/B200 at most 7) and "Deployment Considerations" (r620: B300 from R580, GB300 listed for
  "DGX Station" only, from R595). The per-GPU profile lists ("Supported MIG Profiles") were read from NVIDIA's
  machine-readable copy of them, NVIDIA/mig-parted deployments/systemd/config-default.yaml (bd7160f4,
  2026-08): the `all-<profile>` configs and the balanced configs' device filters 0x2901 (B200), 0x2941
  (GB200), 0x3182 (B300), 0x31C2 (GB300), 0x2BB5 (RTX PRO 6000). Only the plain profiles are listed
  (no `+me`/`+gfx`/`-me` variants), as for the older GPUs.
- GCP: cluster-toolkit (1047080, 2026-06) examples/gke-a4 (a4-highgpu-8g, nvidia-b200, 8 GPUs),
  examples/gke-a4x (a4x-highgpu-4g, nvidia-gb200, 4 GPUs, reservation, workload policy
  accelerator_topology 1x72), examples/gke-a4x-max-bm (a4x-maxgpu-4g-metal, nvidia-gb300, 4 GPUs, bare metal,
  reservation), pkg/config/hardware.go (rtx-6000-1/2/4/8 -> g4-standard-48/96/192/384) and
  machine_mappings.json (g4-standard -> nvidia-rtx-pro-6000); AI Hypercomputer "Create A4X Max instances"
  (A4X Max is bare metal only, reservation-bound only).
- AWS: Karpenter v1.14 instance-types reference (aws/karpenter-provider-aws website/content/en/v1.14/
  reference/instance-types.md, 1d927085): `karpenter.k8s.aws/instance-gpu-name`, `-gpu-count` and
  `-gpu-memory` per type; botocore 1.44.8's EC2 `InstanceType` enum for which types exist.
- GKE MIG: GKE's MIG guide was not re-read for these GPUs, so `gke_mig_profiles` stays empty for all five
  (pools on GKE get no MIG). The ComputeClass CRD (GKE >= 1.35.2-gke.1485000, `gpuSharing.gpuPartitionSize`,
  seen through kcl-lang/modules PR #358) gives "1g.24gb", "2g.48gb", "4g.96gb" as example values for
  nvidia-rtx-pro-6000; that is a ComputeClass field, not the node pool's `gpu_partition_size`: not verified.
"""

from __future__ import annotations

from .gpu_types import AwsOffer, GcpOffer, Gpu
from .gpu_types import frozen as _frozen

_NVL72 = 72
"""GPUs in one GB200 / GB300 NVL72 NVLink domain: 18 compute trays of 4 GPUs (catalog.topology.NVLINK_DOMAINS)."""

BLACKWELL: tuple[Gpu, ...] = (
    Gpu(
        name="b200",
        # MIG guide: 180GB; Karpenter v1.14 p6-b200.48xlarge instance-gpu-memory 183359 MiB (179.06 GiB), which
        # the full-GPU profile 7g.180gb rounds up, as 7g.141gb does H200's 140.4 GiB.
        memory_gib=180,
        architecture="blackwell",
        mig_profiles=_frozen({"1g.23gb": 7, "1g.45gb": 4, "2g.45gb": 3, "3g.90gb": 2, "4g.90gb": 1, "7g.180gb": 1}),
        description="NVIDIA B200 (HGX B200, 8 per node): training and inference; GCP A4 (no on-demand), AWS P6-B200",
        gcp=GcpOffer(accelerator="nvidia-b200", machines=_frozen({"a4-highgpu-8g": 8})),
        aws=AwsOffer(instances=_frozen({"p6-b200.48xlarge": 8}), gpu_name="b200"),  # Karpenter v1.14: b200
        nvlink_domain_gpus=8,
    ),
    Gpu(
        name="gb200",
        # MIG guide: GB200 186GB (7 instances); MLCommons GB200-NVL72 systems report 186 GB HBM3e, 4 per node.
        memory_gib=186,
        architecture="blackwell",
        mig_profiles=_frozen({"1g.23gb": 7, "1g.47gb": 4, "2g.47gb": 3, "3g.93gb": 2, "4g.93gb": 1, "7g.186gb": 1}),
        description=(
            "NVIDIA GB200 NVL72 (Grace Arm hosts, 4 GPUs per node, 72 per NVLink domain): GCP A4X by reservation "
            "only; AWS P6e-GB200 only as UltraServer Capacity Blocks (u-p6e-gb200x36 / x72)"
        ),
        gcp=GcpOffer(accelerator="nvidia-gb200", machines=_frozen({"a4x-highgpu-4g": 4})),
        # gpu_name NOT VERIFIED: Karpenter's v1.14 reference has no p6e-gb200 (its generator reads one region's
        # DescribeInstanceTypes; P6e-GB200 lives in the Dallas Local Zone). "gb200" is Karpenter's rule
        # (lowerKabobCase of EC2's GpuInfo name, pkg/providers/instancetype/types.go) applied to "GB200".
        aws=AwsOffer(instances=_frozen({"p6e-gb200.36xlarge": 4}), gpu_name="gb200"),
        nvlink_domain_gpus=_NVL72,
    ),
    Gpu(
        name="gb300",
        # NVIDIA quotes up to 288GB HBM3e per Blackwell Ultra GPU; the full-GPU MIG profile of GB300
        # (mig-parted, device 0x31C2) is 7g.278gb. The MIG guide (r620) lists GB300 MIG for DGX Station only:
        # that mig-parted's GB300 profiles hold on GB300 NVL72 (A4X Max) is not verified.
        memory_gib=278,
        architecture="blackwell",
        mig_profiles=_frozen({"1g.35gb": 7, "1g.70gb": 4, "2g.70gb": 3, "3g.139gb": 2, "4g.139gb": 1, "7g.278gb": 1}),
        # AWS P6e-GB300 UltraServers exist (AWS PCS "Configure UltraServer instances" names p6e-gb300.36xlarge),
        # but botocore 1.44.8's EC2 InstanceType enum has no p6e-gb300 type, so gpuplane refuses them: aws=None.
        description=(
            "NVIDIA GB300 NVL72 (Grace Arm hosts, 4 GPUs per node, 72 per NVLink domain): GCP A4X Max bare metal "
            "by reservation only; not on AWS (botocore has no P6e-GB300 type)"
        ),
        # The -nolssd variant (cluster-toolkit asapd-lite-installer.yaml) is left out: not in GKE's examples.
        gcp=GcpOffer(accelerator="nvidia-gb300", machines=_frozen({"a4x-maxgpu-4g-metal": 4})),
        aws=None,
        nvlink_domain_gpus=_NVL72,
    ),
    Gpu(
        name="b300",
        # MIG profiles: mig-parted device 0x3182 (MIG guide r620: B300 MIG from driver R580); Karpenter v1.14
        # p6-b300.48xlarge instance-gpu-memory 275040 MiB (268.6 GiB), which 7g.269gb rounds up.
        memory_gib=269,
        architecture="blackwell",
        mig_profiles=_frozen({"1g.34gb": 7, "1g.67gb": 4, "2g.67gb": 3, "3g.135gb": 2, "4g.135gb": 1, "7g.269gb": 1}),
        description="NVIDIA B300 (HGX B300, Blackwell Ultra, 8 per node): AWS P6-B300 only",
        # No GCP machine type carries a plain B300 that gpuplane could verify (GCP sells Blackwell Ultra as
        # A4X Max, i.e. GB300; no `nvidia-b300` accelerator in GCP docs or cluster-toolkit, 2026-12): gcp=None.
        gcp=None,
        aws=AwsOffer(instances=_frozen({"p6-b300.48xlarge": 8}), gpu_name="b300"),  # Karpenter v1.14: b300
        nvlink_domain_gpus=8,
    ),
    Gpu(
        name="rtx-pro-6000",
        # Karpenter v1.14 g7e: instance-gpu-memory 98304 MiB = 96 GiB; MIG guide 96GB, at most 4 instances.
        memory_gib=96,
        architecture="blackwell",
        mig_profiles=_frozen({"1g.24gb": 4, "2g.48gb": 2, "4g.96gb": 1}),
        description="NVIDIA RTX PRO 6000 Blackwell Server Edition (PCIe, no NVLink): inference; GCP G4, AWS G7e",
        # The fractional (vGPU) shapes g4-standard-6/-12/-24 (1/8, 1/4, 1/2 GPU; cluster-toolkit
        # machine_mappings.json) carry no whole GPU: left out.
        gcp=GcpOffer(
            accelerator="nvidia-rtx-pro-6000",
            machines=_frozen({"g4-standard-48": 1, "g4-standard-96": 2, "g4-standard-192": 4, "g4-standard-384": 8}),
        ),
        # Karpenter v1.14: instance-gpu-name rtx-pro-server-6000 and instance-gpu-count per size. (g7.* in
        # botocore is a different GPU, rtx-pro-4500 per the same reference: not part of this entry.)
        aws=AwsOffer(
            instances=_frozen(
                {
                    "g7e.2xlarge": 1,
                    "g7e.4xlarge": 1,
                    "g7e.8xlarge": 1,
                    "g7e.12xlarge": 2,
                    "g7e.24xlarge": 4,
                    "g7e.48xlarge": 8,
                }
            ),
            gpu_name="rtx-pro-server-6000",
        ),
        nvlink_domain_gpus=None,
    ),
)
"""The Blackwell GPUs, in `GpuType` order."""

__all__ = ["BLACKWELL"]
