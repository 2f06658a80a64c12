"""AWS and pulumi-eks answers for the offline plan: IDs, ARNs and the outputs EKS would report."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi

from ..catalog.regions import aws_partition
from .cloud import Cloud
from .mocks_base import State, digest
from .mocks_engine import engine_name

ACCOUNT = "123456789012"
"""The AWS documentation's example account ID."""

ZONES: Mapping[str, str] = {"us-east-1": "abcdef", "us-west-2": "abcd", "eu-west-1": "abc", "ap-northeast-1": "acd"}
"""Region -> AZ letters; other regions get a, b, c."""

ID_PREFIX: Mapping[str, str] = {
    "aws:ec2/vpc:Vpc": "vpc",
    "aws:ec2/subnet:Subnet": "subnet",
    "aws:ec2/internetGateway:InternetGateway": "igw",
    "aws:ec2/natGateway:NatGateway": "nat",
    "aws:ec2/eip:Eip": "eipalloc",
    "aws:ec2/routeTable:RouteTable": "rtb",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt",
    "aws:ec2/securityGroup:SecurityGroup": "sg",
}
"""EC2 resource type -> the prefix of the IDs EC2 assigns."""


def ec2_id(typ: str, name: str) -> str:
    return f"{ID_PREFIX[typ]}-{digest(typ, name)[:17]}"


def physical_name(a: pulumi.runtime.MockResourceArgs) -> str:
    """Pulumi auto-names resources `<name>-<7 hex>` unless a name is given."""
    return str(a.inputs.get("name") or engine_name(a.name))


def _ec2(a: pulumi.runtime.MockResourceArgs, region: str) -> State:
    rid = ec2_id(a.typ, a.name)
    state: State = {**a.inputs, "id": rid, "arn": f"arn:aws:ec2:{region}:{ACCOUNT}:{rid}"}
    if a.typ == "aws:ec2/launchTemplate:LaunchTemplate":
        state.update(
            {
                "latestVersion": 1,
                "defaultVersion": 1,
                "name": f"{a.inputs.get('namePrefix', a.name)}{digest(a.name)[:20]}",
            }
        )
    if a.typ == "aws:ec2/eip:Eip":
        state["publicIp"] = f"198.51.100.{int(digest(a.name)[:4], 16) % 254 + 1}"
    return state


def _role(a: pulumi.runtime.MockResourceArgs) -> State:
    name = physical_name(a)
    return {
        **a.inputs,
        "name": name,
        "arn": f"arn:aws:iam::{ACCOUNT}:role/{name}",
        "uniqueId": "AROA" + digest(name)[:17].upper(),
    }


def _kms_key(region: str) -> Callable[[pulumi.runtime.MockResourceArgs], State]:
    def outputs(a: pulumi.runtime.MockResourceArgs) -> State:
        d = digest("kms", a.name)
        key_id = f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}"
        return {
            **a.inputs,
            "id": key_id,
            "keyId": key_id,
            "arn": f"arn:aws:kms:{region}:{ACCOUNT}:key/{key_id}",
            "keyUsage": "ENCRYPT_DECRYPT",
            "customerMasterKeySpec": "SYMMETRIC_DEFAULT",
        }

    return outputs


def _kms_alias(region: str) -> Callable[[pulumi.runtime.MockResourceArgs], State]:
    def outputs(a: pulumi.runtime.MockResourceArgs) -> State:
        name = str(a.inputs.get("name"))
        return {**a.inputs, "id": name, "arn": f"arn:aws:kms:{region}:{ACCOUNT}:{name}"}

    return outputs


def _eks_cluster(region: str) -> Callable[[pulumi.runtime.MockResourceArgs], State]:
    def outputs(a: pulumi.runtime.MockResourceArgs) -> State:
        name = eks_cluster_name(a.inputs, a.name)
        oidc_id = digest(name)[:32].upper()
        issuer = f"oidc.eks.{region}.amazonaws.com/id/{oidc_id}"
        endpoint = f"https://{oidc_id}.gr7.{region}.eks.amazonaws.com"
        # pulumi-eks nodejs/eks/cluster/cluster.ts generateKubeconfig: cluster `kubernetes`, context and user `aws`
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "kubernetes",
                    "cluster": {"server": endpoint, "certificate-authority-data": "LS0tLS1CRUdJTi0tLS0t"},
                }
            ],
            "contexts": [{"name": "aws", "context": {"cluster": "kubernetes", "user": "aws"}}],
            "current-context": "aws",
            "users": [
                {
                    "name": "aws",
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": ["eks", "get-token", "--cluster-name", name, "--output", "json"],
                        }
                    },
                }
            ],
        }
        import json

        return {
            **a.inputs,
            "kubeconfig": kubeconfig,
            "kubeconfigJson": json.dumps(kubeconfig),
            "oidcIssuer": issuer,
            "oidcProviderUrl": issuer,
            "oidcProviderArn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/{issuer}",
            "clusterSecurityGroupId": pulumi_eks_cluster_security_group(name),
            "nodeSecurityGroupId": f"sg-{digest(name, 'node')[:17]}",
            "instanceRoles": [],
            # pulumi-eks nodejs/eks/cluster/cluster.ts: `subnetIds` is the given `subnetIds`, else the public
            # and private ones together; `privateSubnetIds` / `publicSubnetIds` only as given.
            "core": {
                "endpoint": endpoint,
                "vpcId": a.inputs.get("vpcId"),
                "subnetIds": list(
                    a.inputs.get("subnetIds")
                    or [*(a.inputs.get("publicSubnetIds") or []), *(a.inputs.get("privateSubnetIds") or [])]
                ),
                **{k: a.inputs[k] for k in ("privateSubnetIds", "publicSubnetIds") if k in a.inputs},
                "tags": a.inputs.get("tags", {}),
            },
        }

    return outputs


def pulumi_eks_cluster_security_group(cluster: str) -> str:
    """The ID of pulumi-eks's own `eksClusterSecurityGroup` (the component's `clusterSecurityGroupId`)."""
    return f"sg-{digest(cluster, 'cluster')[:17]}"


def eks_cluster_security_group(cluster: str) -> str:
    """The ID of the cluster security group EKS itself creates (`eksCluster.vpcConfig.clusterSecurityGroupId`)."""
    return f"sg-{digest(cluster, 'eks-created')[:17]}"


DEFAULT_EKS_VERSION = "1.33"
"""What EKS picks when a cluster is created without a version (the plan always passes one)."""


def eks_cluster_name(inputs: Mapping[str, Any], logical: str) -> str:
    """The EKS cluster's name: pulumi-eks's `name`, else the engine's autoname of the `aws.eks.Cluster` it
    creates as `<logical>-eksCluster` (pulumi-eks nodejs/eks/cluster/cluster.ts)."""
    return str(inputs.get("name") or engine_name(f"{logical}-eksCluster"))


def eks_cluster_state(component: State, name: str, region: str) -> State:
    """What AWS reports for the `aws.eks.Cluster` inside pulumi-eks's Cluster (its `eksCluster` output,
    named `<name>-eksCluster` by pulumi-eks nodejs/eks/cluster/cluster.ts): name, version, endpoint, OIDC issuer."""
    core = component.get("core") or {}
    return {
        "name": name,
        "version": str(component.get("version") or DEFAULT_EKS_VERSION),
        "arn": f"arn:aws:eks:{region}:{ACCOUNT}:cluster/{name}",
        "endpoint": core.get("endpoint", ""),
        "certificateAuthority": {"data": "LS0tLS1CRUdJTi0tLS0t"},
        "status": "ACTIVE",
        "platformVersion": "eks.1",
        "identities": [{"oidcs": [{"issuer": f"https://{component.get('oidcIssuer', '')}"}]}],
        "tags": component.get("tags", {}),
        "vpcConfig": {
            "clusterSecurityGroupId": eks_cluster_security_group(name),
            "securityGroupIds": [str(component.get("clusterSecurityGroupId", ""))],
            "subnetIds": list(core.get("subnetIds") or []),
            "vpcId": core.get("vpcId"),
        },
    }


def physical_node_group_name(inputs: Mapping[str, Any], logical: str) -> str:
    """The node group's name as EKS reports it: `nodeGroupName`, or `nodeGroupNamePrefix` plus the 26
    characters terraform-plugin-sdk's `id.PrefixedUniqueId` appends: an 18-digit timestamp and an
    8-hex-digit counter (here both digests of the logical name; the counter always shows a hex letter, as
    real ones soon do)."""
    if "nodeGroupName" in inputs:
        return str(inputs["nodeGroupName"])
    if "nodeGroupNamePrefix" in inputs:
        stamp = str(int(digest(logical), 16))[:18].rjust(18, "0")
        return str(inputs["nodeGroupNamePrefix"]) + stamp + digest(logical, "counter")[:7] + "a"
    return engine_name(logical)


def node_group_state(a: pulumi.runtime.MockResourceArgs, cluster: str, region: str) -> State:
    """What EKS reports for the `aws.eks.NodeGroup` inside a ManagedNodeGroup: its Auto Scaling group."""
    ng = physical_node_group_name(a.inputs, a.name)
    asg = f"eks-{ng}-{digest(ng)[:8]}-{digest(ng)[8:12]}-{digest(ng)[12:16]}"
    return {
        "nodeGroupName": ng,
        "clusterName": cluster,
        "status": "ACTIVE",
        "arn": f"arn:aws:eks:{region}:{ACCOUNT}:nodegroup/{cluster}/{ng}/{digest(ng)[:8]}",
        "resources": [{"autoscalingGroups": [{"name": asg}], "remoteAccessSecurityGroupId": ""}],
    }


def node_group_reads(cloud: Callable[[], Cloud]) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
    """The EKS node groups that exist (`Cloud`), as the provider's `eks.getNodeGroups` / `eks.getNodeGroup`
    data sources return them (terraform-provider-aws internal/service/eks/node_groups_data_source.go,
    node_group_data_source.go: ListNodegroups, DescribeNodegroup)."""

    def names(args: Mapping[str, Any]) -> dict[str, Any]:
        cluster = str(args["clusterName"])
        return {"id": cluster, "clusterName": cluster, "names": sorted(cloud().node_groups.get(cluster, {}))}

    def one(args: Mapping[str, Any]) -> dict[str, Any]:
        cluster, name = str(args["clusterName"]), str(args["nodeGroupName"])
        group = cloud().node_groups.get(cluster, {}).get(name)
        if group is None:  # as DescribeNodegroup answers a name that does not exist
            raise ValueError(f"reading EKS Node Group ({cluster}:{name}): couldn't find resource")
        lt = group.get("launchTemplate")
        return {
            "id": f"{cluster}:{name}",
            "clusterName": cluster,
            "nodeGroupName": name,
            "status": "ACTIVE",
            "scalingConfigs": [dict(group.get("scalingConfig") or {})],
            "version": group.get("version"),
            "launchTemplates": [{"id": lt.get("id"), "name": "", "version": str(lt.get("version"))}] if lt else [],
        }

    return {"aws:eks/getNodeGroups:getNodeGroups": names, "aws:eks/getNodeGroup:getNodeGroup": one}


def calls(region: Callable[[], str]) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
    """Invoke token -> answer."""

    def zones(args: Mapping[str, Any]) -> dict[str, Any]:
        r = str(args.get("region") or region())
        letters = ZONES.get(r, "abc")
        return {
            "id": r,
            "region": r,
            "state": "available",
            "names": [f"{r}{x}" for x in letters],
            "zoneIds": [f"{r.split('-')[0]}{r.split('-')[1][0]}{r[-1]}-az{i + 1}" for i in range(len(letters))],
            "groupNames": [r] * len(letters),
        }

    return {
        "aws:index/getAvailabilityZones:getAvailabilityZones": zones,
        # The partition of the provider's region (aws, aws-us-gov), as the provider reports it.
        "aws:index/getPartition:getPartition": lambda _: {
            "id": aws_partition(region()),
            "partition": aws_partition(region()),
            "dnsSuffix": "amazonaws.com",
            "reverseDnsPrefix": "com.amazonaws",
        },
        "aws:index/getCallerIdentity:getCallerIdentity": lambda _: {
            "id": ACCOUNT,
            "accountId": ACCOUNT,
            "arn": f"arn:aws:iam::{ACCOUNT}:user/gpuplane-plan",
            "userId": "AIDA" + digest("plan")[:17].upper(),
        },
    }


def _queue(region: str) -> Callable[[pulumi.runtime.MockResourceArgs], State]:
    def outputs(a: pulumi.runtime.MockResourceArgs) -> State:
        name = physical_name(a)
        return {
            **a.inputs,
            "name": name,
            "arn": f"arn:aws:sqs:{region}:{ACCOUNT}:{name}",
            "url": f"https://sqs.{region}.amazonaws.com/{ACCOUNT}/{name}",
        }

    return outputs


def _named(service: str, kind: str, region: str) -> Callable[[pulumi.runtime.MockResourceArgs], State]:
    """Auto-named resources whose ARN embeds their name (EventBridge rules, IAM policies, ...)."""

    def outputs(a: pulumi.runtime.MockResourceArgs) -> State:
        name = physical_name(a)
        where = "" if service == "iam" else region
        return {**a.inputs, "name": name, "arn": f"arn:aws:{service}:{where}:{ACCOUNT}:{kind}/{name}"}

    return outputs


def outputs(region: Callable[[], str]) -> dict[str, Callable[[pulumi.runtime.MockResourceArgs], State]]:
    """Type token -> outputs, for AWS and pulumi-eks resources."""
    table: dict[str, Callable[[pulumi.runtime.MockResourceArgs], State]] = {
        t: lambda a: _ec2(a, region()) for t in ID_PREFIX
    }
    table["aws:iam/role:Role"] = _role
    table["aws:sqs/queue:Queue"] = lambda a: _queue(region())(a)
    table["aws:cloudwatch/eventRule:EventRule"] = lambda a: _named("events", "rule", region())(a)
    table["aws:kms/key:Key"] = lambda a: _kms_key(region())(a)
    table["aws:kms/alias:Alias"] = lambda a: _kms_alias(region())(a)
    table["eks:index:Cluster"] = lambda a: _eks_cluster(region())(a)
    # A node group gpuplane creates itself (`EksGpuNodeGroups`, on a cluster it did not create).
    table["aws:eks/nodeGroup:NodeGroup"] = lambda a: {
        **a.inputs,
        **node_group_state(a, str(a.inputs["clusterName"]), region()),
    }
    return table
