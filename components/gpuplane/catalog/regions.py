"""Every region (and GCP zone) of each cloud, to catch a typo before `pulumi up` does: dated tables.

Sources (checked 2026-11):
- GCP: "Regions and zones" (cloud.google.com/compute/docs/regions-zones); check with
  `gcloud compute zones list`.
- AWS: botocore's endpoint table (boto/botocore, botocore/data/endpoints.json, partitions `aws`,
  `aws-us-gov`, `aws-cn`); tests/test_regions.py compares this list with the installed botocore.

A region that is newer than these tables needs `gpuplane:allowUnlistedRegions: true`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

REGIONS_CHECKED = "2026-11"

_ABC = "abc"
GCP_REGION_ZONES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        region: tuple(f"{region}-{z}" for z in letters)
        for region, letters in {
            "africa-south1": _ABC,
            "asia-east1": _ABC,
            "asia-east2": _ABC,
            "asia-northeast1": _ABC,
            "asia-northeast2": _ABC,
            "asia-northeast3": _ABC,
            "asia-south1": _ABC,
            "asia-south2": _ABC,
            "asia-southeast1": _ABC,
            "asia-southeast2": _ABC,
            "australia-southeast1": _ABC,
            "australia-southeast2": _ABC,
            "europe-central2": _ABC,
            "europe-north1": _ABC,
            "europe-north2": _ABC,
            "europe-southwest1": _ABC,
            "europe-west1": "bcd",
            "europe-west2": _ABC,
            "europe-west3": _ABC,
            "europe-west4": _ABC,
            "europe-west6": _ABC,
            "europe-west8": _ABC,
            "europe-west9": _ABC,
            "europe-west10": _ABC,
            "europe-west12": _ABC,
            "me-central1": _ABC,
            "me-central2": _ABC,
            "me-west1": _ABC,
            "northamerica-northeast1": _ABC,
            "northamerica-northeast2": _ABC,
            "northamerica-south1": _ABC,
            "southamerica-east1": _ABC,
            "southamerica-west1": _ABC,
            "us-central1": "abcf",
            "us-east1": "bcd",
            "us-east4": _ABC,
            "us-east5": _ABC,
            "us-south1": _ABC,
            "us-west1": _ABC,
            "us-west2": _ABC,
            "us-west3": _ABC,
            "us-west4": _ABC,
        }.items()
    }
)
"""GCP region -> its zones."""

AWS_ALL_REGIONS: tuple[str, ...] = (
    # partition aws
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
    # partitions aws-us-gov and aws-cn
    "us-gov-east-1",
    "us-gov-west-1",
    "cn-north-1",
    "cn-northwest-1",
)
"""AWS regions (EKS and EC2 are offered in each)."""


def cloud_regions(cloud: str) -> frozenset[str]:
    """Every region of `cloud` ("gcp" or "aws") the tables list."""
    return frozenset(GCP_REGION_ZONES if cloud == "gcp" else AWS_ALL_REGIONS)


PARTITIONS: tuple[tuple[str, str], ...] = (("us-gov-", "aws-us-gov"), ("cn-", "aws-cn"))
"""AWS region prefix -> partition (botocore endpoints.json `partitions`); other regions are `aws`."""

UNSUPPORTED_PARTITIONS = frozenset({"aws-cn"})
"""Partitions gpuplane refuses: its IAM documents name `ec2.amazonaws.com`-style service principals, which
aws-cn spells `*.amazonaws.com.cn` (IAM user guide, "AWS service principals" in China Regions)."""


def aws_partition(region: str) -> str:
    """The AWS partition of `region` (what every ARN there starts with: `arn:<partition>:`)."""
    return next((p for prefix, p in PARTITIONS if region.startswith(prefix)), "aws")


GCP_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-[a-z]$")
"""The shape of a GCP zone (`us-central1-a`): its region and one letter."""


def gcp_region_of(location: str) -> tuple[str, list[str]]:
    """(region, zones) of a GKE location: a region (no zones), or a zone of a zonal cluster."""
    return (location[:-2], [location]) if GCP_ZONE.match(location) else (location, [])
