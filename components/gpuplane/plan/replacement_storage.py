"""The replacement table's rows for model stores (buckets, their settings and grants: `gpuplane.storage`) and for the
project API image streaming needs (`gpuplane.gcp.cluster.streaming_api`), and for the region stacks' Pulumi Deployments
settings (`gpuplane.fleet.deployments`, pulumi-pulumiservice). Same row format as `replacement_table`,
which merges these in."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .replacement_kubernetes import R, RawRule, forcenew

TPA_S3 = "hashicorp/terraform-provider-aws internal/service/s3/"
TPG_STORAGE = "hashicorp/terraform-provider-google google/services/storage/"
TPG_IAM = "hashicorp/terraform-provider-google google/tpgiamresource/resource_iam_member.go"
PULUMISERVICE = "pulumi/pulumi-pulumiservice provider/pkg/resources/"


def _stack_keyed(source: str, *paths: str, why: str) -> list[RawRule]:
    """pulumi-pulumiservice inputs that name the stack a setting belongs to: a new value replaces it."""
    return [(path, R, why, f"{source} `{path}`") for path in paths]


STORAGE: Mapping[str, list[RawRule]] = MappingProxyType(
    {
        # bucket.go: `bucket` {Optional, Computed, ForceNew}, `bucket_prefix` {Optional, ForceNew}; a new prefix is a
        # new bucket (empty: the old one's objects stay behind, and deleting it fails while it holds any)
        "aws:s3/bucket:Bucket": forcenew(
            TPA_S3 + "bucket.go",
            ("bucket", "bucket"),
            ("bucketPrefix", "bucket_prefix"),
            ("objectLockEnabled", "object_lock_enabled"),
            why="a new bucket: the objects stay in the old one",
        ),
        # each bucket sub-resource is keyed by its bucket: `bucket` {Required, ForceNew}
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": forcenew(
            TPA_S3 + "bucket_public_access_block.go", ("bucket", "bucket")
        ),
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls": forcenew(
            TPA_S3 + "bucket_ownership_controls.go", ("bucket", "bucket")
        ),
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": forcenew(
            TPA_S3 + "bucket_server_side_encryption_configuration.go",
            ("bucket", "bucket"),
            ("expectedBucketOwner", "expected_bucket_owner"),
        ),
        # resource_storage_bucket.go: name, location and project are ForceNew (and hierarchical_namespace)
        "gcp:storage/bucket:Bucket": forcenew(
            TPG_STORAGE + "resource_storage_bucket.go",
            ("name", "name"),
            ("location", "location"),
            ("project", "project"),
            ("hierarchicalNamespace", "hierarchical_namespace"),
            why="a new bucket: the objects stay in the old one",
        ),
        # resource_google_project_service.go: `service` and `project` ForceNew
        "gcp:projects/service:Service": forcenew(
            "hashicorp/terraform-provider-google google/services/resourcemanager/resource_google_project_service.go",
            ("service", "service"),
            ("project", "project"),
        ),
        # the IAM member resource is keyed by its parent, role, member and condition: all ForceNew
        "gcp:storage/bucketIAMMember:BucketIAMMember": forcenew(
            TPG_IAM, ("bucket", "bucket"), ("role", "role"), ("member", "member"), ("condition", "condition")
        ),
        # --- Pulumi Deployments (pulumi-pulumiservice, gpuplane.fleet.deployments) ---
        # deployment_settings.go Diff: `replaceProperties` organization, project, stack (DeleteBeforeReplace: the
        # old stack's settings go first); sourceContext, operationContext and the rest update in place
        "pulumiservice:index:DeploymentSettings": _stack_keyed(
            PULUMISERVICE + "deployment_settings.go Diff replaceProperties",
            "organization",
            "project",
            "stack",
            why="the settings of another stack: the old stack's are deleted first",
        ),
        # drift_schedules.go DriftScheduleInput: organization, project, stack `provider:"replaceOnChanges"`;
        # scheduleCron and autoRemediate go through Update
        "pulumiservice:index:DriftSchedule": _stack_keyed(
            PULUMISERVICE + "drift_schedules.go DriftScheduleInput replaceOnChanges",
            "organization",
            "project",
            "stack",
            why="a schedule of another stack: a new schedule, the old one deleted",
        ),
    }
)
