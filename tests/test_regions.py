"""Regions and zones of single stacks and fleets are checked against the catalog's dated tables, with a
"did you mean"; `allowUnlistedRegions` lets a region newer than the tables through; pattern errors are
in plain words. (The failing cases are in tests/bad_configs.yaml.)"""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest

from gpuplane.catalog.availability import AWS_REGIONS, GCP_ZONES
from gpuplane.catalog.regions import AWS_ALL_REGIONS, GCP_REGION_ZONES
from gpuplane.config import ConfigError, parse_config
from gpuplane.config.base import HINTS, models_in
from gpuplane.config.model import StackConfig

from .conftest import config_problems, load_stack_config


def raw(stack: str, **sections: dict[str, Any]) -> dict[str, Any]:
    out = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config(stack).items()}
    for name, values in sections.items():
        out[name] = {**out[name], **values}
    return out


@pytest.mark.parametrize(
    ("stack", "section", "region"),
    [("gcp-standard", {"gcp": {"region": "us-central9", "zones": []}}, "us-central9"),
     ("aws-managed", {"aws": {"region": "us-east-9"}}, "us-east-9")],
)  # fmt: skip
def test_unlisted_region_needs_the_opt_in(stack: str, section: dict[str, Any], region: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(raw(stack, **section))
    ((key, reason),) = info.value.problems
    assert key.endswith(".region") and "allowUnlistedRegions: true" in reason
    cfg = parse_config({**raw(stack, **section), "allowUnlistedRegions": True})
    assert region in (cfg.gcp.region if cfg.gcp else cfg.aws.region if cfg.aws else "")


def test_opt_in_still_checks_the_shape_and_fleets_spread_into_unlisted_regions() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({**raw("aws-managed", aws={"region": "virginia"}), "allowUnlistedRegions": True})
    assert info.value.problems == [("gpuplane:aws.region", "'virginia' must look like us-east-1")]
    fleet = raw("aws-fleet")
    fleet["fleet"]["regions"][0]["region"] = "us-east-9"
    cfg = parse_config({**fleet, "allowUnlistedRegions": True})
    assert cfg.fleet is not None and cfg.fleet.regions[0].region == "us-east-9"


def test_gpu_tables_use_only_listed_regions_and_zones() -> None:
    for accelerator, regions in GCP_ZONES.items():
        for region, zones in regions.items():
            assert set(zones) <= set(GCP_REGION_ZONES.get(region, ())), (accelerator, region, zones)
    for family, aws_regions in AWS_REGIONS.items():
        assert set(aws_regions) <= set(AWS_ALL_REGIONS), family


def test_aws_regions_match_botocore() -> None:
    """The AWS table is botocore's endpoint data (boto/botocore botocore/data/endpoints.json) for the
    commercial, GovCloud and China partitions; a newer botocore with a new region fails here first."""
    session = botocore.session.get_session()
    listed = {
        r for part in ("aws", "aws-us-gov", "aws-cn") for r in session.get_available_regions("ec2", partition_name=part)
    }
    assert listed == set(AWS_ALL_REGIONS)


def test_every_field_pattern_has_plain_words() -> None:
    """A value that fails a field's pattern gets a sentence (e.g. "must look like us-east-1"), never the regex."""

    def patterns(model: Any) -> list[tuple[str, str]]:
        out = []
        for name, field in model.model_fields.items():
            out += [(name, str(m.pattern)) for m in field.metadata if getattr(m, "pattern", None)]
            for inner in models_in(field.annotation):
                out += patterns(inner)
        return out

    found = patterns(StackConfig)
    assert len(found) >= 15
    assert [name for name, p in found if p not in HINTS] == []


def test_arns_follow_the_partition_and_aws_cn_is_refused() -> None:
    """GovCloud ARNs start `arn:aws-us-gov:`; aws-cn needs other service principals, so it is refused. (The
    GPU catalog lists no GovCloud offers, so no shipped stack plans there: the pieces are checked.)"""
    from gpuplane.aws.render import access_entries
    from gpuplane.catalog.regions import aws_partition

    assert [aws_partition(r) for r in ("us-east-1", "us-gov-west-1", "cn-north-1")] == ["aws", "aws-us-gov", "aws-cn"]
    entries = access_entries(["arn:aws-us-gov:iam::123456789012:role/admins"], aws_partition("us-gov-west-1"))
    (policy,) = [p["policy_arn"] for e in entries.values() for p in e["access_policies"].values()]
    assert policy == "arn:aws-us-gov:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    raw = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config("aws-managed").items()}
    problems = config_problems({**raw, "aws": {**raw["aws"], "region": "cn-north-1"}})
    assert "aws-cn partition" in problems["gpuplane:aws.region"]
