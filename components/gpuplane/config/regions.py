"""Region and zone checks shared by single stacks (`gcp.region`, `aws.region`, `gcp.zones`) and fleets
(`fleet.regions[].region`, `.zones`): names the catalog's dated tables list, with a "did you mean"; a
region newer than the tables passes only with `gpuplane:allowUnlistedRegions: true`."""

from __future__ import annotations

from pydantic import ValidationInfo

from ..catalog.regions import GCP_REGION_ZONES, REGIONS_CHECKED, UNSUPPORTED_PARTITIONS, aws_partition, cloud_regions
from .base import context_value, suggest

ARTICLE = {"aws": "an", "gcp": "a"}

OPT_IN = "allowUnlistedRegions"
"""The `gpuplane:` key that lets regions the tables do not list through."""


def unlisted_allowed(info: ValidationInfo) -> bool:
    return context_value(info, "allow_unlisted_regions") is True


def known_region(cloud: object, region: str, info: ValidationInfo) -> str:
    """Field validator body: `region` if the catalog lists it for `cloud` (or the stack opted in)."""
    if not isinstance(cloud, str) or unlisted_allowed(info):
        return region
    known = cloud_regions(cloud)
    if cloud == "aws" and aws_partition(region) in UNSUPPORTED_PARTITIONS:
        raise ValueError(
            f"{region!r} is in the {aws_partition(region)} partition, whose service principals "
            "(*.amazonaws.com.cn) gpuplane's IAM documents do not use: not supported"
        )
    if region not in known:
        what = f"{ARTICLE.get(cloud, 'a')} {cloud.upper()} region"
        raise ValueError(
            f"{region!r} is not {what}{suggest(region, known)}; if it is newer than the catalog "
            f"(checked {REGIONS_CHECKED}), set gpuplane:{OPT_IN}: true"
        )
    return region


def known_zones(region: object, zones: list[str], info: ValidationInfo) -> list[str]:
    """Field validator body: GCP zones that exist in `region` (unchecked in a region the table lacks)."""
    listed = GCP_REGION_ZONES.get(str(region))
    if listed is None:
        return zones
    bad = [z for z in zones if z not in listed]
    if bad:
        raise ValueError(f"unknown zone(s) {bad}: the zones of {region} are {', '.join(listed)}")
    return zones
