"""Pure EKS render functions over their input space."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from gpuplane.aws.render import node_template_tags, subnet_cidrs, tag_slug
from gpuplane.config import parse_config


@given(st.integers(16, 20), st.integers(2, 6), st.integers(0, 255))
def test_subnets_fit_the_vpc_and_never_overlap(prefix: int, azs: int, second_octet: int) -> None:
    vpc = ipaddress.IPv4Network(f"10.{second_octet}.0.0/{prefix}", strict=False)
    private, public = subnet_cidrs(str(vpc), azs)
    nets = [ipaddress.IPv4Network(c) for c in private + public]
    assert len(private) == len(public) == azs
    assert all(n.subnet_of(vpc) for n in nets)
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])
    assert all(
        ipaddress.IPv4Network(p).num_addresses >= 8 * ipaddress.IPv4Network(q).num_addresses
        for p, q in zip(private, public, strict=True)
    )


def test_tag_slugs_are_unique_per_pool() -> None:
    cfg = parse_config(
        {
            "platform": "eks-managed",
            "cluster": {"name": "ml"},
            "aws": {"region": "us-east-1"},
            "gpuPools": [
                {
                    "name": "p",
                    "gpu": "h100",
                    "gpusPerNode": 8,
                    "maxNodes": 1,
                    "labels": {"team": "a", "Team": "b"},
                    "taints": [{"key": "team", "value": "a"}],
                }
            ],
        }
    )
    tags = node_template_tags(cfg.cluster, cfg.gpuPools[0])
    slugs = [tag_slug(k) for k in tags]
    assert len(set(slugs)) == len(slugs), slugs
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "8"
