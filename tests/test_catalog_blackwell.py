"""The Blackwell GPUs of the catalog: facts restated by hand from their sources (not read back from the tables),
the EC2 instance types checked against botocore's EC2 model, and the NVLink domains that span nodes."""

from __future__ import annotations

import botocore.loaders
import pytest

from gpuplane.catalog import GPUS, gpus_on, lookup
from gpuplane.catalog.availability import AWS_REGIONS, GCP_ZONES, PRICES
from gpuplane.catalog.consumption import ALL_AWS, aws_sold, capacity_block_offered, gcp_sold
from gpuplane.catalog.network import EFA_INTERFACES, GPUDIRECT, topology_labels
from gpuplane.catalog.topology import NVLINK_DOMAINS, nvlink_domain

BLACKWELL = ("b200", "gb200", "gb300", "b300", "rtx-pro-6000")


def ec2_instance_types() -> set[str]:
    model = botocore.loaders.Loader().load_service_model("ec2", "service-2")
    return set(model["shapes"]["InstanceType"]["enum"])


def test_every_catalog_aws_instance_type_is_in_botocores_ec2_model() -> None:
    known = ec2_instance_types()
    missing = {i for g in GPUS.values() if g.aws for i in g.aws.instances} - known
    assert missing == set()
    # GB300 on AWS: the model has no P6e-GB300 type, so the catalog offers none.
    assert not any(t.startswith("p6e-gb300") for t in known)
    gb300 = GPUS["gb300"]
    assert gb300.aws is None and "botocore" in gb300.description


def test_the_blackwell_gpus_come_in_gpu_type_order_and_resolve_by_name() -> None:
    assert tuple(GPUS)[-5:] == BLACKWELL
    for name in BLACKWELL:
        gpu = lookup(name.upper())
        assert gpu is not None and gpu.name == name and gpu.architecture == "blackwell"


def test_each_cloud_offers_exactly_the_gpus_it_sells() -> None:
    # GCP: A4 (B200), A4X (GB200), A4X Max (GB300), G4 (RTX PRO 6000); no B300 machine on GCP.
    assert {n for n in BLACKWELL if n in gpus_on("gcp")} == {"b200", "gb200", "gb300", "rtx-pro-6000"}
    # AWS: P6-B200, P6e-GB200, P6-B300, G7e; no P6e-GB300 type in botocore.
    assert {n for n in BLACKWELL if n in gpus_on("aws")} == {"b200", "gb200", "b300", "rtx-pro-6000"}


# (gpu, cloud, machine, GPUs per machine, GiB per GPU): GCP cluster-toolkit examples/gke-a4, gke-a4x,
# gke-a4x-max-bm, pkg/config/hardware.go; AWS Karpenter v1.14 instance-types reference (gpu-count); memory from
# the NVIDIA MIG user guide "Supported GPUs" (B200 180GB, GB200 186GB, RTX PRO 6000 96GB) and the full-GPU MIG
# profiles (B300 7g.269gb, GB300 7g.278gb).
SHAPES = [
    ("b200", "aws", "p6-b200.48xlarge", 8, 180),
    ("b200", "gcp", "a4-highgpu-8g", 8, 180),
    ("gb200", "aws", "p6e-gb200.36xlarge", 4, 186),
    ("gb200", "gcp", "a4x-highgpu-4g", 4, 186),
    ("gb300", "gcp", "a4x-maxgpu-4g-metal", 4, 278),
    ("b300", "aws", "p6-b300.48xlarge", 8, 269),
    ("rtx-pro-6000", "aws", "g7e.2xlarge", 1, 96),
    ("rtx-pro-6000", "aws", "g7e.12xlarge", 2, 96),
    ("rtx-pro-6000", "aws", "g7e.24xlarge", 4, 96),
    ("rtx-pro-6000", "aws", "g7e.48xlarge", 8, 96),
    ("rtx-pro-6000", "gcp", "g4-standard-48", 1, 96),
    ("rtx-pro-6000", "gcp", "g4-standard-96", 2, 96),
    ("rtx-pro-6000", "gcp", "g4-standard-192", 4, 96),
    ("rtx-pro-6000", "gcp", "g4-standard-384", 8, 96),
]


@pytest.mark.parametrize(("name", "cloud", "machine", "gpus", "gib"), SHAPES)
def test_shapes_restated_from_their_sources(name: str, cloud: str, machine: str, gpus: int, gib: int) -> None:
    gpu = GPUS[name]
    assert gpu.memory_gib == gib
    if cloud == "gcp":
        assert gpu.gcp is not None and gpu.gcp.allows(machine, gpus)
    else:
        assert gpu.aws is not None and gpu.aws.instances[machine] == gpus


def test_memory_is_the_nominal_figure_karpenter_reports_rounded_up() -> None:
    # Karpenter v1.14 instance-gpu-memory (MiB): p6-b200 183359, p6-b300 275040, g7e 98304.
    for name, mib in (("b200", 183359), ("b300", 275040), ("rtx-pro-6000", 98304)):
        assert GPUS[name].memory_gib == -(-mib // 1024), name


def test_accelerator_and_karpenter_gpu_names() -> None:
    accelerators = {"b200": "nvidia-b200", "gb200": "nvidia-gb200", "gb300": "nvidia-gb300"}
    accelerators["rtx-pro-6000"] = "nvidia-rtx-pro-6000"
    for name, accelerator in accelerators.items():
        offer = GPUS[name].gcp
        assert offer is not None and offer.accelerator == accelerator
    # karpenter.k8s.aws/instance-gpu-name, Karpenter v1.14 reference (gb200: not in it, unverified)
    names = {"b200": "b200", "b300": "b300", "rtx-pro-6000": "rtx-pro-server-6000", "gb200": "gb200"}
    for name, gpu_name in names.items():
        offer = GPUS[name].aws
        assert offer is not None and offer.gpu_name == gpu_name


def test_mig_profiles_from_nvidias_mig_configs() -> None:
    # NVIDIA/mig-parted config-default.yaml (the MIG user guide's "Supported MIG Profiles" in data form).
    assert dict(GPUS["b200"].mig_profiles) == {
        "1g.23gb": 7, "1g.45gb": 4, "2g.45gb": 3, "3g.90gb": 2, "4g.90gb": 1, "7g.180gb": 1
    }  # fmt: skip
    assert dict(GPUS["gb200"].mig_profiles) == {
        "1g.23gb": 7, "1g.47gb": 4, "2g.47gb": 3, "3g.93gb": 2, "4g.93gb": 1, "7g.186gb": 1
    }  # fmt: skip
    assert dict(GPUS["rtx-pro-6000"].mig_profiles) == {"1g.24gb": 4, "2g.48gb": 2, "4g.96gb": 1}
    assert GPUS["b300"].mig_profiles["1g.34gb"] == 7 and GPUS["gb300"].mig_profiles["1g.35gb"] == 7
    # GKE's MIG partition sizes for these GPUs were not verified: none offered on GKE.
    assert all(GPUS[n].gke_mig_profiles == () for n in BLACKWELL)


def test_nvlink_domains_of_nvl72_span_18_nodes_of_4_gpus() -> None:
    for machine in ("p6e-gb200.36xlarge", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal"):
        domain = nvlink_domain(machine)
        assert domain is not None and (domain.nodes, domain.gpus, domain.gpus_per_node) == (18, 72, 4), machine
    aws = NVLINK_DOMAINS["p6e-gb200.36xlarge"]
    # EC2 UltraServers: u-p6e-gb200x72 is 18 instances (72 GPUs), u-p6e-gb200x36 is 9 (36 GPUs).
    assert dict(aws.sold_as) == {"u-p6e-gb200x72": 18, "u-p6e-gb200x36": 9}
    assert NVLINK_DOMAINS["a4x-highgpu-4g"].sold_as["sub-block"] == 18
    assert nvlink_domain("p6-b200.48xlarge") is None and nvlink_domain("a4-highgpu-8g") is None


def test_multi_node_nvlink_is_true_exactly_for_gb200_and_gb300() -> None:
    assert {n for n, g in GPUS.items() if g.multi_node_nvlink} == {"gb200", "gb300"}
    assert GPUS["gb200"].nvlink_domain_gpus == GPUS["gb300"].nvlink_domain_gpus == 72
    assert GPUS["b200"].nvlink_domain_gpus == GPUS["b300"].nvlink_domain_gpus == 8  # one HGX board
    assert GPUS["h100"].nvlink_domain_gpus == GPUS["h200"].nvlink_domain_gpus == 8
    assert GPUS["rtx-pro-6000"].nvlink_domain_gpus is None  # PCIe cards, no NVLink


def test_every_nvlink_domain_machine_is_a_catalog_machine_of_a_multi_node_gpu() -> None:
    machines = {m: g for g in GPUS.values() if g.gcp for m in g.gcp.machines}
    machines |= {i: g for g in GPUS.values() if g.aws for i in g.aws.instances}
    for machine, domain in NVLINK_DOMAINS.items():
        gpu = machines[machine]
        assert gpu.multi_node_nvlink and domain.gpus == gpu.nvlink_domain_gpus
        assert domain.gpus_per_node in gpu.counts_on(domain.cloud)


def test_how_each_machine_is_sold() -> None:
    # EC2: P6e-GB200 only as UltraServer Capacity Blocks; P6-B200 / P6-B300 also as Capacity Blocks.
    assert aws_sold("p6e-gb200.36xlarge") == {"reserved"}
    assert all(aws_sold(i) == ALL_AWS for i in ("p6-b200.48xlarge", "p6-b300.48xlarge", "g7e.48xlarge"))
    assert all(capacity_block_offered(i) for i in ("p6-b200.48xlarge", "p6e-gb200.36xlarge", "p6-b300.48xlarge"))
    assert not capacity_block_offered("g7e.48xlarge")
    # GCP: A4X and A4X Max by reservation only; A4 never on demand; G4 never flex-start.
    assert gcp_sold("a4x-highgpu-4g") == gcp_sold("a4x-maxgpu-4g-metal") == {"reserved"}
    assert "on-demand" not in gcp_sold("a4-highgpu-8g") and "flex-start" in gcp_sold("a4-highgpu-8g")
    assert gcp_sold("g4-standard-48") == {"on-demand", "spot", "reserved"}
    # Only what is sold on demand has a list price.
    assert "p6e-gb200.36xlarge" not in PRICES and "a4x-highgpu-4g" not in PRICES
    assert PRICES["p6-b200.48xlarge"] > 100
    assert PRICES["g4-standard-384"] == pytest.approx(8 * PRICES["g4-standard-48"], rel=0.01)


def test_networking_and_availability() -> None:
    # Karpenter v1.14 vpc.amazonaws.com/efa; P6e-GB200's count is not verified, so it has none.
    assert (EFA_INTERFACES["p6-b200.48xlarge"], EFA_INTERFACES["p6-b300.48xlarge"]) == (8, 16)
    assert EFA_INTERFACES["g7e.48xlarge"] == 4 and "g7e.4xlarge" not in EFA_INTERFACES
    assert "p6e-gb200.36xlarge" not in EFA_INTERFACES and "a4x-highgpu-4g" not in GPUDIRECT
    # EC2 topology: p6e-gb200 and g7e have the three layers, p6-b300 a fourth.
    for t in ("p6e-gb200.36xlarge", "g7e.48xlarge", "p6-b300.48xlarge"):
        assert topology_labels("aws", t).closest == "topology.k8s.aws/network-node-layer-3", t
    assert "us-central1-b" in GCP_ZONES["nvidia-b200"]["us-central1"]
    assert "nvidia-gb200" not in GCP_ZONES  # A4X zones: not verified
    assert AWS_REGIONS["p6e-gb200"] == ("us-east-1",) and "us-west-2" in AWS_REGIONS["p6-b300"]
