"""Model stores (`gpuplane:storage`), read from the planned graphs of the shipped stacks that have them, against what
the drivers' and clouds' documentation says (restated here, not taken from `gpuplane.storage`): the CSI driver runs,
the bucket is private, access goes to the named service accounts only, and the vLLM pod mounts the store."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from gpuplane.config import ConfigError, parse_flat
from gpuplane.plan import Plan, PlannedResource, load

from .conftest import ROOT, stack_with

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
SA = "kubernetes:core/v1:ServiceAccount"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
READERS = {("inference", "vllm")}
WRITERS = {("model-loader", "loader")}
PREFIX = "qwen2.5/"
# Written from the sources, not from gpuplane: the CSI drivers' names (awslabs/mountpoint-s3-csi-driver
# templates/csidriver.yaml; GoogleCloudPlatform/gcs-fuse-csi-driver deploy/base/setup/csi_driver.yaml)
DRIVER = {"aws-karpenter": "s3.csi.aws.com", "gcp-standard": "gcsfuse.csi.storage.gke.io"}
REGION = {"aws-karpenter": "us-west-2", "gcp-standard": "us-central1"}


def one(plan: Plan, type_: str, name_part: str = "") -> PlannedResource:
    found = [r for r in plan.by_type(type_) if name_part in r.name]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def bucket_name(plan: Plan, stack: str) -> str:
    """The created bucket's physical name, as the stack output `storage` reports it."""
    return str(plan.outputs["storage"]["models"]["bucket"])


@pytest.mark.parametrize("stack", sorted(DRIVER))
def test_the_vllm_pod_mounts_the_store_read_only_through_a_bound_claim(
    stack: str, plan_of: Callable[..., Plan]
) -> None:
    plan = plan_of(stack)
    deployment = one(plan, DEPLOYMENT, "vllm")
    pod = deployment.inputs["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "vllm"
    (volume,) = [v for v in pod["volumes"] if "persistentVolumeClaim" in v]
    (mount,) = [m for c in pod["containers"] for m in c["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["mountPath"] == "/models" and mount["readOnly"] is True
    claim_name = volume["persistentVolumeClaim"]["claimName"]
    (claim,) = [
        c
        for c in plan.by_type(PVC)
        if c.inputs["metadata"]["name"] == claim_name and c.inputs["metadata"]["namespace"] == "inference"
    ]
    (pv,) = [v for v in plan.by_type(PV) if v.inputs["metadata"]["name"] == claim.inputs["spec"]["volumeName"]]
    assert pv.inputs["spec"]["claimRef"] == {"namespace": "inference", "name": claim_name}
    assert pv.inputs["spec"]["accessModes"] == ["ReadOnlyMany"] == claim.inputs["spec"]["accessModes"]
    assert pv.inputs["spec"]["csi"]["driver"] == DRIVER[stack]
    bucket = bucket_name(plan, stack)
    csi = pv.inputs["spec"]["csi"]
    # Mountpoint takes the bucket as a volume attribute (docs/CONFIGURATION.md "Static Provisioning"); GCS FUSE as
    # the volume handle (examples/static/pv-pvc-deployment.yaml)
    assert (csi.get("volumeAttributes", {}).get("bucketName") or csi["volumeHandle"]) == bucket
    options = pv.inputs["spec"]["mountOptions"]
    if stack.startswith("aws"):
        # pod-level credentials (else every pod with the claim gets the driver's role); the region, since IMDS is
        # out of reach at hop limit 1; the prefix ends in '/' (mountpoint-s3 doc/CONFIGURATION.md)
        assert csi["volumeAttributes"]["authenticationSource"] == "pod"
        assert f"region {REGION[stack]}" in options and f"prefix {PREFIX}" in options
    else:
        # the gcsfuse sidecar is injected only into pods that ask (gcs-fuse-csi-driver pkg/webhook)
        assert deployment.inputs["spec"]["template"]["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
        assert f"only-dir={PREFIX.rstrip('/')}" in options


@pytest.mark.parametrize("stack", sorted(DRIVER))
def test_claims_and_service_accounts_exist_for_exactly_the_named_accounts(
    stack: str, plan_of: Callable[..., Plan]
) -> None:
    plan = plan_of(stack)
    accounts = {(r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]) for r in plan.by_type(SA)}
    assert READERS | WRITERS <= accounts
    claims = {
        (c.inputs["metadata"]["namespace"], c.inputs["metadata"]["name"], tuple(c.inputs["spec"]["accessModes"]))
        for c in plan.by_type(PVC)
    }
    assert claims == {("inference", "models", ("ReadOnlyMany",)), ("model-loader", "models-rw", ("ReadWriteMany",))}


def _statements(doc: str) -> list[dict[str, Any]]:
    parsed = json.loads(doc)
    return list(parsed["Statement"])


def test_eks_access_goes_through_pod_identity_to_the_named_accounts_and_the_prefix_only(
    plan_of: Callable[..., Plan],
) -> None:
    plan = plan_of("aws-karpenter")
    bucket = bucket_name(plan, "aws-karpenter")
    associations = [
        r for r in plan.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation") if "storage" in r.name
    ]
    assert {(a.inputs["namespace"], a.inputs["serviceAccount"]) for a in associations} == READERS | WRITERS
    addons = {a.inputs["addonName"]: a for a in plan.by_type("aws:eks/addon:Addon")}
    assert "aws-mountpoint-s3-csi-driver" in addons and "eks-pod-identity-agent" in addons
    for a in associations:
        ns, sa = a.inputs["namespace"], a.inputs["serviceAccount"]
        stem = a.name.removesuffix("-pod-identity")  # the account's role and policy are its siblings
        role = one(plan, "aws:iam/role:Role", f"{stem}-role")
        policy = one(plan, "aws:iam/rolePolicy:RolePolicy", f"{stem}-stores")
        assert f":role/{stem}-role" in a.inputs["roleArn"]
        (trust,) = _statements(role.inputs["assumeRolePolicy"])
        assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
        assert set(trust["Action"]) == {"sts:AssumeRole", "sts:TagSession"}  # EKS user guide, pod-id-role
        # EKS user guide, pod-id-abac: the agent tags each session with the pod's cluster, namespace and account
        assert trust["Condition"]["StringEquals"] == {
            "aws:RequestTag/eks-cluster-name": "ml-karpenter",
            "aws:RequestTag/kubernetes-namespace": ns,
            "aws:RequestTag/kubernetes-service-account": sa,
        }
        statements = _statements(policy.inputs["policy"])
        resources = {res for s in statements for res in s["Resource"]}
        assert resources == {f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/{PREFIX}*"}
        listing = [s for s in statements if s["Action"] == ["s3:ListBucket"]]
        assert listing and all(s["Condition"] == {"StringLike": {"s3:prefix": [f"{PREFIX}*"]}} for s in listing)
        actions = {x for s in statements for x in s["Action"]}
        writes = {"s3:PutObject", "s3:AbortMultipartUpload", "s3:DeleteObject"}
        assert actions & writes == (writes if (ns, sa) in WRITERS else set())


def test_gke_access_is_a_bucket_role_per_named_principal(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    bucket = bucket_name(plan, "gcp-standard")
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["addonsConfig"]["gcsFuseCsiDriverConfig"]["enabled"] is True
    members = {
        (m.inputs["member"], m.inputs["role"]) for m in plan.by_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    }
    assert all(m.inputs["bucket"] == bucket for m in plan.by_type("gcp:storage/bucketIAMMember:BucketIAMMember"))
    # gcs-fuse-csi-driver docs/authentication.md: the principal of one Kubernetes service account (by the project's
    # number), objectViewer to read, objectUser to write
    principal = re.compile(
        r"^principal://iam\.googleapis\.com/projects/[0-9]+/locations/global/workloadIdentityPools/"
        r"acme-ml-prod\.svc\.id\.goog/subject/ns/([a-z0-9-]+)/sa/([a-z0-9-]+)$"
    )
    found = set()
    for member, role in members:
        match = principal.match(member)
        assert match, member
        found.add((match[1], match[2], role))
    want = {(ns, sa, "roles/storage.objectViewer") for ns, sa in READERS}
    want |= {(ns, sa, "roles/storage.objectUser") for ns, sa in WRITERS}
    assert found == want


@pytest.mark.parametrize("stack", sorted(DRIVER))
def test_a_created_bucket_is_private_and_never_emptied_by_pulumi(stack: str, plan_of: Callable[..., Plan]) -> None:
    plan = plan_of(stack)
    if stack.startswith("aws"):
        b = one(plan, "aws:s3/bucket:Bucket")
        block = one(plan, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
        assert all(
            block.inputs[k] is True
            for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
        )
        owner = one(plan, "aws:s3/bucketOwnershipControls:BucketOwnershipControls")
        assert owner.inputs["rule"]["objectOwnership"] == "BucketOwnerEnforced"
        # a prefix, not a name: a replacement gets a new name, so create-before-delete does not collide
        assert "bucket" not in b.inputs and b.inputs["bucketPrefix"].startswith("ml-karpenter-models-")
    else:
        b = one(plan, "gcp:storage/bucket:Bucket")
        assert b.inputs["publicAccessPrevention"] == "enforced" and b.inputs["uniformBucketLevelAccess"] is True
        assert b.inputs["location"] == "US-CENTRAL1"
    assert b.inputs["forceDestroy"] is False


def test_an_existing_bucket_is_used_not_created(plan_of: Callable[..., Plan]) -> None:
    sf = load("aws-karpenter", ROOT)
    storage = json.loads(json.dumps(sf.config["gpuplane:storage"]))
    storage["stores"][0]["bucket"] = "acme-llm-weights"
    storage["stores"][0]["region"] = "eu-west-1"  # yours, elsewhere: Mountpoint does not correct a wrong region
    plan = plan_of(stack_with("aws-karpenter", storage=storage))
    assert plan.by_type("aws:s3/bucket:Bucket") == []
    (pv, *_) = plan.by_type(PV)
    assert pv.inputs["spec"]["csi"]["volumeAttributes"]["bucketName"] == "acme-llm-weights"
    assert "region eu-west-1" in pv.inputs["spec"]["mountOptions"]
    arns = {
        r
        for p in plan.by_type("aws:iam/rolePolicy:RolePolicy")
        if "stores" in p.name
        for s in _statements(p.inputs["policy"])
        for r in s["Resource"]
    }
    assert arns == {"arn:aws:s3:::acme-llm-weights", f"arn:aws:s3:::acme-llm-weights/{PREFIX}*"}


def test_the_pod_identity_agent_is_installed_once() -> None:
    """Karpenter's controller needs the agent too: one add-on per cluster (EKS refuses a second)."""
    from gpuplane.plan import plan_stack

    for stack in ("aws-karpenter", "aws-managed"):
        storage = {"stores": [{"name": "models", "readers": [{"namespace": "inference", "serviceAccount": "vllm"}]}]}
        plan = plan_stack(stack_with(stack, storage=storage))
        agents = [a for a in plan.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "eks-pod-identity-agent"]
        assert len(agents) == 1, (stack, [a.name for a in agents])


def test_the_mounts_helper_gives_a_pod_of_your_own_the_stacks_volumes(plan_of: Callable[..., Plan]) -> None:
    from gpuplane.storage import mounts

    cfg = parse_flat(load("gcp-standard", ROOT).flat_config())
    fragment = mounts(cfg, {"models": "/weights"}, namespace="model-loader", service_account="loader")
    assert fragment["serviceAccountName"] == "loader"
    assert fragment["volumes"] == [
        {"name": "store-models", "persistentVolumeClaim": {"claimName": "models-rw", "readOnly": False}}
    ]
    assert fragment["volumeMounts"] == [{"name": "store-models", "mountPath": "/weights", "readOnly": False}]
    assert fragment["annotations"] == {"gke-gcsfuse/volumes": "true"}
    with pytest.raises(ConfigError) as info:
        mounts(cfg, {"model": "/m", "models": "/n"}, namespace="default", service_account="vllm")
    assert dict(info.value.problems) == {
        "model": "no store 'model' (did you mean 'models'?) (stores: models)",
        "models": "default/vllm may neither read nor write store models",
    }


# --- the component in a user's program ---------------------------------------------------------------------------


def test_model_stores_composes_with_a_users_own_eks_cluster() -> None:
    """A user's EKS cluster (pulumi-aws, not gpuplane's) and its Kubernetes provider: the stores, their grants and
    the add-ons, on that cluster; the deploy simulator accepts the graph."""
    import pulumi
    import pulumi_aws as aws
    import pulumi_kubernetes as k8s

    import gpuplane.testing
    from gpuplane.plan.deploy import check
    from gpuplane.storage import ModelStores

    with gpuplane.testing.offline(project="mine", config={"aws:region": "eu-west-1"}) as plan:
        cluster = aws.eks.Cluster(
            "prod", name="prod", role_arn="arn:aws:iam::123456789012:role/eks", vpc_config={"subnet_ids": []}
        )
        provider = k8s.Provider("prod-k8s", kubeconfig="{}", opts=pulumi.ResourceOptions(depends_on=[cluster]))
        stores = ModelStores(
            "weights",
            {
                "cloud": "aws",
                "cluster": "prod",
                "region": "eu-west-1",
                "eks_cluster_name": cluster.name,
                "stores": [
                    {
                        "name": "llama",
                        "bucket": "acme-llama",
                        "readers": [{"namespace": "serving", "service_account": "vllm"}],
                    }
                ],
            },
            opts=pulumi.ResourceOptions(providers={"kubernetes": provider}),
        )
        pulumi.export("buckets", stores.buckets)
    assert plan.outputs["buckets"] == {"llama": "acme-llama"}
    types = [r.type for r in plan.resources]
    assert types.count("aws:eks/addon:Addon") == 2 and "aws:s3/bucket:Bucket" not in types
    (association,) = plan.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == ("serving", "vllm")
    rules = {v.rule for v in check(plan)}
    assert not rules & {"claim-binds", "volume-driver-installed", "pod-identity-unique", "pod-identity-agent"}, rules


def test_model_stores_names_every_bad_argument_before_registering_anything() -> None:
    import gpuplane.testing
    from gpuplane.args.checks import ArgsError
    from gpuplane.storage import ModelStores

    with pytest.raises(ArgsError) as info, gpuplane.testing.offline() as plan:
        ModelStores(
            "bad",
            {  # type: ignore[typeddict-item]
                "cloud": "gcp",
                "cluster": "c",
                "stores": [{"name": "Llama", "readers": [{"namespace": "kube-system", "service_acount": "x"}]}],
            },
        )
    assert dict(info.value.problems) == {
        "stores[0].readers[0].service_acount": "unknown argument (did you mean 'service_account'?) (known: namespace, "
        "service_account)",
        "region": "required argument is missing",
        "stores[0].name": "'Llama' must be a DNS label: lowercase letters, digits and '-', from a letter, not ending "
        "in '-' (e.g. ml-gke)",
        "stores[0].readers[0].namespace": "kube-system is Kubernetes' own namespace; give the store's readers a "
        "namespace of their own",
        "stores[0].readers[0].service_account": "required key is missing",
        "project": "required with cloud gcp: the project of the cluster's Workload Identity pool",
    }
    assert plan.resources == []


# --- day two ------------------------------------------------------------------------------------------------------


def test_a_kubernetes_object_that_moves_to_another_resource_fails_the_change() -> None:
    """The engine creates the new resource before deleting the old one (deletes of resources gone from the program
    come last): a Namespace that moves from one component to another meets AlreadyExists, then its delete would take
    the namespace. Written from the engine's order, independent of the stacks."""
    from gpuplane.plan.routine import RoutineChange, outcome

    def ns(urn: str) -> dict[str, Any]:
        return {
            "urn": urn,
            "type": "kubernetes:core/v1:Namespace",
            "name": urn.rsplit("::", 1)[1],
            "custom": True,
            "provider": "k8s::id",
            "inputs": {"metadata": {"name": "inference"}},
        }

    base = {"resources": [ns("urn:pulumi:s::p::gpuplane:storage:ModelStores$kubernetes:core/v1:Namespace::a")]}
    moved = {"resources": [ns("urn:pulumi:s::p::kubernetes:core/v1:Namespace::b")]}
    change = RoutineChange("x", "x", lambda c: c)
    assert outcome(change, base, moved).failures == [
        "kubernetes:core/v1:Namespace::b: Namespace inference moves from kubernetes:core/v1:Namespace::a: the create "
        "meets AlreadyExists (the old one is deleted after it), and that delete would take the object"
    ]
    assert outcome(change, base, base).failures == []


@pytest.mark.parametrize("stack", ["gcp-standard", "aws-karpenter", "aws-managed"])
def test_adding_and_removing_a_store_keeps_every_namespace_and_fails_nothing(stack: str) -> None:
    from .test_lifecycle import outcomes  # the lifecycle tests' own run, cached for the session

    results = {o.change: o for o in outcomes(stack)}
    added, removed = results["add-store"], results["remove-store"]
    assert added.applies and added.failures == [] and added.removed == []
    assert any("Bucket::" in a for a in added.added)
    if removed.applies:  # the stacks that ship a store
        assert removed.failures == [] and removed.replaced == []
        # the Deployment stops mounting it (in place); `inference` stays, the loader's own namespace goes
        assert any("Deployment::" in n for n in removed.in_place)
        assert not any("inference-namespace" in r for r in removed.removed)
