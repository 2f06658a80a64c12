"""AWS section of the stack config (`gpuplane:aws`)."""

from __future__ import annotations

import ipaddress

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .base import context_value, not_ipv4_cidrs, shaped
from .regions import known_region

_KEY_ID = r"(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})"
_KMS_KEY = shaped(
    rf"^arn:aws(-[a-z]+)*:kms:[a-z0-9-]+:[0-9]{{12}}:key/{_KEY_ID}$",
    "must be a KMS key ARN like arn:aws:kms:us-east-1:123456789012:key/<key ID> (not an alias)",
)
_ARN_PRINCIPAL = r"^arn:aws(-[a-z]+)*:(iam|sts)::[0-9]{12}:(role|user|assumed-role)/[\w+=,.@/-]+$"


class AwsConfig(BaseModel):
    """Where an EKS cluster lives and who administers it."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)

    region: str = Field(pattern=shaped(r"^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]$", "must look like us-east-1"))
    """AWS region, e.g. `us-east-1`: one the catalog lists (components/gpuplane/catalog/regions.py) and,
    for each pool, one that offers its instance families, unless `allowUnlistedRegions`."""
    vpcId: str | None = Field(
        default=None, pattern=shaped(r"^vpc-[0-9a-f]{8,17}$", "must be a VPC ID like vpc-0123456789abcdef0")
    )
    """Use this existing VPC (with `privateSubnetIds`) instead of creating one."""
    privateSubnetIds: list[str] = Field(default_factory=list, validate_default=True)
    """Existing private subnets (across AZs) for nodes; required with `vpcId`."""
    publicSubnetIds: list[str] = Field(default_factory=list)
    """Existing public subnets for internet-facing load balancers (optional)."""
    nodeSubnetIds: list[str] = Field(default_factory=list)
    """Existing private subnets for GPU node groups only, e.g. in a Local Zone (P6e-GB200 UltraServers are in
    the Dallas one), where the EKS control plane can't be: never given to the cluster or the system pool; a GPU
    pool uses them when its reservation is in their Local Zone. eks-managed only; needs `vpcId`."""
    vpcCidr: str = "10.0.0.0/16"
    """CIDR of the VPC gpuplane creates (a /16 to /20)."""
    availabilityZones: int = Field(default=3, ge=2, le=6)
    """How many AZs the created VPC spans (one private and one public subnet each)."""
    singleNatGateway: bool = True
    """One NAT gateway for all private subnets (cheaper) instead of one per AZ (survives an AZ outage)."""
    admins: list[str] = Field(default_factory=list)
    """IAM role/user ARNs granted cluster-admin through EKS access entries."""
    endpointPublicAccess: bool | None = None
    """Expose the Kubernetes API endpoint publicly, to `publicAccessCidrs` only. Unset: public exactly when
    `publicAccessCidrs` lists some, else private (as terraform-aws-eks defaults), and `pulumi up` then
    installs the charts from inside the VPC (a runner or bastion there, a VPN or Direct Connect)."""
    publicAccessCidrs: list[str] = Field(default_factory=list, validate_default=True)
    """CIDRs allowed to reach the public API endpoint: where `pulumi up`, CI and kubectl run from. Required
    with `endpointPublicAccess: true`: there is no open default (`["0.0.0.0/0"]` opens it to the internet,
    IAM still required, and must be said)."""
    ssmAccess: bool = False
    """Attach `AmazonSSMManagedInstanceCore` to node roles (Session Manager shells on nodes); off by default
    because it also lets every node read any SSM parameter."""
    secretsKmsKeyArn: str | None = Field(default=None, pattern=_KMS_KEY)
    """KMS key that envelope-encrypts Kubernetes secrets; unset creates one (rotation on) per cluster."""

    @field_validator("region")
    @classmethod
    def _known_region(cls, v: str, info: ValidationInfo) -> str:
        return known_region("aws", v, info)

    @field_validator("privateSubnetIds", "publicSubnetIds", "nodeSubnetIds")
    @classmethod
    def _subnet_ids(cls, v: list[str]) -> list[str]:
        bad = [s for s in v if not s.startswith("subnet-")]
        if bad:
            raise ValueError(f"not subnet IDs: {bad}")
        return v

    @field_validator("privateSubnetIds")
    @classmethod
    def _subnets_with_vpc(cls, v: list[str], info: ValidationInfo) -> list[str]:
        vpc = info.data.get("vpcId")
        if vpc and len(v) < 2:
            raise ValueError("an existing vpcId needs at least 2 private subnets in different AZs")
        if v and not vpc and "vpcId" in info.data:
            raise ValueError("subnets given without vpcId")
        return v

    @field_validator("nodeSubnetIds")
    @classmethod
    def _node_subnets_with_vpc(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if v and not info.data.get("vpcId") and "vpcId" in info.data:
            raise ValueError("node subnets are subnets of your VPC: set vpcId (and privateSubnetIds) too")
        platform = context_value(info, "platform")
        name = getattr(platform, "name", None)
        if v and name is not None and name != "eks-managed":
            raise ValueError(
                f"only eks-managed node groups use node subnets; {name} launches into the cluster's subnets"
            )
        return v

    @field_validator("publicAccessCidrs")
    @classmethod
    def _public_cidrs(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("endpointPublicAccess") is True and not v:
            raise ValueError(
                "a public endpoint needs the CIDRs that may reach it (where `pulumi up` and kubectl run), e.g. "
                '["203.0.113.0/24"]; leave endpointPublicAccess unset (or false) for a private endpoint; '
                '["0.0.0.0/0"] opens it to the internet'
            )
        bad = not_ipv4_cidrs(v)
        if bad:
            raise ValueError(f"not IPv4 CIDR blocks: {bad}")
        return v

    @property
    def public_endpoint(self) -> bool:
        """Whether the API endpoint is public (to `publicAccessCidrs` only)."""
        return self.endpointPublicAccess if self.endpointPublicAccess is not None else bool(self.publicAccessCidrs)

    @field_validator("vpcCidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        try:
            net = ipaddress.IPv4Network(v)
        except ValueError as exc:
            raise ValueError(f"not an IPv4 CIDR: {exc}") from None
        if not 16 <= net.prefixlen <= 20:
            raise ValueError(f"prefix /{net.prefixlen} must be between /16 and /20")
        return v

    @field_validator("admins")
    @classmethod
    def _arns(cls, v: list[str]) -> list[str]:
        import re

        bad = [a for a in v if not re.match(_ARN_PRINCIPAL, a)]
        if bad:
            raise ValueError(f"not IAM principal ARNs: {bad}")
        return v
