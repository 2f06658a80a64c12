"""Karpenter's controller IAM, scoped as its own CloudFormation (v1.14 getting-started
`cloudformation.yaml`) scopes it: node lifecycle by the cluster's tags, `iam:PassRole` only on the
node role, read-only discovery in the region. No statement allows every action."""

from __future__ import annotations

from typing import Any

EC2_WRITE_RESOURCES = ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")


def controller_policies(
    partition: str, region: str, account: str, cluster: str, node_role_arn: str, queue_arn: str
) -> dict[str, dict[str, Any]]:
    """Karpenter's six controller policies (name suffix -> document), scoped as its CloudFormation does:
    node lifecycle by the cluster's tags, PassRole only on the node role, read-only discovery."""
    p, r, a, c = partition, region, account, cluster
    owned = {f"aws:ResourceTag/kubernetes.io/cluster/{c}": "owned"}
    request_owned = {f"aws:RequestTag/kubernetes.io/cluster/{c}": "owned", "aws:RequestTag/eks:eks-cluster-name": c}
    ec2_write = [f"arn:{p}:ec2:{r}:*:{kind}/*" for kind in EC2_WRITE_RESOURCES]
    profile = f"arn:{p}:iam::{a}:instance-profile/*"
    region_tag = {"aws:ResourceTag/topology.kubernetes.io/region": r}

    def doc(*statements: dict[str, Any]) -> dict[str, Any]:
        return {"Version": "2012-10-17", "Statement": list(statements)}

    return {
        "node-lifecycle": doc(
            {
                "Sid": "AllowScopedEC2InstanceAccessActions",
                "Effect": "Allow",
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
                "Resource": [
                    f"arn:{p}:ec2:{r}::image/*",
                    f"arn:{p}:ec2:{r}::snapshot/*",
                    f"arn:{p}:ec2:{r}:*:security-group/*",
                    f"arn:{p}:ec2:{r}:*:subnet/*",
                    f"arn:{p}:ec2:{r}:*:capacity-reservation/*",
                    f"arn:{p}:ec2:{r}:*:placement-group/*",
                ],
            },
            {
                "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
                "Effect": "Allow",
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
                "Resource": f"arn:{p}:ec2:{r}:*:launch-template/*",
                "Condition": {"StringEquals": owned, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}},
            },
            {
                "Sid": "AllowScopedEC2InstanceActionsWithTags",
                "Effect": "Allow",
                "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
                "Resource": ec2_write,
                "Condition": {
                    "StringEquals": request_owned,
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedResourceCreationTagging",
                "Effect": "Allow",
                "Action": "ec2:CreateTags",
                "Resource": ec2_write,
                "Condition": {
                    "StringEquals": {
                        **request_owned,
                        "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                    },
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedResourceTagging",
                "Effect": "Allow",
                "Action": "ec2:CreateTags",
                "Resource": f"arn:{p}:ec2:{r}:*:instance/*",
                "Condition": {
                    "StringEquals": owned,
                    "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                    "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": c},
                    "ForAllValues:StringEquals": {
                        "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                    },
                },
            },
            {
                "Sid": "AllowScopedDeletion",
                "Effect": "Allow",
                "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
                "Resource": [f"arn:{p}:ec2:{r}:*:instance/*", f"arn:{p}:ec2:{r}:*:launch-template/*"],
                "Condition": {"StringEquals": owned, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}},
            },
        ),
        "iam-integration": doc(
            {
                "Sid": "AllowPassingInstanceRole",
                "Effect": "Allow",
                "Action": "iam:PassRole",
                "Resource": node_role_arn,
                "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
            },
            {
                "Sid": "AllowScopedInstanceProfileCreationActions",
                "Effect": "Allow",
                "Action": ["iam:CreateInstanceProfile"],
                "Resource": profile,
                "Condition": {
                    "StringEquals": {**request_owned, "aws:RequestTag/topology.kubernetes.io/region": r},
                    "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            },
            {
                "Sid": "AllowScopedInstanceProfileTagActions",
                "Effect": "Allow",
                "Action": ["iam:TagInstanceProfile"],
                "Resource": profile,
                "Condition": {
                    "StringEquals": {
                        **owned,
                        **region_tag,
                        **request_owned,
                        "aws:RequestTag/topology.kubernetes.io/region": r,
                    },
                    "StringLike": {
                        "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                        "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
                    },
                },
            },
            {
                "Sid": "AllowScopedInstanceProfileActions",
                "Effect": "Allow",
                "Action": [
                    "iam:AddRoleToInstanceProfile",
                    "iam:RemoveRoleFromInstanceProfile",
                    "iam:DeleteInstanceProfile",
                ],
                "Resource": profile,
                "Condition": {
                    "StringEquals": {**owned, **region_tag},
                    "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            },
        ),
        "eks-integration": doc(
            {
                "Sid": "AllowAPIServerEndpointDiscovery",
                "Effect": "Allow",
                "Action": "eks:DescribeCluster",
                "Resource": f"arn:{p}:eks:{r}:{a}:cluster/{c}",
            }
        ),
        "interruption": doc(
            {
                "Sid": "AllowInterruptionQueueActions",
                "Effect": "Allow",
                "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
                "Resource": queue_arn,
            }
        ),
        "resource-discovery": doc(
            {
                "Sid": "AllowRegionalReadActions",
                "Effect": "Allow",
                "Action": [
                    "ec2:DescribeCapacityReservations",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstances",
                    "ec2:DescribeInstanceStatus",
                    "ec2:DescribeInstanceTypeOfferings",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplates",
                    "ec2:DescribePlacementGroups",
                    "ec2:DescribeSecurityGroups",
                    "ec2:DescribeSpotPriceHistory",
                    "ec2:DescribeSubnets",
                ],
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:RequestedRegion": r}},
            },
            {
                "Sid": "AllowSSMReadActions",
                "Effect": "Allow",
                "Action": "ssm:GetParameter",
                "Resource": f"arn:{p}:ssm:{r}::parameter/aws/service/*",
            },
            {"Sid": "AllowPricingReadActions", "Effect": "Allow", "Action": "pricing:GetProducts", "Resource": "*"},
            {
                "Sid": "AllowUnscopedInstanceProfileListAction",
                "Effect": "Allow",
                "Action": "iam:ListInstanceProfiles",
                "Resource": "*",
            },
            {
                "Sid": "AllowInstanceProfileReadActions",
                "Effect": "Allow",
                "Action": "iam:GetInstanceProfile",
                "Resource": profile,
            },
        ),
        "zonal-shift": doc(
            {
                "Sid": "AllowZonalShiftStatusReadOnly",
                "Effect": "Allow",
                "Action": ["arc-zonal-shift:GetManagedResource"],
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"arc-zonal-shift:ResourceIdentifier": f"arn:{p}:eks:{r}:{a}:cluster/{c}"}
                },
            }
        ),
    }
