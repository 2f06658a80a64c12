"""The hardened baseline, read from every shipped stack's planned graph (fleets included).

AWS: IMDSv2 and encrypted root volumes on every node source, KMS envelope encryption of secrets,
nodes in private subnets, no `Action: "*"` and only the listed `Resource: "*"` statements.
GKE: shielded nodes (secure boot + integrity monitoring), Workload Identity, a dedicated node service
account, private nodes (no public IPs) with a Cloud NAT for egress, master authorized networks.
Both: GPU nodes tainted, kubeconfig outputs secret, privileged pods and hostPath only in the listed
NVIDIA / DCGM / node-metrics components, each in its own namespace.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gpuplane.aws.render import NODE_POLICIES
from gpuplane.plan import Plan, PlannedResource, load

from .conftest import GCP_STACKS, ROOT, STACKS, cached_plan, on_bottlerocket
from .graph import RELEASE, kube_objects

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "eks:index:ManagedNodeGroup"
EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
KARPENTER_POOL = "kubernetes:karpenter.sh/v1:NodePool"
EKS = "eks:index:Cluster"
GKE = "gcp:container/cluster:Cluster"
GKE_POOL = "gcp:container/nodePool:NodePool"
GPU_TAINT = "nvidia.com/gpu"

RESOURCE_STAR: dict[str, tuple[frozenset[str], str]] = {
    "Discover": (
        frozenset(
            {
                "autoscaling:DescribeAutoScalingGroups",
                "autoscaling:DescribeAutoScalingInstances",
                "autoscaling:DescribeLaunchConfigurations",
                "autoscaling:DescribeScalingActivities",
                "autoscaling:DescribeTags",
                "ec2:DescribeImages",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplateVersions",
                "ec2:GetInstanceTypesFromInstanceRequirements",
                "eks:DescribeNodegroup",
            }
        ),
        "cluster-autoscaler's read-only discovery: these Describe/Get calls take no resource ARN",
    ),
    "ScaleOwnNodeGroups": (
        frozenset({"autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"}),
        "scoped by condition to Auto Scaling groups tagged as this cluster's (ASG names are EKS-generated)",
    ),
    "AllowRegionalReadActions": (
        frozenset(
            {
                "ec2:DescribeCapacityReservations",
                "ec2:DescribeImages",
                "ec2:DescribeInstanceStatus",
                "ec2:DescribeInstanceTypeOfferings",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeInstances",
                "ec2:DescribeLaunchTemplates",
                "ec2:DescribePlacementGroups",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeSpotPriceHistory",
                "ec2:DescribeSubnets",
            }
        ),
        "Karpenter's read-only EC2 discovery, limited by condition to the cluster's region (upstream policy)",
    ),
    "AllowPricingReadActions": (frozenset({"pricing:GetProducts"}), "the Pricing API has no resources"),
    "AllowUnscopedInstanceProfileListAction": (
        frozenset({"iam:ListInstanceProfiles"}),
        "List* takes no resource ARN; Karpenter finds the profiles it made (upstream policy)",
    ),
    "AllowZonalShiftStatusReadOnly": (
        frozenset({"arc-zonal-shift:GetManagedResource"}),
        "scoped by condition to this cluster's ARN (upstream policy)",
    ),
}
"""Statements (by Sid) allowed on `Resource: "*"`: their exact actions and why. Everything else names ARNs."""

PRIVILEGED: dict[str, tuple[tuple[str, ...], str]] = {
    "gpu-operator": (
        (),
        "driver/toolkit/device-plugin/DCGM DaemonSets load kernel modules and mount /dev, /run/nvidia",
    ),
    "dcgm-exporter": ((), "DCGM reads every GPU through /dev and the host driver (hostPath on GKE)"),
    "dra-driver-nvidia-gpu": (
        (),
        "its kubelet plugin is privileged (chart 0.4.1 kubeletPlugin.containers.*.securityContext) and mounts the "
        "host driver root, /dev and the kubelet's plugin directories",
    ),
    "kube-prometheus-stack": (
        ("prometheus-node-exporter", "namespaceOverride"),
        "only its node-exporter, which reads the host's /proc and /sys (hostPath, hostNetwork, hostPID)",
    ),
}
"""Helm charts allowed privileged pods or hostPath, with where in their values the namespace of those pods
is set (empty: the release's namespace), and why. Each such namespace (PSA `privileged`) holds nothing else."""


PRIVILEGED_NAMESPACES: dict[str, str] = {
    "gpuplane-validation": "gpuplane:validation's DCGM diagnostics and NCCL test run as root with the node's device "
    "nodes (NVIDIA's DCGM DaemonSet and Google's GPU health check do too) and, on GKE GPUDirect, the node's gIB "
    "and NVIDIA libraries (hostPath); it holds only those checks' Jobs, their Services and ssh key Secrets",
}
"""gpuplane's own namespaces that enforce Pod Security `privileged`, and why."""
CHECK_LABEL = "gpuplane.io/check"


PRIVILEGED_OBJECTS: dict[tuple[str, str, str], str] = {
    ("DaemonSet", "kube-system", "nccl-rdma-installer"): "Google's NCCL gIB plugin installer for GPUDirect RDMA "
    "(container-engine-accelerators gpudirect-rdma/nccl-rdma-installer.yaml): copies the plugin to the host",
    ("DaemonSet", "kube-system", "nccl-tcpxo-installer"): "Google's NCCL TCPXO plugin installer for A3 Mega "
    "(gpudirect-tcpxo/nccl-tcpxo-installer.yaml): loads the import-helper module and binds aperture devices",
    ("DaemonSet", "kube-system", "nvidia-driver-installer"): "GKE's NVIDIA driver installer for pools with GKE's "
    "installation disabled (DRA; container-engine-accelerators nvidia-driver-installer/cos/daemonset-preloaded.yaml)",
    ("DaemonSet", "kube-system", "nvidia-driver-installer-a4x"): "the same for A4X machines "
    "(nvidia-driver-installer/cos/daemonset-preloaded-latest-a4x.yaml)",
}
"""gpuplane's own objects allowed host access (vendor manifests applied as published), and why."""


def node_subnets(stack: str) -> list[str]:
    """The stack file's `aws.nodeSubnetIds` (private subnets for GPU node groups only)."""
    from .conftest import load_stack_config

    return list((load_stack_config(stack).get("gpuplane:aws") or {}).get("nodeSubnetIds") or [])


def of(plan: Plan, *types: str) -> list[PlannedResource]:
    return [r for r in plan.resources if r.type in types]


def chart_name(release: PlannedResource) -> str:
    return str(release.inputs["chart"]).rsplit("/", 1)[-1]


def policy_statements(plan: Plan) -> Iterator[tuple[str, dict[str, Any]]]:
    """(resource name, statement) of every IAM or resource policy document in the graph."""
    for r in plan.resources:
        for key in ("policy", "assumeRolePolicy"):
            doc = r.inputs.get(key)
            if isinstance(doc, str) and doc.startswith("{"):
                for stmt in json.loads(doc)["Statement"]:
                    yield r.name, stmt


def as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


VARIANTS = [*STACKS, "aws-managed+bottlerocket", "aws-karpenter+bottlerocket"]
"""Every shipped stack, plus the two EKS node sources on the other NVIDIA image."""


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    out = {s: cached_plan(load(s, ROOT)) for s in STACKS}
    for variant in VARIANTS[len(STACKS) :]:
        out[variant] = cached_plan(on_bottlerocket(variant.split("+")[0]))
    return out


def encrypted(mapping: dict[str, Any], flag: object, snapshot_key: str) -> bool:
    """An encrypted volume; or exactly the one exception, Bottlerocket's `/dev/xvdb` restored from an image-cache
    snapshot, which takes the snapshot's encryption and may carry no `encrypted` value (EC2 launch templates and
    the EC2NodeClass CRD: "If you are creating a volume from a snapshot, you can't specify an encryption value")."""
    ebs = mapping["ebs"]
    if snapshot_key in ebs:
        return mapping["deviceName"] == "/dev/xvdb" and "encrypted" not in ebs
    return bool(ebs.get("encrypted") == flag)


@pytest.mark.parametrize("stack", VARIANTS)
def test_aws_nodes_imdsv2_encrypted_private(stack: str, plans: dict[str, Plan]) -> None:
    plan = plans[stack]
    clusters = of(plan, EKS)
    if not clusters:
        assert not of(plan, LAUNCH_TEMPLATE, NODE_GROUP, EC2_NODE_CLASS)
        return
    keys = {k.name: k for k in of(plan, "aws:kms/key:Key")}
    for c in clusters:
        key = keys[f"{c.name.removesuffix('-eks')}-secrets-key"]
        assert c.inputs["encryptionConfigKeyArn"].startswith("arn:aws:kms:"), "secrets are not KMS-encrypted"
        assert key.inputs["enableKeyRotation"] is True and key.inputs["deletionWindowInDays"] == 30
        assert c.inputs["nodeAssociatePublicIpAddress"] is False
        assert not set(c.inputs["privateSubnetIds"]) & set(c.inputs.get("publicSubnetIds", []))
    for lt in of(plan, LAUNCH_TEMPLATE):
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required", lt.name
        assert lt.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1, lt.name
        mapped = {m["deviceName"] for m in lt.inputs["blockDeviceMappings"]}
        assert all(encrypted(m, "true", "snapshotId") for m in lt.inputs["blockDeviceMappings"]), lt.name
        assert "/dev/xvda" in mapped, f"{lt.name}: the root volume is left to the AMI's default"
        if "bottlerocket" in stack and "-system-" not in lt.name:
            assert mapped == {"/dev/xvda", "/dev/xvdb"}, lt.name
    lts = {f"{lt.name}" for lt in of(plan, LAUNCH_TEMPLATE)}
    private = {s for c in clusters for s in c.inputs["privateSubnetIds"]}
    # the stack's node-only subnets (aws.nodeSubnetIds: a Local Zone's) are private too, and for GPU groups only
    node_only = set(node_subnets(stack.split("+")[0]))
    for ng in of(plan, NODE_GROUP):
        assert not (node_only & set(ng.inputs["subnetIds"]) and ng.name.endswith("-system")), ng.name
        private_here = private | node_only
        assert f"{ng.name}-lt" in lts and ng.inputs["launchTemplate"]["id"].startswith("lt-"), ng.name
        assert set(ng.inputs["subnetIds"]) <= private_here, f"{ng.name} has nodes outside the private subnets"
    for nc in of(plan, EC2_NODE_CLASS):
        spec = nc.inputs["spec"]
        assert spec["metadataOptions"]["httpTokens"] == "required", nc.name
        assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1, nc.name
        assert all(encrypted(m, True, "snapshotID") for m in spec["blockDeviceMappings"]), nc.name
        mapped = {m["deviceName"] for m in spec["blockDeviceMappings"]}
        family = spec["amiSelectorTerms"][0]["alias"].split("@")[0]
        assert mapped == ({"/dev/xvda", "/dev/xvdb"} if family == "bottlerocket" else {"/dev/xvda"}), nc.name
        tag = spec["subnetSelectorTerms"][0]["tags"]
        subnets = [s for s in of(plan, "aws:ec2/subnet:Subnet") if tag.items() <= s.inputs["tags"].items()]
        assert subnets and all("-private-" in s.name for s in subnets), "Karpenter may pick public subnets"
    if any(c.inputs.get("autoMode") for c in clusters):  # AWS runs the nodes: IMDSv2 and encryption are AWS's
        assert not of(plan, LAUNCH_TEMPLATE, NODE_GROUP)
        # ... and its built-in NodeClass uses the cluster's subnets: only private ones are given.
        assert all(not c.inputs.get("publicSubnetIds") for c in clusters)
    else:
        assert of(plan, LAUNCH_TEMPLATE), "no node source was checked"


MANAGED_POLICIES: dict[str, str] = {
    "AmazonEKSWorkerNodePolicy": "kubelet's EKS/EC2 Describe calls (AWS-managed; node roles need it)",
    "AmazonEKS_CNI_Policy": "the VPC CNI assigns pod IPs through ENI calls on any instance of the node",
    "AmazonEC2ContainerRegistryPullOnly": "pull-only ECR access for images (no repository listing)",
}
"""AWS-managed policies gpuplane attaches (they grant `Resource: "*"` of their own), with why."""


@pytest.mark.parametrize("stack", VARIANTS)
def test_attached_managed_policies_are_listed(stack: str, plans: dict[str, Plan]) -> None:
    attached = {
        r.inputs["policyArn"].rsplit("/", 1)[1]
        for r in of(plans[stack], "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    }
    assert attached <= set(MANAGED_POLICIES), attached - set(MANAGED_POLICIES)
    assert set(MANAGED_POLICIES) == set(NODE_POLICIES)
    assert "AmazonSSMManagedInstanceCore" not in attached  # only with aws.ssmAccess


@pytest.mark.parametrize("stack", VARIANTS)
def test_iam_has_no_wildcard_actions_and_only_listed_wildcard_resources(stack: str, plans: dict[str, Plan]) -> None:
    seen = 0
    for name, stmt in policy_statements(plans[stack]):
        seen += 1
        actions = as_list(stmt.get("Action", []))
        if stmt.get("Effect") == "Deny":  # a wildcard in a Deny (e.g. `sqs:*` over plain HTTP) only narrows
            continue
        assert "*" not in actions and not any(a.endswith(":*") for a in actions), (name, stmt)
        if "*" in as_list(stmt.get("Resource", [])):
            listed = RESOURCE_STAR.get(stmt.get("Sid", ""))
            assert listed and listed[0] == frozenset(actions), f"{name}: Resource '*' for {actions} is not justified"
    if any(not c.inputs.get("autoMode") for c in of(plans[stack], EKS)):  # Auto Mode: AWS makes the roles
        assert seen > 0


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_gke_nodes_shielded_workload_identity_own_service_account(stack: str, plans: dict[str, Plan]) -> None:
    plan = plans[stack]
    accounts = {r.name: r for r in of(plan, "gcp:serviceaccount/account:Account")}
    for c in of(plan, GKE):
        project = c.inputs["project"]
        if c.inputs.get("enableAutopilot"):
            sa = c.inputs["clusterAutoscaling"]["autoProvisioningDefaults"]["serviceAccount"]
        else:
            assert c.inputs["enableShieldedNodes"] is True
            assert c.inputs["workloadIdentityConfig"]["workloadPool"] == f"{project}.svc.id.goog"
            sa = c.inputs["nodeConfig"]["serviceAccount"]
        assert sa.endswith(f"@{project}.iam.gserviceaccount.com") and "compute@developer" not in sa
        assert sa.split("@")[0] in {a.inputs["accountId"] for a in accounts.values()}
    for pool in of(plan, GKE_POOL):
        node = pool.inputs["nodeConfig"]
        assert node["shieldedInstanceConfig"] == {"enableIntegrityMonitoring": True, "enableSecureBoot": True}
        assert node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert node["serviceAccount"].split("@")[0] in {a.inputs["accountId"] for a in accounts.values()}
    members = of(plan, "gcp:projects/iAMMember:IAMMember")
    roles = {m.inputs["role"] for m in members if "-keda-" not in m.name}
    # Exactly GKE's documented minimum for a node service account, plus pulling images from Artifact Registry.
    minimum = {"roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader"}
    assert roles == (minimum if of(plan, GKE) else set()), roles
    # KEDA's operator, where it queries GKE Managed Prometheus, reads Cloud Monitoring and nothing else.
    assert {m.inputs["role"] for m in members if "-keda-" in m.name} <= {"roles/monitoring.viewer"}
    for c in of(plan, GKE):
        nap = c.inputs.get("clusterAutoscaling", {})
        if nap.get("enabled") and not c.inputs.get("enableAutopilot"):
            defaults = nap["autoProvisioningDefaults"]
            assert defaults["shieldedInstanceConfig"] == {"enableIntegrityMonitoring": True, "enableSecureBoot": True}
            assert defaults["serviceAccount"].split("@")[0] in {a.inputs["accountId"] for a in accounts.values()}


@pytest.mark.parametrize("stack", GCP_STACKS)
def test_gke_nodes_are_private_with_cloud_nat_egress(stack: str, plans: dict[str, Plan]) -> None:
    """Standard, NAP and Autopilot alike: nodes get internal IPs only (as EKS nodes in private subnets),
    a Cloud NAT in the cluster's project, region and network gives them egress, and the API endpoint
    lists its authorized networks."""
    plan = plans[stack]
    routers = {r.inputs["name"]: r for r in of(plan, "gcp:compute/router:Router")}
    nats = of(plan, "gcp:compute/routerNat:RouterNat")
    for c in of(plan, GKE):
        assert c.inputs["privateClusterConfig"]["enablePrivateNodes"] is True, c.urn
        # The endpoint admits only the CIDRs the stack names, or is private (no open default).
        private = c.inputs["privateClusterConfig"]["enablePrivateEndpoint"]
        blocks = [b["cidrBlock"] for b in c.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"]]
        assert (private or blocks) and "0.0.0.0/0" not in blocks, c.urn
        where = (c.inputs["project"], c.inputs["location"], c.inputs.get("network", "default"))
        served = [
            n
            for n in nats
            if (n.inputs["project"], n.inputs["region"], routers[n.inputs["router"]].inputs["network"]) == where
        ]
        assert len(served) == 1, f"{c.urn}: no Cloud NAT for its private nodes in {where}"
        assert served[0].inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert len(nats) == len(of(plan, GKE))
    for pool in of(plan, GKE_POOL):  # the cluster setting is only the default for later pools
        assert pool.inputs["networkConfig"]["enablePrivateNodes"] is True, pool.urn


@pytest.mark.parametrize("stack", STACKS)
def test_every_gpu_node_source_is_tainted(stack: str, plans: dict[str, Plan]) -> None:
    plan = plans[stack]
    checked = 0
    for pool in of(plan, GKE_POOL):
        if pool.inputs["nodeConfig"].get("guestAccelerators"):
            checked += 1
            assert any(t["key"] == GPU_TAINT for t in pool.inputs["nodeConfig"]["taints"]), pool.name
    for ng in of(plan, NODE_GROUP):
        if "NVIDIA" in ng.inputs["amiType"] or ng.inputs["labels"].get("gpuplane.io/gpu"):
            checked += 1
            assert {"key": GPU_TAINT, "value": "present", "effect": "NO_SCHEDULE"} in ng.inputs["taints"], ng.name
    for np in of(plan, KARPENTER_POOL):
        checked += 1
        assert any(t["key"] == GPU_TAINT for t in np.inputs["spec"]["template"]["spec"]["taints"]), np.name
    gke = of(plan, GKE)
    # NAP and Autopilot nodes are tainted nvidia.com/gpu by GKE itself; gpuplane creates none of them.
    auto = any(c.inputs.get("enableAutopilot") or c.inputs.get("clusterAutoscaling", {}).get("enabled") for c in gke)
    assert checked > 0 or auto


@pytest.mark.parametrize("stack", STACKS)
def test_kubeconfig_outputs_are_secret(stack: str, plans: dict[str, Plan]) -> None:
    outputs = plans[stack].outputs
    keys = [k for k in outputs if "kubeconfig" in k.lower()]
    assert keys and all(outputs[k] == "[secret]" for k in keys), {k: outputs[k] for k in keys}


def pod_specs(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = obj.get("spec", {})
    for path in (("template", "spec"), ("jobTemplate", "spec", "template", "spec")):
        node: Any = spec
        for step in path:
            node = node.get(step, {}) if isinstance(node, dict) else {}
        if node:
            yield node


@pytest.mark.parametrize("stack", STACKS)
def test_privileged_only_where_listed(stack: str, plans: dict[str, Plan], plan_of: Callable[..., Plan]) -> None:
    plan = plans[stack]
    releases = of(plan, RELEASE)
    privileged_ns: dict[str, str] = {}
    for r in releases:
        text = json.dumps(r.inputs["values"])
        chart = chart_name(r)
        if chart not in PRIVILEGED:
            assert '"privileged": true' not in text and "hostPath" not in text, chart
            continue
        node: Any = r.inputs["values"]
        for step in PRIVILEGED[chart][0]:
            node = node[step]
        privileged_ns[node if PRIVILEGED[chart][0] else r.inputs["namespace"]] = chart
    for r in releases:  # a privileged namespace holds only the release whose agents need it
        ns = r.inputs["namespace"]
        if ns in privileged_ns:
            assert chart_name(r) == privileged_ns[ns], f"{chart_name(r)} shares {ns} with {privileged_ns[ns]}"
    labelled = {
        n.inputs["metadata"]["name"]
        for n in of(plan, "kubernetes:core/v1:Namespace")
        if n.inputs["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") == "privileged"
    }
    own = labelled & set(PRIVILEGED_NAMESPACES)
    assert labelled - own == set(privileged_ns), (labelled, privileged_ns)
    for obj in kube_objects(plan):  # gpuplane's own pods are never privileged (but the listed vendor agents)
        meta = obj.inputs["metadata"]
        if (obj.inputs["kind"], meta.get("namespace", ""), meta["name"]) in PRIVILEGED_OBJECTS:
            continue
        if meta.get("namespace") in own:  # only the checks, each labelled with its check
            assert obj.inputs["kind"] in ("Job", "Service", "Secret", "ResourceClaimTemplate"), obj.name
            assert CHECK_LABEL in meta.get("labels", {}) or obj.inputs["kind"] == "ResourceClaimTemplate", obj.name
            continue
        for spec in pod_specs(obj.inputs):
            assert not spec.get("hostNetwork") and not spec.get("hostPID")
            assert not any("hostPath" in v for v in spec.get("volumes", []))
            for c in spec.get("containers", []) + spec.get("initContainers", []):
                assert not c.get("securityContext", {}).get("privileged"), obj.name


# Model stores: a member that is not one Kubernetes service account (Cloud Storage IAM's public and set members,
# cloud.google.com/iam/docs/principal-identifiers) would make a store readable beyond the accounts the store names.
BROAD_MEMBERS = ("allUsers", "allAuthenticatedUsers", "principalSet://", "projectViewer:", "projectEditor:", "domain:")


@pytest.mark.parametrize("stack", STACKS)
def test_model_stores_are_private_and_readable_by_named_accounts_only(stack: str, plans: dict[str, Plan]) -> None:
    plan = plans[stack]
    for b in of(plan, "aws:s3/bucket:Bucket"):
        blocks = [
            p for p in of(plan, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock") if b.urn in p.dependencies
        ]
        assert blocks and all(
            blocks[0].inputs.get(k) is True
            for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
        ), b.name
    for b in of(plan, "gcp:storage/bucket:Bucket"):
        assert b.inputs.get("publicAccessPrevention") == "enforced" and b.inputs.get("uniformBucketLevelAccess"), b.name
    for m in of(plan, "gcp:storage/bucketIAMMember:BucketIAMMember"):
        member = str(m.inputs["member"])
        assert not member.startswith(BROAD_MEMBERS) and "/subject/ns/" in member and "/sa/" in member, member
    for a in of(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation"):
        assert "*" not in str(a.inputs["namespace"]) + str(a.inputs["serviceAccount"]), a.name
