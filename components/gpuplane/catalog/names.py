"""Names that must be unique within a scope and fit a pattern and length, per resource type, each with its
source: what the deploy simulator checks (`plan/deploy/rules.py` re-exports it) and what
`resources/names.py` keeps Pulumi autonames within."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class GlobalName:
    """A resource name that must be unique within `scope` and match `pattern` (length `min_len`..`max_len`).

    When `input` is absent from the inputs and `autoname` is set, Pulumi names the resource
    `<logical name>-<7 hex>`, which must still fit `max_len` (the bridge fails otherwise)."""

    input: str
    scope: tuple[str, ...]
    pattern: str
    max_len: int
    source: str
    min_len: int = 1
    autoname: bool = False
    prefix_input: str = ""
    """The input holding a name prefix the provider completes (`nodeGroupNamePrefix`), if the type has one."""
    prefix_suffix: int = 0
    """Characters the provider appends to that prefix."""


AUTONAME_SUFFIX = 8
"""`-` and 7 random hex characters (pulumi/pulumi-terraform-bridge pkg/tfbridge/info/autonaming.go `AutoName`,
Randlen 7; pulumi/pulumi sdk/go/common/resource/resource_id.go `NewUniqueName` fails past the maximum)."""

PREFIXED_UNIQUE_ID = 26
"""What terraform-plugin-sdk's `id.PrefixedUniqueId` appends to a name prefix (a timestamp and a counter)."""

GLOBAL_NAMES: Mapping[str, GlobalName] = MappingProxyType(
    {
        "gcp:serviceaccount/account:Account": GlobalName(
            "accountId",
            ("project",),
            r"^[a-z](?:[-a-z0-9]*[a-z0-9])$",
            30,
            "terraform-provider-google services/resourcemanager/resource_google_service_account.go "
            "(validateRFC1035Name(6, 30))",
            min_len=6,
        ),
        "gcp:container/cluster:Cluster": GlobalName(
            "name",
            ("project", "location"),
            r"^[a-z](?:[-a-z0-9]*[a-z0-9])?$",
            40,
            "GKE API clusters.create: name starts with a letter, lowercase letters, digits and '-', at most 40",
        ),
        "gcp:container/nodePool:NodePool": GlobalName(
            "name",
            ("cluster",),
            r"^[a-z](?:[-a-z0-9]*[a-z0-9])?$",
            40,
            "GKE API nodePools.create: same rule as cluster names, unique per cluster",
        ),
        "gcp:compute/router:Router": GlobalName(
            "name",
            ("project", "region"),
            r"^[a-z](?:[-a-z0-9]*[a-z0-9])?$",
            63,
            "terraform-provider-google compute router: RFC1035 name, unique per project and region",
        ),
        "eks:index:Cluster": GlobalName(
            "name",
            ("region",),
            r"^[0-9A-Za-z][A-Za-z0-9\-_]*$",
            100,
            "botocore EKS service-2 CreateCluster.name (pattern, max 100), unique per account and region",
        ),
        "eks:index:ManagedNodeGroup": GlobalName(
            "nodeGroupName",
            ("cluster",),
            r"^[0-9A-Za-z][A-Za-z0-9\-_]*$",
            63,
            "EKS user guide, create-managed-node-group: node group names up to 63 characters, unique per cluster "
            "(botocore sets no limit; pulumi-aws autonames within 255, which EKS then rejects); a "
            "nodeGroupNamePrefix gets 26 characters more (hashicorp/terraform-provider-aws internal/create/naming.go "
            "`Name` -> id.PrefixedUniqueId, terraform-plugin-sdk helper/id UniqueIDSuffixLength 26)",
            autoname=True,
            prefix_input="nodeGroupNamePrefix",
            prefix_suffix=PREFIXED_UNIQUE_ID,
        ),
        "aws:s3/bucket:Bucket": GlobalName(
            "bucket",
            (),
            r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
            63,
            "S3 bucket naming rules (docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html: 3 to 63 "
            "lowercase letters, digits, '.' and '-', unique across all accounts of the partition); a bucketPrefix gets "
            "26 characters more (terraform-provider-aws internal/service/s3/bucket.go `create.Name`, so at most 37)",
            min_len=3,
            autoname=True,
            prefix_input="bucketPrefix",
            prefix_suffix=PREFIXED_UNIQUE_ID,
        ),
        "gcp:storage/bucket:Bucket": GlobalName(
            "name",
            (),
            r"^[a-z0-9][a-z0-9_.-]*[a-z0-9]$",
            63,
            "Cloud Storage bucket names (cloud.google.com/storage/docs/buckets#naming: 3 to 63 lowercase letters, "
            "digits, '-', '_' and '.', unique across all of Cloud Storage); pulumi-gcp provider/resources.go autonames "
            "`name` (AutoName, '-' and 7 random characters)",
            min_len=3,
            autoname=True,
        ),
        "aws:iam/role:Role": GlobalName(
            "name",
            (),
            r"^[\w+=,.@-]+$",
            64,
            "IAM CreateRole RoleName (max 64, unique per account); pulumi-aws provider/resources.go "
            "autonames it within 64",
            autoname=True,
        ),
        "aws:iam/policy:Policy": GlobalName(
            "name",
            (),
            r"^[\w+=,.@-]+$",
            128,
            "IAM CreatePolicy PolicyName (botocore policyNameType, max 128, unique per account; enforced by IAM at "
            "create, pulumi-aws sets no autoname limit)",
            autoname=True,
        ),
        "aws:sqs/queue:Queue": GlobalName(
            "name",
            ("region",),
            r"^[A-Za-z0-9_-]+$",
            80,
            "SQS CreateQueue QueueName (max 80, alphanumerics, '-' and '_', unique per account and region; FIFO "
            "queues, which gpuplane does not create, have 75 + `.fifo`)",
            autoname=True,
        ),
        "aws:cloudwatch/eventRule:EventRule": GlobalName(
            "name",
            ("region",),
            r"^[.\-_A-Za-z0-9]+$",
            64,
            "EventBridge PutRule Name (max 64, unique per event bus, account and region)",
            autoname=True,
        ),
        "aws:kms/alias:Alias": GlobalName(
            "name",
            ("region",),
            r"^alias/(?!aws/)[a-zA-Z0-9:/_-]+$",
            256,
            "KMS CreateAlias AliasName (alias/..., not alias/aws/, unique per account and region)",
        ),
    }
)
