"""Each node is priced at the rate of the consumption option it runs under (`catalog.pricing.BASES`), never
at a rate the cloud does not sell it at; every catalog machine sold on demand has a list price."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.catalog.availability import PRICES
from gpuplane.catalog.consumption import ALL_GCP, aws_sold, gcp_sold
from gpuplane.catalog.gpus import GPUS
from gpuplane.catalog.pricing import BASES, Rates, node_rate
from gpuplane.config import parse_config
from gpuplane.stack.capacity import summary

from .test_capacity_types import raw_config

CATALOG = Rates({})


def machines(cloud: str) -> set[str]:
    if cloud == "gcp":
        return {m for g in GPUS.values() if g.gcp for m in g.gcp.machines}
    return {m for g in GPUS.values() if g.aws for m in g.aws.instances}


def test_every_catalog_machine_sold_on_demand_has_a_list_price() -> None:
    sold = {m for m in machines("gcp") if "on-demand" in gcp_sold(m)}
    sold |= {m for m in machines("aws") if "on-demand" in aws_sold(m)}
    assert sold - set(PRICES) == set()


def test_no_machine_gcp_sells_only_otherwise_has_an_on_demand_price() -> None:
    reservation_only = {m for m in machines("gcp") if "on-demand" not in gcp_sold(m)}
    assert reservation_only, "the catalog has A3 Ultra"
    assert reservation_only & set(PRICES) == set()
    for m in reservation_only:
        for option in sorted(gcp_sold(m)):
            assert node_rate(CATALOG, "gcp", m, option) is None, (m, option)
        assert node_rate(Rates({m: 70.0}), "gcp", m, "reserved") == 70.0  # your contract's rate


def test_every_consumption_option_has_a_price_basis_with_a_source() -> None:
    assert set(BASES) == ALL_GCP
    assert all(b.source for b in BASES.values())


@pytest.mark.parametrize("option", ["flex-start", "queued"])
def test_dws_nodes_are_priced_at_dws_rates_only(option: str) -> None:
    listed = PRICES["a3-highgpu-8g"]
    assert node_rate(CATALOG, "gcp", "a3-highgpu-8g", option) is None  # discounted SKU, rate not in the catalog
    assert node_rate(Rates({}, flex_start_fraction=0.5), "gcp", "a3-highgpu-8g", option) == round(listed * 0.5, 3)
    # G2 is not among the discounted families: flex-start bills its usual rates.
    assert node_rate(CATALOG, "gcp", "g2-standard-8", option) == PRICES["g2-standard-8"]


def test_spot_and_reservations() -> None:
    assert node_rate(CATALOG, "aws", "p5.48xlarge", "spot") == round(PRICES["p5.48xlarge"] * 0.4, 3)
    assert node_rate(CATALOG, "aws", "p5.48xlarge", "reserved") == PRICES["p5.48xlarge"]  # an ODCR
    assert node_rate(CATALOG, "aws", "p5.48xlarge", "reserved", capacity_block=True) is None


def test_attached_gpus_are_billed_on_gcp_n1_only() -> None:
    t4 = GPUS["t4"].gcp
    assert t4 is not None
    n1 = node_rate(CATALOG, "gcp", "n1-standard-8", "on-demand", attached_gpu=t4.accelerator, gpus=1)
    assert n1 is not None and n1 > PRICES["n1-standard-8"]
    # g4dn's T4 is part of the instance price: the GCP per-GPU surcharge must not be added on AWS.
    g4 = node_rate(CATALOG, "aws", "g4dn.xlarge", "on-demand", attached_gpu=t4.accelerator, gpus=1)
    assert g4 == PRICES["g4dn.xlarge"]


def rows(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["pool"]: r for r in summary(parse_config(raw))["rows"]}


def test_the_dws_stack_is_priced_only_with_a_dws_rate() -> None:
    raw = raw_config("gcp-dws")
    got = rows(raw)
    assert got["training"]["usdPerHourAtMax"] is None and got["finetune"]["usdPerHourAtMax"] is None
    priced = rows({**raw, "prices": {"flexStartFraction": 0.5}})
    assert priced["training"]["usdPerHourAtMax"] == round(PRICES["a3-highgpu-8g"] * 0.5 * 4, 2)
    assert "flexStartFraction" in summary(parse_config(raw))["prices"]
