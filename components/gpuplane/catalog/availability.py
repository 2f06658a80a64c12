"""Where each GPU is offered, and what it costs: dated tables, never fetched at run time.

Sources (checked 2026-11; approximate, verify for your account before relying on them):
- GCP "GPU regions and zones" (cloud.google.com/compute/docs/gpus/gpu-regions-zones); check with
  `gcloud compute accelerator-types list --filter=name=<accelerator>`.
- AWS EC2 instance-type offerings per region (`aws ec2 describe-instance-type-offerings
  --location-type region --filters Name=instance-type,Values=<family>.*`).
- Prices: public on-demand list prices (GCP us-central1, AWS us-east-1), USD per hour; spot as a
  typical fraction of on-demand. Estimates for planning only; override them in `gpuplane:prices`.
- Blackwell (checked 2026-12; the GCP "GPU regions and zones" table itself was not readable here):
  skypilot-org/skypilot-catalog (2c3d7ea7) catalogs/v9/gcp/vms.csv (Compute Engine machine types per zone)
  for A4 and G4 zones, and catalogs/v9/aws/vms.csv (EC2 instance-type offerings and the AWS price list) for
  P6-B200, P6-B300 and G7e regions and prices; G4 prices from dstackai/dstack PR #3213 (gpuhunt, GCP billing
  catalog, us-central1, 2025-10). A4X (nvidia-gb200) and A4X Max (nvidia-gb300) zones could not be
  verified: they have no GCP_ZONES entry, so the fleet and zone checks have no say about them
  (`stack.fleet.offered` lets them through, `zone_problems` skips them) and GKE places them in the
  cluster's zones, until someone adds the zones GCP documents. P6e-GB200 is in the Dallas Local Zone of
  us-east-1 (EC2 user guide, "Launch instances using Capacity Blocks").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

AVAILABILITY_SOURCE = "GCP GPU regions and zones; AWS EC2 instance-type offerings (approximate, 2026-11)"
PRICE_SOURCE = "public on-demand list prices, GCP us-central1 / AWS us-east-1, USD/h (estimate, 2026-11)"


def _z(**regions: str) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(
        {r.replace("_", "-"): tuple(f"{r.replace('_', '-')}-{z}" for z in zs) for r, zs in regions.items()}
    )


GCP_ZONES: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "nvidia-tesla-t4": _z(
            us_central1="abcf", us_east1="cd", us_west1="ab", europe_west4="bc", asia_southeast1="bc"
        ),
        "nvidia-tesla-p100": _z(us_central1="cf", us_east1="bc", us_west1="ab", europe_west1="bd", europe_west4="a"),
        "nvidia-tesla-v100": _z(us_central1="abcf", us_west1="ab", europe_west4="abc", asia_east1="c"),
        "nvidia-l4": _z(
            us_central1="abc",
            us_east1="bcd",
            us_east4="ac",
            us_west1="ab",
            europe_west1="bc",
            europe_west4="abc",
            asia_northeast1="ac",
            asia_southeast1="abc",
        ),
        "nvidia-tesla-a100": _z(
            us_central1="abcf",
            us_east1="b",
            us_west1="b",
            europe_west4="ab",
            asia_northeast1="ac",
            asia_southeast1="bc",
        ),
        "nvidia-a100-80gb": _z(us_central1="ac", us_east4="c", us_east5="b", europe_west4="a", asia_southeast1="c"),
        "nvidia-h100-80gb": _z(
            us_central1="ac", us_east4="abc", us_east5="a", us_west1="a", europe_west4="bc", asia_southeast1="bc"
        ),
        "nvidia-h200-141gb": _z(us_central1="b", us_east4="b", europe_west1="b", asia_south1="b"),
        # A4 (a4-highgpu-8g): skypilot-catalog v9 gcp/vms.csv; its AI zones (e.g. us-central1-ai1) are left out.
        "nvidia-b200": _z(
            us_central1="b",
            us_east1="b",
            us_east4="b",
            us_south1="b",
            us_west2="c",
            us_west3="bc",
            europe_north1="bc",
            europe_west4="b",
            asia_northeast1="b",
            asia_southeast1="b",
        ),
        # No "nvidia-gb200" (A4X) or "nvidia-gb300" (A4X Max): zones not verified (module docstring).
        # G4 (g4-standard-48/96/192/384 list the same zones): skypilot-catalog v9 gcp/vms.csv.
        "nvidia-rtx-pro-6000": _z(
            us_central1="bf",
            us_east1="bd",
            us_east4="bc",
            us_east5="abc",
            us_south1="ab",
            us_west1="abc",
            us_west3="a",
            us_west4="ac",
            europe_north1="abc",
            europe_west1="c",
            europe_west2="bc",
            europe_west4="abc",
            europe_west8="b",
            me_central2="a",
            asia_east1="ab",
            asia_south1="c",
            asia_south2="ac",
            asia_southeast1="abc",
            asia_southeast2="bc",
        ),
    }
)
"""GCP accelerator -> region -> zones that offer it."""

AWS_REGIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "g4dn": (
            "us-east-1",
            "us-east-2",
            "us-west-2",
            "eu-west-1",
            "eu-central-1",
            "ap-northeast-1",
            "ap-southeast-1",
        ),
        "p3": ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1"),
        "p3dn": ("us-east-1", "us-west-2"),
        "g5": ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1", "ap-south-1"),
        "g6": ("us-east-1", "us-east-2", "us-west-2", "eu-west-2", "eu-central-1", "ap-northeast-1", "ap-south-1"),
        "g6e": ("us-east-1", "us-east-2", "us-west-2", "eu-central-1", "ap-northeast-1"),
        "p4d": ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"),
        "p4de": ("us-east-1", "us-west-2"),
        "p5": ("us-east-1", "us-east-2", "us-west-2", "eu-north-1", "ap-northeast-1", "ap-south-1"),
        "p5e": ("us-east-2", "us-west-2"),
        "p5en": ("us-east-1", "us-east-2", "us-west-2", "ap-northeast-1"),
        # Blackwell (skypilot-catalog v9 aws/vms.csv; Capacity Blocks may reach other regions: not verified)
        "p6-b200": ("us-east-1", "us-east-2", "us-west-2"),
        "p6-b300": ("us-west-2",),
        "p6e-gb200": ("us-east-1",),  # in the Dallas Local Zone, which belongs to N. Virginia (us-east-1)
        "g7e": ("us-east-1", "us-east-2", "us-west-2", "ap-northeast-1", "ap-northeast-2", "eu-south-2"),
    }
)
"""AWS instance family -> regions that offer it."""

PRICES: Mapping[str, float] = MappingProxyType(
    {
        # AWS on-demand, us-east-1
        "g4dn.xlarge": 0.526,
        "g4dn.2xlarge": 0.752,
        "g4dn.4xlarge": 1.204,
        "g4dn.8xlarge": 2.176,
        "g4dn.12xlarge": 3.912,
        "g4dn.16xlarge": 4.352,
        "g4dn.metal": 7.824,
        "p3.2xlarge": 3.06,
        "p3.8xlarge": 12.24,
        "p3.16xlarge": 24.48,
        "p3dn.24xlarge": 31.212,
        "g5.xlarge": 1.006,
        "g5.2xlarge": 1.212,
        "g5.4xlarge": 1.624,
        "g5.8xlarge": 2.448,
        "g5.12xlarge": 5.672,
        "g5.16xlarge": 4.096,
        "g5.24xlarge": 8.144,
        "g5.48xlarge": 16.288,
        "g6.xlarge": 0.805,
        "g6.2xlarge": 0.978,
        "g6.4xlarge": 1.323,
        "g6.8xlarge": 2.014,
        "g6.12xlarge": 4.602,
        "g6.16xlarge": 3.397,
        "g6.24xlarge": 6.675,
        "g6.48xlarge": 13.35,
        "g6e.xlarge": 1.861,
        "g6e.2xlarge": 2.242,
        "g6e.4xlarge": 3.004,
        "g6e.8xlarge": 4.529,
        "g6e.12xlarge": 10.493,
        "g6e.16xlarge": 7.577,
        "g6e.24xlarge": 15.066,
        "g6e.48xlarge": 30.131,
        "p4d.24xlarge": 21.958,
        "p4de.24xlarge": 27.447,
        "p5.4xlarge": 6.88,
        "p5.48xlarge": 55.04,
        "p5e.48xlarge": 60.0,
        "p5en.48xlarge": 63.3,
        # Blackwell (skypilot-catalog v9 aws/vms.csv). P6-B300 is not offered in us-east-1: its us-west-2
        # price. P6e-GB200 has none: sold only as UltraServer Capacity Blocks (catalog/consumption.py AWS_SOLD).
        "p6-b200.48xlarge": 113.933,
        "p6-b300.48xlarge": 142.416,
        "g7e.2xlarge": 3.363,
        "g7e.4xlarge": 3.998,
        "g7e.8xlarge": 5.268,
        "g7e.12xlarge": 8.286,
        "g7e.24xlarge": 16.572,
        "g7e.48xlarge": 33.144,
        # GCP on-demand, us-central1 (machine including its GPUs)
        "g2-standard-4": 0.707,
        "g2-standard-8": 0.854,
        "g2-standard-12": 1.0,
        "g2-standard-16": 1.147,
        "g2-standard-24": 2.0,
        "g2-standard-32": 1.734,
        "g2-standard-48": 4.0,
        "g2-standard-96": 8.0,
        "a2-highgpu-1g": 3.673,
        "a2-highgpu-2g": 7.347,
        "a2-highgpu-4g": 14.694,
        "a2-highgpu-8g": 29.387,
        "a2-megagpu-16g": 55.74,
        "a2-ultragpu-1g": 5.069,
        "a2-ultragpu-2g": 10.138,
        "a2-ultragpu-4g": 20.277,
        "a2-ultragpu-8g": 40.55,
        "a3-highgpu-8g": 88.25,
        # G4 (machine including its RTX PRO 6000 GPUs; dstack PR #3213 / gpuhunt, 2025-10)
        "g4-standard-48": 4.5,
        "g4-standard-96": 9.0,
        "g4-standard-192": 18.0,
        "g4-standard-384": 36.001,
        # No A3 Ultra, A3 Mega, A4, A4X, A4X Max or A3 High below 8 GPUs: GCP sells them only through
        # reservations, flex-start or spot (catalog/consumption.py), so they have no on-demand list price.
        "n1-standard-8": 0.38,
        "n1-standard-16": 0.76,
        "n1-standard-32": 1.52,
        "n1-standard-64": 3.04,
    }
)
"""Instance or machine type -> on-demand USD/h (every catalog machine sold on demand; a test holds it)."""

GPU_PRICES: Mapping[str, float] = MappingProxyType(
    {"nvidia-tesla-t4": 0.35, "nvidia-tesla-p100": 1.46, "nvidia-tesla-v100": 2.48}
)
"""GCP GPUs attached to N1 machines are billed per GPU on top of the machine (USD/h per GPU)."""

SPOT_FRACTION: Mapping[str, float] = MappingProxyType({"gcp": 0.35, "aws": 0.4})
"""Typical spot price as a fraction of on-demand, per cloud."""


def aws_regions(family: str) -> tuple[str, ...]:
    return AWS_REGIONS.get(family, ())


def known_regions(cloud: str) -> frozenset[str]:
    """Regions the availability tables list for any GPU of `cloud`."""
    tables: dict[str, Iterable[Iterable[str]]] = {"gcp": GCP_ZONES.values(), "aws": AWS_REGIONS.values()}
    return frozenset(r for regions in tables[cloud] for r in regions)
