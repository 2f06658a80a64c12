"""Capacity types per pool (issue 16, item 1): reserved capacity, Capacity Blocks, DWS flex-start and
queued provisioning, planned on each platform's own mechanism, and the impossible combinations refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import botocore.loaders
import pytest
import yaml
from googleapiclient import discovery_cache as discovery

from gpuplane.aws.karpenter_iam import controller_policies
from gpuplane.config import parse_config
from gpuplane.plan import Plan
from gpuplane.plan.mocks_aws import ec2_id
from gpuplane.scheduling.placement import placement
from gpuplane.stack.capacity import summary, table

from .conftest import config_problems, load_stack_config, need_reference, stack_with
from .crds import cel_results, crd_schema, schema_errors
from .graph import kube_objects


def raw_config(stack: str) -> dict[str, Any]:
    return {k.split(":", 1)[1]: v for k, v in load_stack_config(stack).items()}


def objects(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in kube_objects(plan) if r.inputs["kind"] == kind}


def requirement(node_pool: dict[str, Any], key: str) -> list[str] | None:
    for r in node_pool["spec"]["template"]["spec"]["requirements"]:
        if r["key"] == key:
            return list(r["values"])
    return None


# --- AWS, Karpenter -------------------------------------------------------------------------------


def test_karpenter_classes_take_their_order_and_their_own_reservations(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-reserved")
    pools, classes = objects(plan, "NodePool"), objects(plan, "EC2NodeClass")
    assert requirement(pools["training"], "karpenter.sh/capacity-type") == ["reserved", "spot"]
    assert requirement(pools["evals"], "karpenter.sh/capacity-type") == ["reserved", "on-demand"]
    assert requirement(pools["inference"], "karpenter.sh/capacity-type") == ["spot", "on-demand"]
    # Each reserved class points at an EC2NodeClass of its own that selects exactly its reservations.
    ref = {n: p["spec"]["template"]["spec"]["nodeClassRef"]["name"] for n, p in pools.items()}
    assert classes[ref["training"]]["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0a1b2c3d4e5f67890"}]
    assert classes[ref["evals"]]["spec"]["capacityReservationSelectorTerms"] == [{"tags": {"gpuplane.io/team": "ml"}}]
    assert "capacityReservationSelectorTerms" not in classes[ref["inference"]]["spec"]
    assert len({ref["training"], ref["evals"], ref["inference"]}) == 3
    # With a fallback, the capacity-block label requirement would shut out the spot nodes.
    assert requirement(pools["training"], "karpenter.k8s.aws/capacity-reservation-type") is None


def test_reserved_capacity_gate_is_on_and_exists_in_the_chart(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-reserved")
    (values,) = [r.inputs["values"] for r in plan.resources if r.name.endswith("karpenter-controller")]
    assert values["settings"]["featureGates"]["reservedCapacity"] is True
    ref = need_reference()
    chart = yaml.safe_load((ref / "charts" / "karpenter" / "values.yaml").read_text())
    assert "reservedCapacity" in chart["settings"]["featureGates"]


def test_controller_may_describe_and_launch_into_reservations() -> None:
    """Karpenter's own CloudFormation (aws/karpenter-provider-aws v1.14, getting-started cloudformation.yaml)
    lets the controller describe reservations and launch into them; gpuplane's policies keep both."""
    docs = controller_policies("aws", "us-east-2", "123456789012", "c", "arn:aws:iam::123456789012:role/n", "arn:q")
    statements = [s for d in docs.values() for s in d["Statement"]]
    actions = {a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    assert "ec2:DescribeCapacityReservations" in actions
    launch = [s for s in statements if "ec2:RunInstances" in s["Action"] and "ec2:CreateFleet" in s["Action"]]
    resources = {r for s in launch for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])}
    assert "arn:aws:ec2:us-east-2:*:capacity-reservation/*" in resources


CB_ONLY = {
    "name": "blocks",
    "gpu": "h100",
    "gpusPerNode": 8,
    "maxNodes": 2,
    "capacity": ["reserved"],
    "reservation": {"type": "capacity-block", "tags": {"purpose": "ml-training"}},
}


def test_capacity_block_only_class_requires_the_label_and_validates_with_cel(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("aws-reserved", gpuPools=[CB_ONLY], queues=None))
    pool = objects(plan, "NodePool")["blocks"]
    assert requirement(pool, "karpenter.k8s.aws/capacity-reservation-type") == ["capacity-block"]
    ref = need_reference()
    for kind, objs in (("NodePool", objects(plan, "NodePool")), ("EC2NodeClass", objects(plan, "EC2NodeClass"))):
        for obj in objs.values():
            schema = crd_schema(ref, obj["apiVersion"], kind)
            assert schema_errors(obj, schema) == []
            failures, evaluated = cel_results(obj, schema)
            assert failures == [] and evaluated > 0


def test_placement_on_a_reserved_class_matches_its_node_pool() -> None:
    cfg = parse_config(raw_config("aws-reserved"))
    exprs = placement(cfg, "training")["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = exprs["nodeSelectorTerms"]
    got = {e["key"]: e["values"] for e in term["matchExpressions"]}
    assert got["karpenter.sh/capacity-type"] == ["reserved", "spot"]


# --- AWS, managed node groups ---------------------------------------------------------------------

MANAGED_BLOCK = {
    "name": "training",
    "gpu": "h100",
    "gpusPerNode": 8,
    "instanceTypes": ["p5.48xlarge"],
    "maxNodes": 2,
    "capacity": ["reserved"],
    "reservation": {"type": "capacity-block", "ids": ["cr-0123456789abcdef0"], "zone": "us-east-1b"},
}
MANAGED_ODCR = {
    "name": "odcr",
    "gpu": "a100-40gb",
    "gpusPerNode": 8,
    "maxNodes": 1,
    "capacity": ["reserved"],
    "reservation": {"ids": ["cr-0fedcba9876543210"], "zone": "us-east-1a"},
}


def test_managed_capacity_block_and_targeted_odcr(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack_with("aws-managed", gpuPools=[MANAGED_BLOCK, MANAGED_ODCR]))
    groups = {r.name.removeprefix("ml-eks-"): r.inputs for r in plan.by_type("eks:index:ManagedNodeGroup")}
    templates = {r.name: r.inputs for r in plan.by_type("aws:ec2/launchTemplate:LaunchTemplate")}
    block, odcr = groups["training"], groups["odcr"]
    # On a reservation a replacement needs the old group's instances: a fixed name, so it is deleted first.
    assert block["nodeGroupName"] == "ml-eks-training" and odcr["nodeGroupName"] == "ml-eks-odcr"
    assert block["capacityType"] == "CAPACITY_BLOCK" and odcr["capacityType"] == "ON_DEMAND"
    lt_block, lt_odcr = templates["ml-eks-training-lt"], templates["ml-eks-odcr-lt"]
    assert lt_block["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert lt_block["capacityReservationSpecification"]["capacityReservationTarget"] == {
        "capacityReservationId": "cr-0123456789abcdef0"
    }
    assert "instanceMarketOptions" not in lt_odcr
    assert lt_odcr["capacityReservationSpecification"]["capacityReservationTarget"] == {
        "capacityReservationId": "cr-0fedcba9876543210"
    }
    # Each group runs only in its reservation's AZ (a reservation serves one AZ).
    private = sorted((r for r in plan.by_type("aws:ec2/subnet:Subnet") if "-private-" in r.name), key=lambda r: r.name)
    by_zone = {r.inputs["availabilityZone"]: ec2_id(r.type, r.name) for r in private}
    assert len(by_zone) == 3
    assert block["subnetIds"] == [by_zone["us-east-1b"]] and odcr["subnetIds"] == [by_zone["us-east-1a"]]


def test_ec2_and_eks_enum_values_of_reservations() -> None:
    loaders = botocore.loaders.Loader()
    ec2 = loaders.load_service_model("ec2", "service-2")["shapes"]
    eks = loaders.load_service_model("eks", "service-2")["shapes"]
    from gpuplane.aws.capacity_render import reserved_launch_args
    from gpuplane.config.capacity import eks_capacity_type

    raw = raw_config("aws-managed")
    raw["gpuPools"] = [MANAGED_BLOCK, MANAGED_ODCR]
    cfg = parse_config(raw)
    for pool in cfg.gpuPools:
        assert eks_capacity_type(pool) in eks["CapacityTypes"]["enum"]
        lt = reserved_launch_args(pool)
        assert (
            lt["capacity_reservation_specification"]["capacity_reservation_preference"]
            in (ec2["CapacityReservationPreference"]["enum"])
        )
        if "instance_market_options" in lt:
            assert lt["instance_market_options"]["market_type"] in ec2["MarketType"]["enum"]


# --- GKE Standard ---------------------------------------------------------------------------------


def test_gke_dws_and_reservation_pools(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-dws")
    pools = {r.inputs["name"]: r.inputs for r in plan.by_type("gcp:container/nodePool:NodePool")}
    training, finetune, serving = pools["training"], pools["finetune"], pools["serving"]
    assert training["queuedProvisioning"] == {"enabled": True}
    for dws in (training, finetune):
        nc = dws["nodeConfig"]
        assert nc["flexStart"] is True and not nc.get("spot")
        assert nc["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
        assert dws["autoscaling"]["totalMinNodeCount"] == 0 and dws["autoscaling"]["locationPolicy"] == "ANY"
        assert dws["management"]["autoRepair"] is False
    assert "queuedProvisioning" not in finetune
    assert training["nodeConfig"]["maxRunDuration"] == "259200s"
    assert finetune["nodeConfig"]["maxRunDuration"] == "86400s"
    assert serving["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["l4-serving"],
    }
    assert serving["nodeLocations"] == ["us-east4-a"]
    assert "flexStart" not in serving["nodeConfig"]


def test_gke_reservation_affinity_values_are_api_values() -> None:
    from gpuplane.gcp.capacity_render import reservation_affinity

    allowed = json.loads(discovery.get_static_doc("container", "v1"))["schemas"]["ReservationAffinity"]
    allowed_types = allowed["properties"]["consumeReservationType"]["enum"]
    raw = raw_config("gcp-dws")
    raw["gpuPools"] += [
        {"name": "any", "gpu": "l4", "maxNodes": 2, "capacity": ["reserved", "on-demand"]},
        {"name": "only", "gpu": "l4", "maxNodes": 2, "capacity": ["reserved"]},
    ]
    seen = set()
    for pool in parse_config(raw).gpuPools:
        affinity = reservation_affinity(pool)
        if affinity is not None:
            assert affinity["consume_reservation_type"] in allowed_types
            seen.add(affinity["consume_reservation_type"])
    assert seen == {"NO_RESERVATION", "SPECIFIC_RESERVATION", "ANY_RESERVATION", "ANY_RESERVATION_THEN_FAIL"}


# --- the capacity summary ---------------------------------------------------------------------------


def test_capacity_summary_shows_order_and_reserved_gpus() -> None:
    s = summary(parse_config(raw_config("aws-reserved")))
    rows = {r["pool"]: r for r in s["rows"]}
    assert rows["training"]["capacity"] == "reserved>spot" and rows["training"]["reservedGpus"] == 16
    assert rows["evals"]["reservedGpus"] == 4 and rows["inference"]["reservedGpus"] == 0
    assert s["totals"]["reservedGpus"] == 20
    # Reservations bill whether used or not: the idle floor's cost is theirs (an ODCR at the on-demand rate);
    # a Capacity Block is prepaid at its own rate, which the catalog does not know.
    assert rows["evals"]["usdPerHourAtFloor"] > 0 and rows["inference"]["usdPerHourAtFloor"] == 0
    assert rows["training"]["usdPerHourAtFloor"] is None and "p5.48xlarge" in s["unpriced"]
    text = table(s)
    assert "reserved>spot" in text and text.splitlines()[0].split().count("reserved") == 1


# --- impossible combinations (one clear error each; the catalogue holds the stack-level ones) ------


@pytest.mark.parametrize(
    ("stack", "pool", "key", "fragment"),
    [
        ("aws-reserved", {"capacity": ["spot", "reserved"]}, "capacity", "always prefer reserved > spot"),
        ("aws-managed", {"capacity": ["spot", "on-demand"]}, "capacity", "one capacity type here"),
        ("aws-automode", {"capacity": ["reserved"]}, "capacity", "has no reserved capacity"),
        ("aws-reserved", {"capacity": ["reserved"], "reservation": None}, "capacity", "needs a reservation"),
        (
            "aws-reserved",
            {"reservation": {"ids": ["cr-1"], "tags": {"a": "b"}}},
            "reservation.tags",
            "not both",
        ),
        ("aws-managed", {"capacity": ["reserved"], "reservation": {"tags": {"a": "b"}}}, "reservation.tags", "apply"),
        (
            "aws-managed",
            {
                "capacity": ["reserved"],
                "reservation": {"type": "capacity-block", "ids": ["cr-1"]},
                **{"gpu": "h100", "gpusPerNode": 8, "instanceTypes": ["p5.48xlarge"]},
            },
            "reservation.zone",
            "one Availability Zone",
        ),
        ("gcp-dws", {"capacity": ["reserved", "on-demand"]}, "reservation.names", "no fallback"),
        ("gcp-dws", {"capacity": ["on-demand"]}, "reservation", "is unused"),
        ("gcp-standard", {"maxRunDuration": "1h"}, "maxRunDuration", "flex-start and queued"),
        ("gcp-nap", {"capacity": ["queued"]}, "capacity", "has no queued capacity"),
        # ComputeClass: any reservation (AnyBestEffort) always falls back to on-demand first.
        ("gcp-nap", {"capacity": ["reserved", "spot"]}, "capacity", "only with on-demand right after it"),
        (
            "gcp-autopilot",
            {"capacity": ["reserved"], "reservation": {"nodes": 1}},
            "reservation.names",
            "name the reservations",
        ),
    ],
)
def test_impossible_capacity_is_refused(stack: str, pool: dict[str, Any], key: str, fragment: str) -> None:
    raw = raw_config(stack)
    index = {"aws-reserved": 0, "gcp-dws": 2}.get(stack, 0)
    entry = dict(raw["gpuPools"][index])
    entry.pop("spot", None)
    for k, v in pool.items():
        if v is None:
            entry.pop(k, None)
        else:
            entry[k] = v
    raw["gpuPools"][index] = entry
    problems = config_problems(raw)
    path = f"gpuplane:gpuPools[{index}].{key}"
    assert list(problems) == [path], problems
    assert fragment in problems[path]


# --- the typed component args carry the same settings ---------------------------------------------


def test_typed_args_carry_capacity_reservation_and_run_duration() -> None:
    import pulumi_aws as aws
    import pulumi_gcp as gcp

    from gpuplane.args.inputs import CapacityType, GpuType, ReservationType
    from gpuplane.aws.karpenter_pools import KarpenterGpuNodePools
    from gpuplane.gcp.pools import GkeGpuNodePools

    from .test_library import of_type, run

    def program() -> None:
        role = aws.iam.Role("karpenter-nodes", name="KarpenterNodeRole-mine", assume_role_policy="{}")
        block = {"type": ReservationType.CAPACITY_BLOCK, "ids": ["cr-0123456789abcdef0"], "machine_type": "p5.48xlarge"}
        KarpenterGpuNodePools(
            "gpu",
            {
                "cluster_name": "mine",
                "node_role": role.name,
                "gpu_pools": [
                    {
                        "name": "train",
                        "gpu": GpuType.H100,
                        "gpus_per_node": 8,
                        "max_nodes": 2,
                        "capacity": [CapacityType.RESERVED, CapacityType.SPOT],
                        "reservation": block,
                    }
                ],
            },
        )
        GkeGpuNodePools(
            "gke",
            {
                "cluster": "projects/p/locations/us-east4/clusters/c",
                "location": "us-east4",
                "node_service_account": "n@p.iam.gserviceaccount.com",
                "gpu_pools": [
                    {
                        "name": "flex",
                        "gpu": GpuType.H100,
                        "max_nodes": 2,
                        "capacity": [CapacityType.FLEX_START],
                        "max_run_duration": "12h",
                    }
                ],
            },
        )

    regs = run(program)
    (node_class,) = of_type(regs, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert node_class.inputs["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0123456789abcdef0"}]
    (node_pool,) = of_type(regs, "kubernetes:karpenter.sh/v1:NodePool")
    assert requirement(node_pool.inputs, "karpenter.sh/capacity-type") == ["reserved", "spot"]
    (pool,) = of_type(regs, "gcp:container/nodePool:NodePool")
    assert pool.inputs["nodeConfig"]["flexStart"] is True and pool.inputs["nodeConfig"]["maxRunDuration"] == "43200s"
    assert gcp is not None


def test_bad_typed_reservation_names_the_argument_path() -> None:
    from gpuplane.args.checks import ArgsError
    from gpuplane.aws.karpenter_pools import KarpenterGpuNodePools

    from .test_library import run

    errors: list[ArgsError] = []

    def program() -> None:
        try:
            KarpenterGpuNodePools(
                "bad",
                {
                    "cluster_name": "c",
                    "node_role": "r",
                    "gpu_pools": [
                        {
                            "name": "a",
                            "gpu": "h100",
                            "gpus_per_node": 8,
                            "max_nodes": 1,
                            "spot": True,
                            "reservation": {"type": "capacity-block", "ids": ["cr-1"], "machine_type": "p4d.24xlarge"},
                        }
                    ],
                },
            )
        except ArgsError as exc:
            errors.append(exc)

    run(program)
    (err,) = errors
    assert [p for p, _ in err.problems] == ["gpu_pools[0].reservation"]
    assert "Capacity Blocks are reserved capacity" in str(err)
