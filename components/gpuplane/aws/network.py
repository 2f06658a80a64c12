"""`EksVpc`: a VPC for an EKS cluster with private node subnets across AZs, public subnets and NAT."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from ..config.aws import AwsConfig
from .render import subnet_cidrs


class EksVpc(pulumi.ComponentResource):
    """VPC, internet gateway, one public and one private subnet per AZ, NAT gateway(s) and routes.

    Subnets carry the tags the AWS load balancer controller and Karpenter discover them by.
    """

    vpc_id: pulumi.Output[str]
    private_subnet_ids: list[pulumi.Output[str]]
    private_subnet_zones: list[pulumi.Output[str]]
    """Availability Zone of each private subnet (same order)."""
    public_subnet_ids: list[pulumi.Output[str]]

    def __init__(self, name: str, cluster: str, aws_cfg: AwsConfig, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:aws:EksVpc", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        azs = aws.get_availability_zones_output(
            state="available", region=aws_cfg.region, opts=pulumi.InvokeOutputOptions(parent=self)
        )
        n = aws_cfg.availabilityZones
        private_cidrs, public_cidrs = subnet_cidrs(aws_cfg.vpcCidr, n)
        owned = {f"kubernetes.io/cluster/{cluster}": "shared"}

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=aws_cfg.vpcCidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": f"{cluster}-vpc"},
            opts=child,
        )
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags={"Name": f"{cluster}-igw"}, opts=child)
        public_rt = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": igw.id}],
            tags={"Name": f"{cluster}-public"},
            opts=child,
        )
        public, private, nats = [], [], []
        for i in range(n):
            zone = azs.names[i]
            pub = aws.ec2.Subnet(
                f"{name}-public-{i}",
                vpc_id=vpc.id,
                cidr_block=public_cidrs[i],
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags={**owned, "Name": f"{cluster}-public-{i}", "kubernetes.io/role/elb": "1"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{i}", subnet_id=pub.id, route_table_id=public_rt.id, opts=child
            )
            public.append(pub)
            if i == 0 or not aws_cfg.singleNatGateway:
                eip = aws.ec2.Eip(f"{name}-nat-{i}", domain="vpc", tags={"Name": f"{cluster}-nat-{i}"}, opts=child)
                nats.append(
                    aws.ec2.NatGateway(
                        f"{name}-nat-{i}",
                        allocation_id=eip.id,
                        subnet_id=pub.id,
                        tags={"Name": f"{cluster}-nat-{i}"},
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                    )
                )
        for i in range(n):
            nat = nats[0] if aws_cfg.singleNatGateway else nats[i]
            priv = aws.ec2.Subnet(
                f"{name}-private-{i}",
                vpc_id=vpc.id,
                cidr_block=private_cidrs[i],
                availability_zone=azs.names[i],
                tags={
                    **owned,
                    "Name": f"{cluster}-private-{i}",
                    "kubernetes.io/role/internal-elb": "1",
                    "karpenter.sh/discovery": cluster,
                },
                opts=child,
            )
            rt = aws.ec2.RouteTable(
                f"{name}-private-{i}",
                vpc_id=vpc.id,
                routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
                tags={"Name": f"{cluster}-private-{i}"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(f"{name}-private-{i}", subnet_id=priv.id, route_table_id=rt.id, opts=child)
            private.append(priv)

        self.vpc_id = vpc.id
        self.private_subnet_ids = [s.id for s in private]
        self.private_subnet_zones = [s.availability_zone for s in private]
        self.public_subnet_ids = [s.id for s in public]
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "private_subnet_ids": self.private_subnet_ids,
                "public_subnet_ids": self.public_subnet_ids,
            }
        )
