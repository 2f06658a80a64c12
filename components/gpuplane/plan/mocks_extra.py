"""More realistic answers: the remaining resource types gpuplane creates (EKS add-ons, access entries, pod
identity, IAM role policies, GCP routers and IAM members) and the resources and invokes a user's own program
typically puts around gpuplane's components (an `aws.eks.Cluster`, IAM policy documents, existing clusters
looked up with `get_cluster`, GCP networks and projects). Output names follow each provider's schema
(pulumi/pulumi-aws provider/cmd/pulumi-resource-aws/schema.json, pulumi/pulumi-gcp ...-gcp/schema.json);
values are derived from resource names, never random.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pulumi

from .mocks_aws import ACCOUNT, ZONES, eks_cluster_state, physical_name
from .mocks_base import State, digest, fake_ip
from .mocks_engine import engine_name

Outputs = Callable[[pulumi.runtime.MockResourceArgs], State]
Call = Callable[[Mapping[str, Any]], dict[str, Any]]
_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJncHVwbGFuZW9mZmxpbmVwbGFuQ0EKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="


def _uuid(*parts: str) -> str:
    d = digest(*parts)
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}"


def _eks_cluster(region: str, name: str, version: Any = None) -> State:
    """What `aws eks describe-cluster` reports (the `aws.eks.Cluster` resource and `aws.eks.get_cluster`)."""
    oidc = digest(name)[:32].upper()
    issuer = f"https://oidc.eks.{region}.amazonaws.com/id/{oidc}"
    core = {"endpoint": f"https://{oidc}.gr7.{region}.eks.amazonaws.com", "oidcIssuer": issuer[len("https://") :]}
    state = eks_cluster_state({"version": version, "core": core, "oidcIssuer": core["oidcIssuer"]}, name, region)
    return {
        **state,
        "arn": f"arn:aws:eks:{region}:{ACCOUNT}:cluster/{name}",
        "certificateAuthority": {"data": _CA},
        "certificateAuthorities": [{"data": _CA}],
        "clusterId": _uuid("eks", name),
        "roleArn": f"arn:aws:iam::{ACCOUNT}:role/{name}-cluster",
        "vpcConfig": {"clusterSecurityGroupId": f"sg-{digest(name, 'cluster')[:17]}", "vpcId": "vpc-0a1b2c3d4e5f6a7b8"},
    }


def _eks_cluster_resource(a: pulumi.runtime.MockResourceArgs, region: str) -> State:
    """An `aws.eks.Cluster`'s state: what EKS reports, with the VPC settings it was given (`vpcConfig.subnetIds`,
    `securityGroupIds`, endpoint access) kept beside the ones EKS computes (its security group, the VPC)."""
    state = {**a.inputs, **_eks_cluster(region, physical_name(a), a.inputs.get("version"))}
    state["vpcConfig"] = {**(a.inputs.get("vpcConfig") or {}), **state["vpcConfig"]}
    return state


def aws_outputs(region: Callable[[], str]) -> dict[str, Outputs]:
    def eks_arn(kind: str, a: pulumi.runtime.MockResourceArgs, *path: str) -> str:
        return f"arn:aws:eks:{region()}:{ACCOUNT}:{kind}/" + "/".join((*path, _uuid(a.typ, a.name)))

    def cluster_name(a: pulumi.runtime.MockResourceArgs) -> str:
        return str(a.inputs.get("clusterName", ""))

    def role_name(a: pulumi.runtime.MockResourceArgs) -> str:
        return str(a.inputs.get("role", "")).rsplit("/", 1)[-1]

    return {
        "aws:eks/cluster:Cluster": lambda a: _eks_cluster_resource(a, region()),
        "aws:eks/addon:Addon": lambda a: {
            **a.inputs,
            "arn": eks_arn("addon", a, cluster_name(a), str(a.inputs.get("addonName"))),
            "addonVersion": a.inputs.get("addonVersion") or "v1.0.0-eksbuild.1",
        },
        "aws:eks/accessEntry:AccessEntry": lambda a: {
            "type": "STANDARD",
            "kubernetesGroups": [],
            **a.inputs,
            "accessEntryArn": eks_arn("access-entry", a, cluster_name(a), "role", ACCOUNT, role_name(a)),
            "userName": str(a.inputs.get("principalArn", "")),
        },
        "aws:eks/podIdentityAssociation:PodIdentityAssociation": lambda a: {
            **a.inputs,
            "associationId": "a-" + digest(a.name)[:17],
            "associationArn": eks_arn("podidentityassociation", a, cluster_name(a)),
        },
        "aws:iam/rolePolicy:RolePolicy": lambda a: {**a.inputs, "name": physical_name(a)},
        "aws:iam/policy:Policy": lambda a: {
            **a.inputs,
            "name": physical_name(a),
            "arn": f"arn:aws:iam::{ACCOUNT}:policy/{physical_name(a)}",
            "policyId": "ANPA" + digest(a.name)[:17].upper(),
        },
        "aws:iam/instanceProfile:InstanceProfile": lambda a: {
            **a.inputs,
            "name": physical_name(a),
            "arn": f"arn:aws:iam::{ACCOUNT}:instance-profile/{physical_name(a)}",
            "uniqueId": "AIPA" + digest(a.name)[:17].upper(),
        },
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider": lambda a: {
            **a.inputs,
            "arn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/{str(a.inputs.get('url', '')).removeprefix('https://')}",
        },
        "aws:cloudwatch/eventTarget:EventTarget": lambda a: {"targetId": a.name, **a.inputs},
        "aws:s3/bucket:Bucket": lambda a: s3_bucket(a, region()),
        # the bucket sub-resources' only computed output besides `id` (the bucket's name) is `region` (pulumi-aws v7)
        **{
            f"aws:s3/{kind}:{kind[0].upper()}{kind[1:]}": lambda a: {**a.inputs, "region": region()}
            for kind in (
                "bucketPublicAccessBlock",
                "bucketOwnershipControls",
                "bucketServerSideEncryptionConfiguration",
            )
        },
    }


def s3_bucket_name(a: pulumi.runtime.MockResourceArgs) -> str:
    """`bucket`, else `bucketPrefix` and the 26 digits terraform's `id.PrefixedUniqueId` appends (a timestamp and a
    counter; a hash here), else Pulumi's autoname."""
    if a.inputs.get("bucket"):
        return str(a.inputs["bucket"])
    if a.inputs.get("bucketPrefix"):
        return f"{a.inputs['bucketPrefix']}{int(digest(a.typ, a.name)[:20], 16) % 10**26:026d}"
    return physical_name(a)


def s3_bucket(a: pulumi.runtime.MockResourceArgs, region: str) -> State:
    """What CreateBucket and the provider's read return (terraform-provider-aws internal/service/s3/bucket.go)."""
    name = s3_bucket_name(a)
    return {
        **a.inputs,
        "bucket": name,
        "id": name,
        "arn": f"arn:aws:s3:::{name}",
        "region": region,
        "bucketDomainName": f"{name}.s3.amazonaws.com",
        "bucketRegionalDomainName": f"{name}.s3.{region}.amazonaws.com",
        "hostedZoneId": "Z3BJ6K6RIION7M",
        "forceDestroy": a.inputs.get("forceDestroy", False),
    }


def gcp_outputs() -> dict[str, Outputs]:
    def link(a: pulumi.runtime.MockResourceArgs, where: str, kind: str) -> str:
        project = a.inputs.get("project", "project")
        return f"https://www.googleapis.com/compute/v1/projects/{project}/{where}/{kind}/{a.inputs.get('name', a.name)}"

    return {
        "gcp:compute/network:Network": lambda a: {
            **a.inputs,
            "selfLink": link(a, "global", "networks"),
            "numericId": str(int(digest(a.name)[:15], 16)),
        },
        "gcp:compute/subnetwork:Subnetwork": lambda a: {
            **a.inputs,
            "selfLink": link(a, f"regions/{a.inputs.get('region', 'us-central1')}", "subnetworks"),
            "gatewayAddress": str(a.inputs.get("ipCidrRange", "10.0.0.0/20")).split("/")[0][:-1] + "1",
        },
        "gcp:compute/router:Router": lambda a: {
            **a.inputs,
            "selfLink": link(a, f"regions/{a.inputs.get('region', 'us-central1')}", "routers"),
        },
        "gcp:projects/iAMMember:IAMMember": lambda a: {**a.inputs, "etag": "BwY" + digest(a.name)[:13]},
        "gcp:storage/bucketIAMMember:BucketIAMMember": lambda a: {**a.inputs, "etag": "CAE="},
        # google_project_service: the ID is `<project>/<service>`, no outputs besides the inputs
        "gcp:projects/service:Service": lambda a: {
            **a.inputs,
            "disableOnDestroy": a.inputs.get("disableOnDestroy", True),
        },
        "gcp:storage/bucket:Bucket": lambda a: {
            **a.inputs,
            "name": str(a.inputs.get("name") or engine_name(a.name)),
            "url": f"gs://{a.inputs.get('name') or engine_name(a.name)}",
            "selfLink": f"https://www.googleapis.com/storage/v1/b/{a.inputs.get('name') or engine_name(a.name)}",
            "projectNumber": int(digest(str(a.inputs.get("project", "project")))[:11], 16),
            "storageClass": a.inputs.get("storageClass", "STANDARD"),
        },
        "gcp:serviceaccount/iAMMember:IAMMember": lambda a: {**a.inputs, "etag": "BwY" + digest(a.name)[:13]},
    }


def tls_outputs() -> dict[str, Outputs]:
    """pulumi-tls's `PrivateKey` (pulumi/pulumi-tls provider/cmd/pulumi-resource-tls/schema.json): its key in
    PEM and OpenSSH forms and the public key's fingerprints, derived from the name (a stand-in, not a key)."""

    def private_key(a: pulumi.runtime.MockResourceArgs) -> State:
        d = digest(a.typ, a.name)
        algorithm = str(a.inputs.get("algorithm", "RSA"))
        body = f"gpuplane-offline-plan-{algorithm.lower()}-{d[:32]}"
        return {
            **a.inputs,
            "privateKeyPem": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
            "privateKeyPemPkcs8": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
            "privateKeyOpenssh": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n",
            "publicKeyPem": f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n",
            "publicKeyOpenssh": f"ssh-{algorithm.lower()} {body}\n",
            "publicKeyFingerprintMd5": ":".join(d[i : i + 2] for i in range(0, 32, 2)),
            "publicKeyFingerprintSha256": f"SHA256:{d[:43]}",
        }

    return {"tls:index/privateKey:PrivateKey": private_key}


def _policy_document(args: Mapping[str, Any]) -> dict[str, Any]:
    """`aws.iam.get_policy_document`: the statements as IAM JSON (hashicorp/terraform-provider-aws
    internal/service/iam/policy_document.go: single values stay scalars, principals map by type)."""

    def one(values: Any) -> Any:
        values = list(values or [])
        return values[0] if len(values) == 1 else values

    statements = []
    for s in args.get("statements") or []:
        out: dict[str, Any] = {"Sid": s.get("sid"), "Effect": s.get("effect", "Allow")}
        out["Action"], out["Resource"] = one(s.get("actions")), one(s.get("resources"))
        if s.get("principals"):
            out["Principal"] = {p["type"]: one(p.get("identifiers")) for p in s["principals"]}
        if s.get("conditions"):
            out["Condition"] = {c["test"]: {c["variable"]: one(c.get("values"))} for c in s["conditions"]}
        statements.append({k: v for k, v in out.items() if v not in (None, [])})
    doc = {"Version": args.get("version", "2012-10-17"), "Statement": statements}
    return {
        "id": str(int(digest(json.dumps(doc))[:8], 16)),
        "json": json.dumps(doc, indent=2),
        "minifiedJson": json.dumps(doc, separators=(",", ":")),
    }


def aws_calls(region: Callable[[], str]) -> dict[str, Call]:
    def subnets(args: Mapping[str, Any]) -> dict[str, Any]:
        chosen = {f.get("name"): list(f.get("values") or []) for f in args.get("filters") or []}
        if "subnet-id" in chosen:  # gpuplane's zonal pools: one of the given subnets per zone asked for
            return {"id": region(), "ids": chosen["subnet-id"][: len(chosen.get("availability-zone") or [0])]}
        key = json.dumps(args.get("filters") or args.get("tags") or {}, sort_keys=True)
        return {
            "id": region(),
            "ids": [f"subnet-{digest(key, str(i))[:17]}" for i in range(len(ZONES.get(region(), "abc")))],
        }

    return {
        "aws:index/getRegion:getRegion": lambda _: {
            "id": region(),
            "name": region(),
            "region": region(),
            "endpoint": f"ec2.{region()}.amazonaws.com",
            "description": region(),
        },
        "aws:iam/getPolicyDocument:getPolicyDocument": _policy_document,
        "aws:eks/getCluster:getCluster": lambda args: {"id": args["name"], **_eks_cluster(region(), str(args["name"]))},
        "aws:ec2/getSubnets:getSubnets": subnets,
        "aws:ec2/getVpc:getVpc": lambda args: {
            "id": args.get("id") or f"vpc-{digest(json.dumps(dict(args), sort_keys=True))[:17]}",
            "cidrBlock": "10.0.0.0/16",
            "arn": f"arn:aws:ec2:{region()}:{ACCOUNT}:vpc/{args.get('id') or 'vpc'}",
        },
        "aws:ssm/getParameter:getParameter": lambda args: {
            "id": args["name"],
            "name": args["name"],
            "type": "String",
            "value": f"ami-{digest(str(args['name']))[:17]}",
            "version": 1,
        },
        "aws:ec2/getAmi:getAmi": lambda args: {"id": f"ami-{digest(json.dumps(dict(args), sort_keys=True))[:17]}"},
    }


def gcp_calls() -> dict[str, Call]:
    def project(args: Mapping[str, Any]) -> str:
        return str(args.get("project") or args.get("projectId") or "project")

    def gke(args: Mapping[str, Any]) -> dict[str, Any]:
        name, loc = str(args["name"]), str(args.get("location", "us-central1"))
        return {
            "id": f"projects/{project(args)}/locations/{loc}/clusters/{name}",
            "name": name,
            "location": loc,
            "project": project(args),
            "endpoint": fake_ip(name),
            "masterAuths": [{"clusterCaCertificate": _CA}],
            "masterVersion": "1.33.5-gke.1201000",
            "selfLink": f"https://container.googleapis.com/v1/projects/{project(args)}/locations/{loc}/clusters/{name}",
        }

    return {
        "gcp:organizations/getProject:getProject": lambda args: {
            "id": f"projects/{project(args)}",
            "projectId": project(args),
            "name": project(args),
            "number": str(int(digest(project(args))[:11], 16)),
        },
        "gcp:organizations/getClientConfig:getClientConfig": lambda _: {
            "id": "offline",
            "project": "project",
            "region": "us-central1",
            "zone": "us-central1-a",
            "accessToken": "offline-plan-token",
        },
        "gcp:container/getCluster:getCluster": gke,
        "gcp:container/getEngineVersions:getEngineVersions": lambda args: {
            "id": str(args.get("location", "us-central1")),
            "latestMasterVersion": "1.33.5-gke.1201000",
            "latestNodeVersion": "1.33.5-gke.1201000",
            "validMasterVersions": ["1.33.5-gke.1201000", "1.32.9-gke.1108000"],
            "validNodeVersions": ["1.33.5-gke.1201000", "1.32.9-gke.1108000"],
            "defaultClusterVersion": "1.33.5-gke.1201000",
            "releaseChannelDefaultVersion": {"REGULAR": "1.33.5-gke.1201000", "STABLE": "1.32.9-gke.1108000"},
        },
        "gcp:compute/getZones:getZones": lambda args: {
            "id": str(args.get("region", "us-central1")),
            "names": [f"{args.get('region', 'us-central1')}-{z}" for z in "abc"],
        },
    }


def pulumiservice_outputs() -> dict[str, Outputs]:
    """pulumi-pulumiservice (pulumi/pulumi-pulumiservice provider/cmd/pulumi-resource-pulumiservice/schema.json; the
    resources' `properties`): `DeploymentSettings` and `Stack` output their inputs; a `DriftSchedule` adds the
    `scheduleId` Pulumi Cloud assigns and `autoRemediate` defaults to false (provider/pkg/resources/drift_schedules.go).
    An AWS OIDC `duration` comes back as Go's `time.Duration.String()` (deployment_settings.go Check)."""
    return {
        "pulumiservice:index:DeploymentSettings": lambda a: dict(a.inputs),
        "pulumiservice:index:DriftSchedule": lambda a: {
            "autoRemediate": False,
            **a.inputs,
            "scheduleId": _uuid(a.typ, a.name),
        },
        "pulumiservice:index:Stack": lambda a: dict(a.inputs),
    }


PULUMISERVICE_IDS = (
    "pulumiservice:index:DeploymentSettings",
    "pulumiservice:index:DriftSchedule",
    "pulumiservice:index:Stack",
)
"""The pulumi-pulumiservice types whose IDs `pulumiservice_id` makes."""


def pulumiservice_id(a: pulumi.runtime.MockResourceArgs, state: State) -> str:
    """The provider's IDs: `<org>/<project>/<stack>` for a stack and its deployment settings, and
    `<org>/<project>/<stack>/drift/<scheduleId>` for a drift schedule (resources/stack.go `stackResourceID`,
    deployment_settings.go Create, ttl_schedules.go `stackScheduleID`)."""
    i = a.inputs
    if a.typ == "pulumiservice:index:Stack":
        return f"{i.get('organizationName')}/{i.get('projectName')}/{i.get('stackName')}"
    stack = f"{i.get('organization')}/{i.get('project')}/{i.get('stack')}"
    return f"{stack}/drift/{state['scheduleId']}" if a.typ == "pulumiservice:index:DriftSchedule" else stack
