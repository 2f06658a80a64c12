"""The capacity, reservation, zone and region rules of the stack config against facts from the clouds'
documentation: each case writes out by hand the one problem (key path and whole message) a bad config must
get, or that a config right at a limit parses, with the source of the fact it rests on.

Nothing here reads the catalog's tables or asks the code under test for an expected value.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpuplane.config import ConfigError, parse_config
from gpuplane.config.capacity import eks_capacity_type, uses_compute_class

GKE: dict[str, Any] = {
    "platform": "gke-standard",
    "cluster": {"name": "ml"},
    "gcp": {"project": "acme-ml-prod", "region": "us-central1", "zones": ["us-central1-a"]},
    "gpuPools": [{"name": "inference", "gpu": "l4", "maxNodes": 4}],
}
EKS: dict[str, Any] = {
    "platform": "eks-managed",
    "cluster": {"name": "ml"},
    "aws": {"region": "us-east-1"},
    "gpuPools": [{"name": "inference", "gpu": "a10g", "maxNodes": 4}],
}
CR = "cr-0123456789abcdef0"
"""A capacity reservation ID in EC2's form (`cr-` and 17 hex digits: EC2 API CapacityReservation)."""
POOL = "gpuplane:gpuPools[0]"


def stack(base: dict[str, Any], platform: str | None = None, top: dict[str, Any] | None = None, **pool: Any) -> Any:
    """A deep copy of `base` on `platform`, with top-level sections replaced and the first pool's keys set."""
    raw = copy.deepcopy(base)
    if platform is not None:
        raw["platform"] = platform
    raw.update(copy.deepcopy(top or {}))
    raw["gpuPools"][0].update(pool)
    return raw


def problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Every (key path, reason) the one ConfigError lists, in order."""
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    return info.value.problems


UNLISTED_GCP = {"gcp": {"project": "acme-ml-prod", "region": "us-central9"}, "allowUnlistedRegions": True}
"""A GCP region no table lists (a new one), let through by the opt-in, with no `gcp.zones`: gpuplane then knows
no zone of it. GKE's default node locations are three zones (GKE docs, "About cluster configuration choices"),
so the system pool needs maxNodes >= 3."""
UNLISTED_CLUSTER = {"name": "ml", "systemPool": {"maxNodes": 3}}


# --- refused: exactly one problem, on exactly this key, saying exactly this ----------------------------------------

REFUSED: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    # A preference order names each capacity type once (GKE ComputeClass `priorities` are tried in turn; a
    # repeat adds nothing).
    (
        "repeated-type",
        stack(GKE, capacity=["spot", "spot"]),
        [(f"{POOL}.capacity", "capacity types must not repeat")],
    ),
    # flex-start and queued provisioning are GKE Dynamic Workload Scheduler modes (GKE docs, "About GPU
    # obtainability with flex-start" / "queued provisioning"); an EKS Auto Mode NodePool's
    # karpenter.sh/capacity-type takes spot and on-demand (EKS user guide, "Create a Node Pool for EKS Auto Mode").
    (
        "automode-gke-only-types",
        stack(EKS, "eks-automode", capacity=["flex-start", "queued"]),
        [(f"{POOL}.capacity", "eks-automode has no flex-start, queued capacity (it offers: spot, on-demand)")],
    ),
    # A managed node group has one capacityType (EKS API CreateNodegroup: ON_DEMAND | SPOT | CAPACITY_BLOCK).
    (
        "managed-group-one-type",
        stack(EKS, capacity=["spot", "on-demand"]),
        [
            (
                f"{POOL}.capacity",
                "a managed node group's capacity type is one type, so a pool takes one capacity type here (use one "
                "pool per type, or an auto-provisioning platform for a fallback order)",
            )
        ],
    ),
    # Karpenter launches reserved first, then spot, then on-demand whatever the order of the NodePool's
    # karpenter.sh/capacity-type values (karpenter.sh docs, NodePools, "capacity type"): the order it follows is
    # the allowed types in that order.
    (
        "karpenter-fixed-order",
        stack(EKS, "eks-karpenter", capacity=["on-demand", "spot"]),
        [
            (
                f"{POOL}.capacity",
                "Karpenter NodePool capacity types always prefer reserved > spot > on-demand; write ['spot', "
                "'on-demand']",
            )
        ],
    ),
    # A Capacity Block is a capacity reservation (EC2 user guide, "Capacity Blocks for ML"); `spot: true` on
    # Karpenter means spot with on-demand fallback (docs/scarce-gpus.md), on a managed node group spot alone.
    (
        "capacity-block-on-karpenter-spot",
        stack(EKS, "eks-karpenter", spot=True, reservation={"type": "capacity-block", "ids": [CR]}),
        [
            (
                f"{POOL}.reservation",
                "Capacity Blocks are reserved capacity, not capacity ['spot', 'on-demand']: add reserved to capacity",
            )
        ],
    ),
    (
        "capacity-block-on-demand",
        stack(EKS, reservation={"type": "capacity-block", "ids": [CR]}),
        [
            (
                f"{POOL}.reservation",
                "Capacity Blocks are reserved capacity, not capacity ['on-demand']: add reserved to capacity",
            )
        ],
    ),
    (
        "capacity-block-spot-only",
        stack(EKS, spot=True, reservation={"type": "capacity-block", "ids": [CR]}),
        [
            (
                f"{POOL}.reservation",
                "Capacity Blocks are reserved capacity, not a spot-only class: add reserved to capacity",
            )
        ],
    ),
    # max_run_duration is a setting of flex-start (and queued) nodes only (GKE docs, "Run a small batch workload
    # with flex-start provisioning mode": `--max-run-duration`).
    (
        "run-duration-without-dws",
        stack(GKE, maxRunDuration="1h"),
        [(f"{POOL}.maxRunDuration", "applies to flex-start and queued capacity only")],
    ),
    # Karpenter picks reservations through EC2NodeClass capacityReservationSelectorTerms, by `id` or by `tags`
    # (karpenter.k8s.aws_ec2nodeclasses CRD); a term with `id` may have no other field (its CEL rule).
    (
        "karpenter-reserved-without-reservation",
        stack(EKS, "eks-karpenter", capacity=["reserved"]),
        [(f"{POOL}.capacity", "reserved capacity needs a reservation (reservation.ids or .tags)")],
    ),
    (
        "karpenter-reservation-selects-nothing",
        stack(EKS, "eks-karpenter", capacity=["reserved"], reservation={"nodes": 1}),
        [(f"{POOL}.reservation", "Karpenter selects reservations by ids or tags: set one of them")],
    ),
    (
        "karpenter-ids-and-tags",
        stack(EKS, "eks-karpenter", capacity=["reserved"], reservation={"ids": [CR], "tags": {"team": "ml"}}),
        [(f"{POOL}.reservation.tags", "select by ids or by tags, not both")],
    ),
    # A launch template's CapacityReservationTarget names one CapacityReservationId (EC2 API
    # LaunchTemplateCapacityReservationSpecificationRequest).
    (
        "managed-two-reservations",
        stack(EKS, capacity=["reserved"], zones=["us-east-1a"], reservation={"ids": [CR, "cr-0123456789abcdef1"]}),
        [(f"{POOL}.reservation.ids", "a launch template targets exactly one capacity reservation")],
    ),
    (
        "managed-no-reservation-id",
        stack(EKS, capacity=["reserved"], zones=["us-east-1a"], reservation={"zone": "us-east-1a"}),
        [(f"{POOL}.reservation.ids", "a launch template targets exactly one capacity reservation")],
    ),
    # A Capacity Block and an ODCR each live in one Availability Zone (EC2 user guide, "Capacity Blocks for ML",
    # "On-Demand Capacity Reservations"). p5.48xlarge carries 8 H100 (EC2 accelerated computing instances).
    (
        "managed-capacity-block-without-zone",
        stack(
            EKS,
            gpu="h100",
            gpusPerNode=8,
            instanceTypes=["p5.48xlarge"],
            capacity=["reserved"],
            reservation={"type": "capacity-block", "ids": [CR]},
        ),
        [(f"{POOL}.reservation.zone", "a Capacity Block lives in one Availability Zone: name it")],
    ),
    (
        "managed-odcr-without-zone",
        stack(EKS, capacity=["reserved"], reservation={"ids": [CR]}),
        [
            (
                f"{POOL}.reservation.zone",
                "a capacity reservation lives in one Availability Zone: name it, so the group's subnets are there",
            )
        ],
    ),
    # EKS user guide, capacity-blocks-mng: such a group is updated only at desired size 0 and scaled to 0 before
    # the block ends.
    (
        "managed-capacity-block-floor",
        stack(
            EKS,
            gpu="h100",
            gpusPerNode=8,
            instanceTypes=["p5.48xlarge"],
            minNodes=1,
            capacity=["reserved"],
            reservation={"type": "capacity-block", "ids": [CR], "zone": "us-east-1a"},
        ),
        [
            (
                f"{POOL}.minNodes",
                "a Capacity Block group must be able to sit at 0 nodes (AWS updates it only at desired size 0, and "
                "scales it to 0 before the block ends): minNodes must be 0",
            )
        ],
    ),
    # A node pool's reservation affinity SPECIFIC_RESERVATION has no fallback; only ANY_RESERVATION falls back to
    # on-demand (GKE API NodeConfig.reservationAffinity, "Consuming reserved zonal resources").
    (
        "gke-named-reservation-fallback",
        stack(GKE, capacity=["reserved", "on-demand"], reservation={"names": ["l4-res"]}),
        [(f"{POOL}.reservation.names", "GKE has no fallback from specific reservations: drop on-demand or names")],
    ),
    # g5.xlarge, g5.2xlarge and g5.4xlarge each carry one A10G (EC2 G5 instances).
    (
        "reservation-of-another-instance-type",
        stack(
            EKS,
            "eks-karpenter",
            instanceTypes=["g5.xlarge", "g5.2xlarge"],
            capacity=["reserved"],
            reservation={"ids": [CR], "machineType": "g5.4xlarge"},
        ),
        [
            (
                f"{POOL}.reservation.machineType",
                "the reservation holds g5.4xlarge, but the pool runs g5.xlarge, g5.2xlarge",
            )
        ],
    ),
    # GCP G2: g2-standard-4 and g2-standard-8 carry 1 L4, g2-standard-24 carries 2 (GPU machine types, G2); a
    # pool without machineType runs the smallest machine with its GPU count.
    (
        "reservation-of-another-gcp-machine",
        stack(GKE, capacity=["reserved"], reservation={"names": ["l4-res"], "machineType": "g2-standard-8"}),
        [(f"{POOL}.reservation.machineType", "the reservation holds g2-standard-8, but the pool runs g2-standard-4")],
    ),
    (
        "reservation-of-another-gcp-machine-two-gpus",
        stack(
            GKE, gpusPerNode=2, capacity=["reserved"], reservation={"names": ["l4-res"], "machineType": "g2-standard-8"}
        ),
        [(f"{POOL}.reservation.machineType", "the reservation holds g2-standard-8, but the pool runs g2-standard-24")],
    ),
    # Reserved zonal resources are consumed only by VMs in the same zone (Compute Engine, "Reservations of
    # Compute Engine zonal resources"); the pool's nodes run in the cluster's zones.
    (
        "gcp-reservation-outside-cluster-zones",
        stack(GKE, capacity=["reserved"], reservation={"names": ["l4-res"], "zone": "us-central1-b"}),
        [
            (
                f"{POOL}.reservation.zone",
                "the reservation is in us-central1-b, but the pool's nodes run in us-central1-a",
            )
        ],
    ),
    # Without gcp.zones the pool's nodes run where its GPU is: L4 is in us-central1-a, -b and -c, not -f
    # (Compute Engine, "GPU regions and zones availability").
    (
        "gcp-reservation-where-the-gpu-is-not",
        stack(
            GKE,
            top={"gcp": {"project": "acme-ml-prod", "region": "us-central1"}, "cluster": UNLISTED_CLUSTER},
            capacity=["reserved"],
            reservation={"names": ["l4-res"], "zone": "us-central1-f"},
        ),
        [
            (
                f"{POOL}.reservation.zone",
                "the reservation is in us-central1-f, but the pool's nodes run in us-central1-a, us-central1-b, "
                "us-central1-c",
            )
        ],
    ),
    # A region gpuplane does not know: the zones are the configured ones, and a zone belongs to the region whose
    # name prefixes it (`<region>-<letter>`, Compute Engine "Regions and zones").
    (
        "unlisted-region-reservation-outside-zones",
        stack(
            GKE,
            top={**UNLISTED_GCP, "gcp": {**UNLISTED_GCP["gcp"], "zones": ["us-central9-a"]}},
            capacity=["reserved"],
            reservation={"names": ["l4-res"], "zone": "us-central9-b"},
        ),
        [
            (
                f"{POOL}.reservation.zone",
                "the reservation is in us-central9-b, but the pool's nodes run in us-central9-a",
            )
        ],
    ),
    (
        "unlisted-region-reservation-in-another-region",
        stack(
            GKE,
            top={**UNLISTED_GCP, "cluster": UNLISTED_CLUSTER},
            capacity=["reserved"],
            reservation={"names": ["l4-res"], "zone": "us-central1-a"},
        ),
        [(f"{POOL}.reservation.zone", "us-central1-a is not a zone of region us-central9")],
    ),
    # A pool zone outside the region is that key's one problem; a reservation in that same zone is no second one.
    (
        "pool-zone-outside-region-reported-once",
        stack(
            GKE, zones=["us-east1-b"], capacity=["reserved"], reservation={"names": ["l4-res"], "zone": "us-east1-b"}
        ),
        [(f"{POOL}.zones", "us-east1-b is not in region us-central1")],
    ),
    # us-west-2-lax-1a is the Los Angeles Local Zone of us-west-2; us-east-1-bos-1a the Boston Local Zone of
    # us-east-1 (AWS Local Zones locations).
    (
        "aws-local-zone-of-another-region",
        stack(EKS, capacity=["reserved"], reservation={"ids": [CR], "zone": "us-west-2-lax-1a"}),
        [(f"{POOL}.reservation.zone", "us-west-2-lax-1a is not an Availability Zone of region us-east-1")],
    ),
    (
        "aws-availability-zone-of-another-region",
        stack(EKS, capacity=["reserved"], reservation={"ids": [CR], "zone": "us-west-2a"}),
        [(f"{POOL}.reservation.zone", "us-west-2a is not an Availability Zone of region us-east-1")],
    ),
    (
        "karpenter-local-zone",
        stack(EKS, "eks-karpenter", capacity=["reserved"], reservation={"ids": [CR], "zone": "us-east-1-bos-1a"}),
        [
            (
                f"{POOL}.reservation.zone",
                "us-east-1-bos-1a is a Local Zone: gpuplane places only eks-managed node groups there (through "
                "aws.nodeSubnetIds); Karpenter and Auto Mode launch into the cluster's subnets",
            )
        ],
    ),
    # EKS control planes need subnets in at least two Availability Zones, not Local Zones (EKS user guide,
    # "Launch low-latency EKS clusters with AWS Local Zones").
    (
        "managed-local-zone-without-node-subnets",
        stack(EKS, capacity=["reserved"], reservation={"ids": [CR], "zone": "us-east-1-bos-1a"}),
        [
            (
                f"{POOL}.reservation.zone",
                "us-east-1-bos-1a is a Local Zone: the EKS control plane and the system pool can't use subnets there, "
                "and the VPC gpuplane creates has none; use your VPC (aws.vpcId, aws.privateSubnetIds) and name its "
                "private subnet in that zone in aws.nodeSubnetIds",
            )
        ],
    ),
    (
        "aws-reservation-outside-pool-zones",
        stack(
            EKS,
            capacity=["reserved"],
            zones=["us-east-1a", "us-east-1b"],
            reservation={"ids": [CR], "zone": "us-east-1c"},
        ),
        [
            (
                f"{POOL}.reservation.zone",
                "the reservation is in us-east-1c, but the pool's nodes run in us-east-1a, us-east-1b",
            )
        ],
    ),
    # Capacity Blocks for ML exist for P4d/P4de, P5/P5e/P5en, P6 and Trn instances, not G5 (EC2 user guide,
    # "Capacity Blocks for ML", supported instance types).
    (
        "no-capacity-blocks-of-g5",
        stack(
            EKS,
            "eks-karpenter",
            instanceTypes=["g5.xlarge", "g5.2xlarge"],
            capacity=["reserved"],
            reservation={"type": "capacity-block", "ids": [CR]},
        ),
        [(f"{POOL}.reservation.type", "EC2 sells no Capacity Blocks of g5.xlarge, g5.2xlarge")],
    ),
    # Queued provisioning reads maxRunDurationSeconds from Kueue's one ProvisioningRequestConfig (GKE docs,
    # "Deploy GPUs for batch and AI workloads with ProvisioningRequest").
    (
        "queued-pools-disagree-on-run-duration",
        stack(
            GKE,
            top={
                "gpuPools": [
                    {"name": "a", "gpu": "l4", "maxNodes": 4, "capacity": ["queued"]},
                    {"name": "b", "gpu": "l4", "maxNodes": 4, "capacity": ["queued"], "maxRunDuration": "24h"},
                ]
            },
        ),
        [
            (
                "gpuplane:gpuPools[1].maxRunDuration",
                "queued pools share one ProvisioningRequestConfig: use a's maxRunDuration (unset) on every queued pool",
            )
        ],
    ),
    # AWS China regions are the aws-cn partition, whose service principals end in amazonaws.com.cn (AWS General
    # Reference, "AWS China Regions"; IAM user guide, ARNs and partitions).
    (
        "aws-china-region",
        stack(EKS, top={"aws": {"region": "cn-north-1"}}),
        [
            (
                "gpuplane:aws.region",
                "'cn-north-1' is in the aws-cn partition, whose service principals (*.amazonaws.com.cn) gpuplane's "
                "IAM documents do not use: not supported",
            )
        ],
    ),
    # A100 40GB splits into seven 1g.5gb MIG instances (NVIDIA MIG user guide, supported profiles);
    # p4d.24xlarge carries 8 A100 40GB (EC2 P4 instances): one node is 56 partitions, each its own extended
    # resource nvidia.com/mig-1g.5gb under the mixed strategy (NVIDIA k8s-device-plugin, MIG strategies).
    (
        "aws-mig-quota-over-ceiling",
        stack(
            EKS,
            gpu="a100-40gb",
            gpusPerNode=8,
            maxNodes=1,
            sharing={"strategy": "mig", "migProfile": "1g.5gb"},
            top={"queues": {"teams": [{"name": "training", "quota": {"inference": 100}}]}},
        ),
        [
            (
                "gpuplane:queues",
                "the teams' quotas exceed the pools' ceilings (maxNodes x per-node units): inference: 100 > 56 "
                "nvidia.com/mig-1g.5gb; lower them, or set overcommit: true to accept queued jobs that may never fit",
            )
        ],
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [(raw, want) for _, raw, want in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_refused_with_exactly_this_problem(raw: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert problems(raw) == expected


def test_reserved_managed_group_needs_a_reservation() -> None:
    """A managed node group reaches a reservation only through a launch template that targets it (EC2 API
    CapacityReservationTarget); `reserved` alone targets nothing."""
    found = problems(stack(EKS, capacity=["reserved"]))
    assert [path for path, _ in found] == [f"{POOL}.capacity"]
    # ... and only by id: a managed node group's launch template names one reservation, never tags
    # (`reservation.tags` is refused on eks-managed), so the hint names `reservation.ids` alone.
    assert found[0][1] == "reserved capacity needs a reservation (reservation.ids)"


# P6e-GB200 is sold only as UltraServer Capacity Blocks (EC2 user guide, "Capacity Blocks for ML": u-p6e-gb200x36
# / x72; AWS SDK EC2 changelog 2025-07-09); p6e-gb200.36xlarge carries 4 GB200 GPUs and runs Arm (Grace) AMIs.
# (The pool has another problem on eks-karpenter, its GPU key; only the capacity keys are asserted.)
GB200_KARPENTER = stack(EKS, "eks-karpenter", gpu="gb200", gpusPerNode=4, amiType="AL2023_ARM_64_NVIDIA")


@pytest.mark.parametrize(
    ("pool", "path", "message"),
    [
        (
            {"capacity": ["spot", "on-demand"]},
            f"{POOL}.capacity",
            "AWS does not sell p6e-gb200.36xlarge as spot, on-demand (only reserved): set capacity to those",
        ),
        (
            {"capacity": ["reserved"], "reservation": {"ids": [CR]}},
            f"{POOL}.reservation.type",
            "AWS sells p6e-gb200.36xlarge only as Capacity Blocks (UltraServers): set reservation.type: "
            "capacity-block with the block's reservation ID",
        ),
    ],
    ids=["no-spot-or-on-demand", "only-capacity-blocks"],
)
def test_p6e_gb200_only_as_capacity_blocks(pool: dict[str, Any], path: str, message: str) -> None:
    found = dict(problems(stack(GB200_KARPENTER, **pool)))
    assert found[path] == message


# --- accepted: right at a limit -------------------------------------------------------------------------------------

ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    # A ComputeClass priority with reservations.affinity AnyBestEffort consumes any matching reservation and else
    # creates on-demand VMs in that same priority (GKE ComputeClass reference, priorities[].reservations;
    # docs/scarce-gpus.md): any reservation right before on-demand is carried out, wherever it stands.
    ("nap-any-reservation-then-on-demand", stack(GKE, "gke-nap", capacity=["reserved", "on-demand"])),
    ("nap-spot-any-reservation-on-demand", stack(GKE, "gke-nap", capacity=["spot", "reserved", "on-demand"])),
    ("nap-any-reservation-on-demand-spot", stack(GKE, "gke-nap", capacity=["reserved", "on-demand", "spot"])),
    ("autopilot-any-reservation-then-on-demand", stack(GKE, "gke-autopilot", capacity=["reserved", "on-demand"])),
    # maxNodes may equal minNodes: a fixed-size pool (GKE node pool autoscaling: total_min_node_count <=
    # total_max_node_count).
    ("max-equals-min", stack(GKE, minNodes=2, maxNodes=2)),
    # A reservation in the cluster's zone, the GPU offered there (L4 in us-central1-a: "GPU regions and zones").
    (
        "gcp-reservation-in-cluster-zone",
        stack(GKE, capacity=["reserved"], reservation={"names": ["l4-res"], "zone": "us-central1-a"}),
    ),
    # Without gcp.zones, a zone where L4 is (us-central1-b) is one the pool's nodes use.
    (
        "gcp-reservation-where-the-gpu-is",
        stack(
            GKE,
            top={"gcp": {"project": "acme-ml-prod", "region": "us-central1"}, "cluster": UNLISTED_CLUSTER},
            capacity=["reserved"],
            reservation={"names": ["l4-res"], "zone": "us-central1-b"},
        ),
    ),
    # A region the tables do not list, opted in, no zones: a zone named after the region is taken on trust.
    (
        "unlisted-region-reservation-in-region",
        stack(
            GKE,
            top={**UNLISTED_GCP, "cluster": UNLISTED_CLUSTER},
            capacity=["reserved"],
            reservation={"names": ["l4-res"], "zone": "us-central9-a"},
        ),
    ),
    # A4X (a4x-highgpu-4g, 4 GB200) is reservation-bound only (AI Hypercomputer, "Create an AI-optimized MIG with
    # A4X"); its DRA driver needs Kubernetes 1.34 (resource.k8s.io/v1). A reservation in the cluster's one zone.
    (
        "a4x-reservation-in-cluster-zone",
        stack(
            GKE,
            top={
                "cluster": {"name": "ml", "kubernetesVersion": "1.35"},
                "gcp": {"project": "acme-ml-prod", "region": "us-central1", "zones": ["us-central1-b"]},
            },
            gpu="gb200",
            gpusPerNode=4,
            capacity=["reserved"],
            reservation={"names": ["a4x-nvl72"], "zone": "us-central1-b"},
        ),
    ),
    # A targeted ODCR whose AZ the pool's zones give (EC2 "On-Demand Capacity Reservations": one AZ).
    ("managed-odcr-in-pool-zone", stack(EKS, capacity=["reserved"], zones=["us-east-1a"], reservation={"ids": [CR]})),
    # Queued pools that agree on the run duration share the one ProvisioningRequestConfig.
    (
        "queued-pools-agree",
        stack(
            GKE,
            top={
                "gpuPools": [
                    {"name": "a", "gpu": "l4", "maxNodes": 4, "capacity": ["queued"], "maxRunDuration": "24h"},
                    {"name": "b", "gpu": "l4", "maxNodes": 4, "capacity": ["queued"], "maxRunDuration": "24h"},
                ]
            },
        ),
    ),
]


@pytest.mark.parametrize("raw", [raw for _, raw in ACCEPTED], ids=[i for i, _ in ACCEPTED])
def test_accepted_at_the_limit(raw: dict[str, Any]) -> None:
    parse_config(raw)


# --- what the rules tell the renderers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pool", "expected"),
    [
        ({}, "ON_DEMAND"),
        ({"spot": True}, "SPOT"),
        ({"capacity": ["spot"]}, "SPOT"),
        ({"capacity": ["on-demand"]}, "ON_DEMAND"),
        # A targeted ODCR runs on-demand instances inside it; a Capacity Block group is CAPACITY_BLOCK (EKS user
        # guide, capacity-blocks-mng).
        ({"capacity": ["reserved"], "zones": ["us-east-1a"], "reservation": {"ids": [CR]}}, "ON_DEMAND"),
        (
            {
                "gpu": "h100",
                "gpusPerNode": 8,
                "instanceTypes": ["p5.48xlarge"],
                "capacity": ["reserved"],
                "reservation": {"type": "capacity-block", "ids": [CR], "zone": "us-east-1a"},
            },
            "CAPACITY_BLOCK",
        ),
    ],
    ids=["default", "spot", "capacity-spot", "capacity-on-demand", "odcr", "capacity-block"],
)
def test_managed_node_group_capacity_type(pool: dict[str, Any], expected: str) -> None:
    """EKS API Nodegroup.capacityType: ON_DEMAND | SPOT | CAPACITY_BLOCK."""
    assert eks_capacity_type(parse_config(stack(EKS, **pool)).gpuPools[0]) == expected


@pytest.mark.parametrize(
    ("platform", "pool", "expected"),
    [
        # docs/scarce-gpus.md, "ComputeClasses on NAP and Autopilot": a class whose capacity holds reserved or
        # flex-start, or more than one type, gets a ComputeClass (its `priorities`, GKE ComputeClass reference);
        # spot or on-demand alone keep the platform's defaults (the cloud.google.com/gke-spot node selector).
        ("gke-nap", {"capacity": ["spot", "on-demand"]}, True),
        ("gke-autopilot", {"capacity": ["reserved"], "reservation": {"names": ["l4-res"]}}, True),
        ("gke-nap", {"capacity": ["flex-start"]}, True),
        ("gke-nap", {"capacity": ["spot"]}, False),
        ("gke-autopilot", {"capacity": ["on-demand"]}, False),
        ("gke-nap", {"spot": True}, False),
        # Node pools carry their one capacity type themselves (node_config.spot, reservation_affinity).
        ("gke-standard", {"capacity": ["reserved", "on-demand"]}, False),
    ],
    ids=[
        "nap-fallback",
        "autopilot-reserved",
        "nap-flex-start",
        "nap-spot",
        "autopilot-on-demand",
        "nap-spot-flag",
        "standard",
    ],
)
def test_compute_class_only_for_orders_a_node_selector_cannot_say(
    platform: str, pool: dict[str, Any], expected: bool
) -> None:
    cfg = parse_config(stack(GKE, platform, **pool))
    assert uses_compute_class(platform, cfg.gpuPools[0]) is expected
