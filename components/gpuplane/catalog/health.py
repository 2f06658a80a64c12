"""GPU node health per platform: what detects a GPU fault, what repairs the node, and whether repair waits
for protected work; and the NCCL bus-bandwidth floors the post-deploy check holds multi-node pools to.
Data only; `gpuplane.health` renders it and the deploy simulator checks it.

Sources (checked 2026-12):
- EKS node monitoring agent: aws/eks-node-monitoring-agent @ 51af549 ("NMA"). Add-on `eks-node-monitoring-agent`
  (EKS user guide nodes/node-health-nma.adoc). charts/eks-node-monitoring-agent/values.yaml: the agent
  DaemonSet tolerates every taint; the `dcgm-server` DaemonSet (nv-hostengine, hostPort 5555) has no
  tolerations, runs only on the listed NVIDIA instance types and only on amd64. pkg/reasons/reasons.yaml:
  the `AcceleratedHardwareReady` condition, fatal reasons `NvidiaXID<n>Error`, `NvidiaDoubleBitError`,
  `NvidiaNVLinkError`, `NvidiaDeviceCountMismatch`, `DCGMError` (host engine unreachable: it fires on a GPU
  node without a dcgm-server pod, monitors/nvidia/dcgm/dcgm_reconcile.go).
- EKS managed node group repair: EKS user guide nodes/node-repair.adoc (AcceleratedHardwareReady: 10 min, then
  Replace or Reboot; other conditions 30 min; halts when a group of more than 5 nodes is over 20%
  unhealthy); botocore 1.44.8 eks `NodeRepairConfig`. Whether it drains within PodDisruptionBudgets is not
  documented (unverified); terraform-provider-aws internal/service/eks/node_group.go updates
  `node_repair_config` in place (UpdateNodegroupConfig).
- Karpenter 1.14 node repair: feature gate `nodeRepair` (alpha, off by default; charts/karpenter values.yaml
  `settings.featureGates`); aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/cloudprovider.go
  RepairPolicies (AcceleratedHardwareReady False for 10m; Ready, Kernel, Networking, Storage,
  ContainerRuntime 30m); kubernetes-sigs/karpenter pkg/controllers/node/health/controller.go: it deletes the
  NodeClaim with the termination timestamp set to now, bypassing drain, PodDisruptionBudgets and
  `karpenter.sh/do-not-disrupt`; at most 20% of a NodePool unhealthy.
- EKS Auto Mode: the monitoring agent and repair are built in and always on, with Karpenter's defaults
  (EKS user guide nodes/node-health.adoc, node-repair.adoc).
- GKE: node auto-repair (drains for up to 1 h within PodDisruptionBudgets, then re-creates the node; on by
  default, always on in Autopilot: kubernetes-engine/docs/how-to/node-auto-repair); GKE's
  nvidia-gpu-device-plugin can set an `XidCriticalError` node condition for XIDs 48, 63, 64, 79, 119, 120, 123
  and 140, only when started with `--enable-health-monitoring` (off by default), and its source says the
  condition "will not trigger auto-repair" (GoogleCloudPlatform/container-engine-accelerators 992db812
  pkg/gpu/nvidia/health_check/health_checker.go, cmd/nvidia_gpu/nvidia_gpu.go): gpuplane names no GKE condition.
  Faulty-host report: label a node
  `cloud.google.com/fault-behavior=XID|PERFORMANCE|SDC`; GKE evicts within PodDisruptionBudgets and reports
  the host (GKE 1.32.3-gke.1057001+, A3 High 8-GPU, A3 Mega, A3 Ultra, A4, A4X with reservation-bound
  capacity; ai-hypercomputer/docs/manage/manage-gke-clusters). Host maintenance: GKE labels GPU nodes
  `cloud.google.com/scheduled-maintenance-time=<epoch seconds>` before it (1.31.1-gke.2008000+;
  kubernetes-engine/docs/how-to/view-maintenance-events).
- NCCL floors: see `NCCL_FLOORS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class HealthPath:
    """How one platform finds and fixes a failed GPU node."""

    detection: str
    """What raises the GPU fault signal."""
    condition: str
    """The node condition GPU faults set that repair acts on (the alerts name it); empty: none."""
    repair: str
    """What replaces or reboots the node."""
    protected_work: str
    """Whether repair waits for PodDisruptionBudgets (and so for work Kueue admitted with a PDB)."""
    honours_pdb: bool | None
    """True / False, or None where the platform does not document it."""
    addon: str | None = None
    """The EKS add-on gpuplane installs for detection (None: the platform's own)."""
    repair_setting: str | None = None
    """The setting gpuplane turns on for repair (None: the platform's own, always on)."""


AWS_CONDITION = "AcceleratedHardwareReady"
AGENT_ADDON = "eks-node-monitoring-agent"

_GKE_DETECTION = (
    "GKE node auto-repair's NotReady, no-status and boot-disk checks; GPU faults (XID, row remap) only as "
    "gpuplane's alerts: GKE's device plugin may set an XidCriticalError node condition, which auto-repair does "
    "not act on"
)
_AGENT = "EKS node monitoring agent add-on (eks-node-monitoring-agent) with its dcgm-server on the GPU nodes"


def _agent(repair: str, protected_work: str, honours_pdb: bool | None, setting: str) -> HealthPath:
    """An EKS platform whose nodes gpuplane runs: the agent add-on detects, `setting` turns repair on."""
    return HealthPath(_AGENT, AWS_CONDITION, repair, protected_work, honours_pdb, AGENT_ADDON, setting)


def _gke(repair: str) -> HealthPath:
    """A GKE platform: auto-repair's own checks, no GPU condition, drains within PDBs."""
    return HealthPath(_GKE_DETECTION, "", repair, "drains within PodDisruptionBudgets for up to 1 h", True)


HEALTH: Mapping[str, HealthPath] = MappingProxyType(
    {
        "eks-managed": _agent(
            "managed node group node auto repair (nodeRepairConfig): Replace or Reboot after 10 min",
            "EKS does not document whether repair drains within PodDisruptionBudgets",
            None,
            "nodeRepairConfig",
        ),
        "eks-karpenter": _agent(
            "Karpenter node repair (feature gate nodeRepair): deletes the node after 10 min",
            "forceful: bypasses drain, PodDisruptionBudgets and karpenter.sh/do-not-disrupt",
            False,
            "settings.featureGates.nodeRepair",
        ),
        "eks-automode": HealthPath(
            detection="EKS Auto Mode's built-in node monitoring agent",
            condition=AWS_CONDITION,
            repair="EKS Auto Mode node auto repair (always on, Karpenter's defaults): Replace after 10 min",
            protected_work="forceful, as Karpenter's: bypasses PodDisruptionBudgets",
            honours_pdb=False,
        ),
        "gke-standard": _gke("GKE node auto-repair (management.autoRepair) drains and re-creates NotReady nodes"),
        "gke-nap": _gke("GKE node auto-repair on auto-provisioned pools (auto_provisioning_defaults.management)"),
        "gke-autopilot": _gke("GKE Autopilot node auto-repair (always on)"),
    }
)
"""Platform -> how GPU node faults are found and fixed there."""


NMA_DCGM_INSTANCE_TYPES: frozenset[str] = frozenset(
    """g3.16xlarge g3.4xlarge g3.8xlarge g3s.xlarge g4dn.12xlarge g4dn.16xlarge g4dn.2xlarge g4dn.4xlarge
    g4dn.8xlarge g4dn.metal g4dn.xlarge g5.12xlarge g5.16xlarge g5.24xlarge g5.2xlarge g5.48xlarge g5.4xlarge
    g5.8xlarge g5.xlarge g5g.16xlarge g5g.2xlarge g5g.4xlarge g5g.8xlarge g5g.metal g5g.xlarge g6.12xlarge
    g6.16xlarge g6.24xlarge g6.2xlarge g6.48xlarge g6.4xlarge g6.8xlarge g6.xlarge g6e.12xlarge g6e.16xlarge
    g6e.24xlarge g6e.2xlarge g6e.48xlarge g6e.4xlarge g6e.8xlarge g6e.xlarge g6f.2xlarge g6f.4xlarge g6f.large
    g6f.xlarge g7.12xlarge g7.24xlarge g7.2xlarge g7.48xlarge g7.4xlarge g7.8xlarge g7e.12xlarge g7e.24xlarge
    g7e.2xlarge g7e.48xlarge g7e.4xlarge g7e.8xlarge gr6.4xlarge gr6.8xlarge gr6f.4xlarge p2.16xlarge p2.8xlarge
    p2.xlarge p3.16xlarge p3.2xlarge p3.8xlarge p3dn.24xlarge p4d.24xlarge p4de.24xlarge p5.48xlarge p5.4xlarge
    p5e.48xlarge p5en.48xlarge p6-b200.48xlarge p6-b300.48xlarge p6e-gb200.36xlarge p6e-gb300.36xlarge""".split()
)
"""Instance types the add-on's dcgm-server DaemonSet selects (NMA values.yaml `dcgmAgent.affinity`); it also
requires `kubernetes.io/arch: amd64`, so Grace (arm64) nodes get no host engine."""

NMA_DCGM_ARCH = "amd64"


GKE_FAULTY_HOST_MACHINES: frozenset[str] = frozenset(
    {"a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal"}
)
"""GKE machines whose hosts can be reported faulty by node label (with reservation-bound capacity)."""
GKE_FAULT_LABEL = "cloud.google.com/fault-behavior"
GKE_MAINTENANCE_LABEL = "cloud.google.com/scheduled-maintenance-time"


@dataclass(frozen=True)
class NcclFloor:
    """The bus bandwidth a 2-node `all_reduce_perf` must reach at its largest message size."""

    gbps: float
    """GB/s (nccl-tests' `busbw` column)."""
    kind: str
    """`published` (a project's pass floor) or `derived` (from a published run, as the note says)."""
    source: str


_AICR = "NVIDIA/aicr"
NCCL_FLOORS: Mapping[str, NcclFloor] = MappingProxyType(
    {
        "p5.48xlarge": NcclFloor(
            300, "published", f"{_AICR} @ bc05c6be recipes/overlays/h100-eks-ubuntu-training.yaml (H100 on EKS)"
        ),
        "p5e.48xlarge": NcclFloor(300, "published", f"{_AICR} issue #2787 (H200 on EKS: 300 GB/s)"),
        "p5en.48xlarge": NcclFloor(300, "published", f"{_AICR} issue #2787 (H200 on EKS: 300 GB/s)"),
        "a3-megagpu-8g": NcclFloor(300, "published", f"{_AICR} PR #1565 (A3 Mega TCPXO, raised from 250)"),
        "p6-b200.48xlarge": NcclFloor(
            300, "derived", "the p5en floor: the same 8 x 400 Gbps EFA per node (no published B200 figure)"
        ),
        "a3-ultragpu-8g": NcclFloor(
            300,
            "derived",
            "8 x 400 Gbps RoCE per node as p5en (aicr's 300 GB/s H200 floor); Google's 2-node all_gather on A3 "
            "Ultra reaches 329 GB/s (GoogleCloudPlatform/cluster-toolkit examples/gke-consumption-options/"
            "dws-flex-start/README.md)",
        ),
        "a4-highgpu-8g": NcclFloor(
            300, "derived", "the A3 Ultra floor: the same 8 x 400 Gbps RoCE per node (Google publishes no A4 figure)"
        ),
        "p4d.24xlarge": NcclFloor(
            62,
            "derived",
            "80% of the 78.33 GB/s 2-node p4de run at 2 GiB (aws-samples/awsome-distributed-training @ 7217859f "
            "micro-benchmarks/nccl-tests/README.md); the same 4 x 100 Gbps EFA",
        ),
        "p4de.24xlarge": NcclFloor(
            62,
            "derived",
            "80% of the 78.33 GB/s 2-node p4de run at 2 GiB (aws-samples/awsome-distributed-training @ 7217859f "
            "micro-benchmarks/nccl-tests/README.md)",
        ),
    }
)
"""Instance / machine type -> the NCCL all-reduce bus bandwidth floor. Gate on the largest message's busbw,
not nccl-tests' `# Avg bus bandwidth` (an average over every size: 53 GB/s on a p5 run peaking at 438,
awsome-distributed-training README)."""


__all__ = [
    "AGENT_ADDON",
    "AWS_CONDITION",
    "GKE_FAULTY_HOST_MACHINES",
    "GKE_FAULT_LABEL",
    "GKE_MAINTENANCE_LABEL",
    "HEALTH",
    "NCCL_FLOORS",
    "NMA_DCGM_ARCH",
    "NMA_DCGM_INSTANCE_TYPES",
    "HealthPath",
    "NcclFloor",
]
