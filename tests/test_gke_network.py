"""GKE lifecycle and network defaults: node pools that scale without being replaced, node service-account
IDs that are valid and unique for any cluster name (fleets included), private nodes with Cloud NAT, and
master authorized networks."""

from __future__ import annotations

import copy
import re
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi_gcp as gcp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.catalog.availability import known_regions
from gpuplane.config import parse_config
from gpuplane.config.base import DNS_LABEL
from gpuplane.gcp import network
from gpuplane.gcp.render import initial_node_count, node_service_account_id
from gpuplane.plan import Plan, PlannedResource, load
from gpuplane.plan.mocks import PlanMocks
from gpuplane.plan.runner import install

from .conftest import ROOT, examples, load_stack_config, stack_with

POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
ROUTER = "gcp:compute/router:Router"
NAT = "gcp:compute/routerNat:RouterNat"
ACCOUNT = "gcp:serviceaccount/account:Account"
SA_ID = re.compile(r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$")
"""GCP service-account ID (IAM API serviceAccounts.create `accountId`)."""
RFC1035 = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
"""Compute Engine resource names (routers, NATs)."""

# Node pool inputs GKE updates in place (terraform-provider-google resource_container_node_pool.go: no ForceNew).
UPDATABLE = {"autoscaling"}


# --- node pools: scaling never replaces a pool ------------------------------------------------------------


def pools_of(plan: Plan) -> dict[str, PlannedResource]:
    return {r.name: r for r in plan.by_type(POOL)}


@pytest.mark.parametrize("stack", ["gcp-standard", "gcp-fleet"])
def test_every_node_pool_ignores_later_initial_node_count_changes(stack: str, plan_of: Callable[..., Plan]) -> None:
    pools = plan_of(stack).by_type(POOL)
    assert pools
    for pool in pools:
        assert "initialNodeCount" in pool.inputs, pool.urn
        assert "initialNodeCount" in pool.ignore_changes, f"{pool.urn}: initialNodeCount is ForceNew"


def test_bring_your_own_cluster_pools_ignore_initial_node_count_changes() -> None:
    folder = ROOT / "examples" / "gke-your-cluster"
    stack = load(str(folder / "Pulumi.example.yaml"))
    monitor = install(type(stack)(project="gpuplane-gke-your-cluster", stack="t", config=stack.config), PlanMocks())
    _sync_await(run_pulumi_func(lambda: runpy.run_path(str(Path(folder) / "__main__.py"), run_name="__main__")))
    pools = [r for r in monitor.registrations if r.type == POOL]
    assert pools and all("initialNodeCount" in p.ignore_changes for p in pools)
    # Node IPs on someone else's cluster follow its own default (it may have no NAT).
    assert all("networkConfig" not in p.inputs for p in pools)


@pytest.mark.parametrize(("pool", "system"), [(0, False), (1, False), (None, True)])
def test_raising_min_nodes_replaces_no_node_pool(pool: int | None, system: bool, plan_of: Callable[..., Plan]) -> None:
    config = load_stack_config("gcp-standard")
    before = plan_of("gcp-standard")
    cluster = copy.deepcopy(config["gpuplane:cluster"])
    pools = copy.deepcopy(config["gpuplane:gpuPools"])
    if system:
        cluster["systemPool"] = {**cluster["systemPool"], "minNodes": 3}
    else:
        assert pool is not None
        pools[pool]["minNodes"] = pools[pool]["maxNodes"]
    after = pools_of(plan_of(stack_with("gcp-standard", cluster=cluster, gpuPools=pools)))
    changed = 0
    for urn, old in pools_of(before).items():
        new = after[urn]
        diff = {k for k in old.inputs.keys() | new.inputs.keys() if old.inputs.get(k) != new.inputs.get(k)}
        changed += bool(diff)
        forcing = diff - UPDATABLE - set(new.ignore_changes)
        assert not forcing, f"{urn}: {sorted(forcing)} changed and would replace the pool"
    assert changed == 1


@given(total=st.integers(0, 1000), zones=st.integers(0, 4))
def test_initial_node_count_starts_the_pool_at_its_total_minimum(total: int, zones: int) -> None:
    names = [f"us-central1-{c}" for c in "abcd"[:zones]]
    per_zone = initial_node_count(total, names)
    n = zones or 3  # GKE's default zones for a regional pool
    assert per_zone * n >= total and (per_zone - 1) * n < total if total else per_zone == 0


def test_initial_node_count_is_per_zone(plan_of: Callable[..., Plan]) -> None:
    pools = copy.deepcopy(load_stack_config("gcp-standard")["gpuplane:gpuPools"])
    pools[0]["minNodes"] = 4
    plan = plan_of(stack_with("gcp-standard", gpuPools=pools))
    (pool,) = [p for p in plan.by_type(POOL) if p.inputs["name"] == pools[0]["name"]]
    zones = len(pool.inputs["nodeLocations"])
    assert pool.inputs["initialNodeCount"] == -(-4 // zones)  # 4 nodes in total, not 4 per zone


# --- node service-account IDs: valid and unique for every accepted cluster name ---------------------------

cluster_names = st.from_regex(DNS_LABEL, fullmatch=True).filter(lambda s: len(s) <= 40)


def fleet_names(base: str, regions: list[str]) -> list[str]:
    """Cluster names a fleet derives (components/gpuplane/stack/fleet.py region_configs), those the config accepts."""
    return [f"{base}-{r}" for r in regions if len(f"{base}-{r}") <= 40]


@settings(max_examples=examples(400))
@given(name=cluster_names)
def test_node_service_account_id_is_valid_and_keeps_short_names(name: str) -> None:
    sa = node_service_account_id(name)
    assert SA_ID.fullmatch(sa) and 6 <= len(sa) <= 30, sa
    if len(name) <= 24:
        assert sa == f"{name}-nodes"  # unchanged from before: existing accounts are not replaced
    assert node_service_account_id(name) == sa  # deterministic


@settings(max_examples=examples(300))
@given(base=cluster_names, regions=st.lists(st.sampled_from(sorted(known_regions("gcp"))), unique=True, min_size=2))
def test_fleet_clusters_never_share_a_node_service_account(base: str, regions: list[str]) -> None:
    names = fleet_names(base, regions)
    ids = [node_service_account_id(n) for n in names]
    assert len(set(ids)) == len(ids), dict(zip(names, ids, strict=True))
    routers = [network.router_name(n) for n in names] + [network.nat_name(n) for n in names]
    assert all(RFC1035.fullmatch(r) for r in routers) and len(set(routers)) == len(routers)


@settings(max_examples=examples(300))
@given(a=cluster_names, b=cluster_names)
def test_distinct_cluster_names_get_distinct_ids(a: str, b: str) -> None:
    assert (node_service_account_id(a) == node_service_account_id(b)) == (a == b)


def test_long_fleet_names_deploy_distinct_accounts(plan_of: Callable[..., Plan]) -> None:
    cluster = {**load_stack_config("gcp-fleet")["gpuplane:cluster"], "name": "research-gpu-platform"}
    plan = plan_of(stack_with("gcp-fleet", cluster=cluster))
    ids = [a.inputs["accountId"] for a in plan.by_type(ACCOUNT)]
    assert len(ids) == 3 and len(set(ids)) == len(ids), ids
    assert all(SA_ID.fullmatch(i) for i in ids), ids
    for kind in (ROUTER, NAT):
        names = [r.inputs["name"] for r in plan.by_type(kind)]
        assert len(names) == 3 and len(set(names)) == 3 and all(RFC1035.fullmatch(n) for n in names), names


# --- private nodes, Cloud NAT, authorized networks --------------------------------------------------------


def test_private_nodes_and_nat_by_default(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    (cluster,) = plan.by_type(CLUSTER)
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
    assert cluster.inputs["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "ci-runners"}],  # the stack's own
        "gcpPublicCidrsAccessEnabled": False,
    }
    (router,) = plan.by_type(ROUTER)
    (nat,) = plan.by_type(NAT)
    assert router.inputs == {
        "name": "ml-gke-router",
        "project": "acme-ml-prod",
        "region": "us-central1",
        "network": "default",
    }
    assert nat.inputs["router"] == "ml-gke-router" and nat.inputs["region"] == "us-central1"
    # Only the subnet the cluster uses (the auto-mode `default` network's subnet is `default`): a NAT over
    # every subnetwork would leave no range for another stack's NAT in the same network.
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert nat.inputs["subnetworks"] == [{"name": "default", "sourceIpRangesToNats": ["ALL_IP_RANGES"]}]
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    # Pools come up only after their egress exists.
    for pool in plan.by_type(POOL):
        assert nat.urn in pool.dependencies, pool.urn


def test_nat_follows_the_configured_network_and_subnetwork(plan_of: Callable[..., Plan]) -> None:
    gcp_cfg = {**load_stack_config("gcp-nap")["gpuplane:gcp"], "network": "ml-vpc", "subnetwork": "ml-nodes"}
    plan = plan_of(stack_with("gcp-nap", gcp=gcp_cfg))
    (router,) = plan.by_type(ROUTER)
    (nat,) = plan.by_type(NAT)
    assert router.inputs["network"] == "ml-vpc"
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert nat.inputs["subnetworks"] == [{"name": "ml-nodes", "sourceIpRangesToNats": ["ALL_IP_RANGES"]}]


@pytest.mark.parametrize("stack", ["gcp-standard", "gcp-autopilot"])
def test_opt_outs(stack: str, plan_of: Callable[..., Plan]) -> None:
    base = load_stack_config(stack)["gpuplane:gcp"]
    public = plan_of(stack_with(stack, gcp={**base, "privateNodes": False}))
    (cluster,) = public.by_type(CLUSTER)
    assert "privateClusterConfig" not in cluster.inputs and not public.by_type(NAT) and not public.by_type(ROUTER)
    assert all(p.inputs["networkConfig"] == {"enablePrivateNodes": False} for p in public.by_type(POOL))
    own_nat = plan_of(stack_with(stack, gcp={**base, "cloudNat": False}))
    (cluster,) = own_nat.by_type(CLUSTER)
    assert cluster.inputs["privateClusterConfig"]["enablePrivateNodes"] is True and not own_nat.by_type(NAT)
    # The pools stay private too: no NAT of gpuplane's own is not public nodes (Autopilot has no pools).
    pools = own_nat.by_type(POOL)
    assert bool(pools) is (stack != "gcp-autopilot")
    assert all(p.inputs["networkConfig"] == {"enablePrivateNodes": True} for p in pools)


def test_authorized_networks_are_passed_through(plan_of: Callable[..., Plan]) -> None:
    nets = [{"cidrBlock": "203.0.113.0/24", "displayName": "office"}, {"cidrBlock": "198.51.100.7/32"}]
    plan = plan_of(
        stack_with(
            "gcp-autopilot", gcp={**load_stack_config("gcp-autopilot")["gpuplane:gcp"], "authorizedNetworks": nets}
        )
    )
    (cluster,) = plan.by_type(CLUSTER)
    assert cluster.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "203.0.113.0/24", "displayName": "office"},
        {"cidrBlock": "198.51.100.7/32", "displayName": ""},
    ]


def test_endpoint_arguments_are_pulumi_gcp_cluster_fields() -> None:
    """pulumi-gcp (installed) accepts every nested field gpuplane sets (a wrong key raises TypeError)."""
    raw: dict[str, Any] = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config("gcp-standard").items()}
    cfg = parse_config(raw)
    assert cfg.gcp is not None
    args = network.endpoint_args(cfg.gcp)
    gcp.container.ClusterPrivateClusterConfigArgs(**args["private_cluster_config"])
    blocks = [
        gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(**b)
        for b in args["master_authorized_networks_config"]["cidr_blocks"]
    ]
    gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(cidr_blocks=blocks)
    nat = network.nat_args("c", cfg.gcp.model_copy(update={"subnetwork": "s"}), "r")
    gcp.container.NodePoolNetworkConfigArgs(**network.pool_network_args(cfg.gcp)["network_config"])
    gcp.compute.RouterNatSubnetworkArgs(**nat["subnetworks"][0])
    gcp.compute.RouterNatLogConfigArgs(**nat["log_config"])


def test_no_endpoint_is_open_by_default(plan_of: Callable[..., Plan]) -> None:
    """Without authorized networks (GKE) or public CIDRs (EKS) the API endpoint admits no outside address."""
    gcp_cfg = {k: v for k, v in load_stack_config("gcp-standard")["gpuplane:gcp"].items() if k != "authorizedNetworks"}
    (gke,) = plan_of(stack_with("gcp-standard", gcp=gcp_cfg)).by_type(CLUSTER)
    # An enabled list with no blocks still admits every Compute Engine public IP unless this is off.
    assert gke.inputs["masterAuthorizedNetworksConfig"] == {"cidrBlocks": [], "gcpPublicCidrsAccessEnabled": False}
    private = plan_of(stack_with("gcp-standard", gcp={**gcp_cfg, "privateEndpoint": True})).by_type(CLUSTER)
    assert private[0].inputs["privateClusterConfig"]["enablePrivateEndpoint"] is True
    aws_cfg = {k: v for k, v in load_stack_config("aws-managed")["gpuplane:aws"].items() if k != "publicAccessCidrs"}
    (eks_cluster,) = plan_of(stack_with("aws-managed", aws=aws_cfg)).by_type("eks:index:Cluster")
    assert eks_cluster.inputs["endpointPublicAccess"] is False and eks_cluster.inputs["endpointPrivateAccess"] is True
    assert "publicAccessCidrs" not in eks_cluster.inputs
    (listed,) = plan_of("aws-managed").by_type("eks:index:Cluster")
    assert listed.inputs["endpointPublicAccess"] is True and listed.inputs["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_the_temporary_default_pool_is_shielded(plan_of: Callable[..., Plan]) -> None:
    """The default pool lives only during create, but an org policy that requires shielded VMs with secure
    boot refuses it all the same; it gets the nodes' service account and secure boot."""
    (cluster,) = plan_of("gcp-standard").by_type(CLUSTER)
    node_config = cluster.inputs["nodeConfig"]
    assert node_config["shieldedInstanceConfig"]["enableSecureBoot"] is True
    assert node_config["serviceAccount"].startswith("ml-gke-nodes@")
    assert "nodeConfig" in cluster.ignore_changes


@pytest.mark.parametrize("stack", ["gcp-standard", "gcp-nap"])
def test_the_kubernetes_provider_waits_for_the_system_pool(stack: str, plan_of: Callable[..., Plan]) -> None:
    """Add-ons run on the system pool: charts created before it exists wait out their timeout."""
    from gpuplane.plan.deploy.graph import DeployGraph

    plan = plan_of(stack)
    g = DeployGraph(plan)
    (system,) = [p for p in plan.by_type(POOL) if p.inputs["name"] == "system"]
    (provider,) = plan.by_type("pulumi:providers:kubernetes")
    assert g.waits_for(provider.urn, system.urn)


@pytest.mark.parametrize("stack", ["gcp-standard", "gcp-dws", "gcp-fleet", "gcp-multinode", "gcp-nap"])
def test_every_pool_starts_within_its_maximum(stack: str, plan_of: Callable[..., Plan]) -> None:
    """GKE creates `initialNodeCount` nodes in each of a pool's zones (its own node locations, else the
    cluster's, else three): that start must fit the pool's total maximum."""
    plan = plan_of(stack)
    clusters = {c.inputs["name"]: c for c in plan.by_type(CLUSTER)}
    for pool in plan.by_type(POOL):
        cluster = next(c for n, c in clusters.items() if str(pool.inputs["cluster"]).endswith(f"/clusters/{n}"))
        zones = pool.inputs.get("nodeLocations") or cluster.inputs.get("nodeLocations") or ["a", "b", "c"]
        top = (pool.inputs.get("autoscaling") or {}).get("totalMaxNodeCount")
        if top is not None:
            assert pool.inputs["initialNodeCount"] * len(zones) <= top, (pool.urn, zones, top)


def test_the_system_pool_names_its_zones_whatever_its_size(plan_of: Callable[..., Plan]) -> None:
    """`node_locations` is Optional+Computed: sent only while it is a subset, it would stay a subset after
    `maxNodes` grows, so it is always sent when the zones are known."""
    base = load_stack_config("gcp-standard")
    zones = base["gpuplane:gcp"]["zones"]
    for top, want in ((2, zones[:2]), (5, zones)):
        cluster = {
            **base["gpuplane:cluster"],
            "systemPool": {"machineType": "e2-standard-4", "minNodes": 1, "maxNodes": top},
        }
        (system,) = [
            p
            for p in plan_of(stack_with("gcp-standard", cluster=cluster)).by_type(POOL)
            if p.inputs["name"] == "system"
        ]
        assert system.inputs["nodeLocations"] == want
