"""`gpuplane.testing` and `gpuplane plan --program DIR`: a user's own Pulumi program, in its own folder with its
own Pulumi.yaml, declaring its own cluster, plans offline under gpuplane's mocks (AWS, pulumi-eks, GCP,
Kubernetes, Helm) with the same JSON contract and deploy simulator as `gpuplane plan STACK`."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pulumi
import pytest

import gpuplane.testing
from gpuplane.config import ConfigError
from gpuplane.plan.project import plan_program

from .conftest import ROOT

GKE_PROGRAM = '''
"""A user's program: its own GKE cluster and node service account, plus gpuplane's GPU node pools."""
import pulumi
import pulumi_gcp as gcp

from gpuplane import GkeGpuNodePools

conf = pulumi.Config()
project, region = conf.require("project"), conf.require("region")
cluster = gcp.container.Cluster(
    "research", name="research", project=project, location=region,
    remove_default_node_pool=True, initial_node_count=1, deletion_protection=False,
)
nodes = gcp.serviceaccount.Account("gpu-nodes", account_id="gpu-nodes", project=project)
pools = GkeGpuNodePools("gpu", {
    "cluster": cluster.id, "location": cluster.location, "project": project,
    "node_service_account": nodes.email, "gpu_pools": conf.require_object("gpuPools"),
})
pulumi.export("clusterEndpoint", cluster.endpoint)
pulumi.export("gpuNodePools", pools.node_pool_names)
'''
"""The one place that spells gpuplane's component API: adapt it when the public args change."""

EKS_PROGRAM = '''
"""A user's program: its own EKS cluster (pulumi-eks) and managed node group, plus gpuplane's gpu-operator."""
import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from gpuplane import AmiType, GpuOperator

conf = pulumi.Config()
role = aws.iam.Role("nodes", assume_role_policy='{"Version": "2012-10-17", "Statement": []}')
cluster = eks.Cluster("ml", name="ml", skip_default_node_group=True, version="1.33",
                      vpc_id="vpc-0a1b2c3d", private_subnet_ids=["subnet-1", "subnet-2"])
eks.ManagedNodeGroup("system", cluster=cluster, node_role_arn=role.arn, subnet_ids=["subnet-1"],
                     instance_types=["m7i.large"], labels={"gpuplane.io/role": "system"},
                     scaling_config={"min_size": 2, "max_size": 3, "desired_size": 2})
eks.ManagedNodeGroup("gpu", cluster=cluster, node_role_arn=role.arn, subnet_ids=["subnet-1"],
                     instance_types=["g6.xlarge"], ami_type="AL2023_x86_64_NVIDIA",
                     labels={"gpuplane.io/pool": "l4", "gpuplane.io/gpu": "l4"},
                     taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
                     scaling_config={"min_size": 0, "max_size": 2, "desired_size": 0})
gpu_nodes = [{"pool": "l4", "resource": "nvidia.com/gpu", "labels": {"gpuplane.io/pool": "l4"},
              "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}]
provider = k8s.Provider("ml", kubeconfig=cluster.kubeconfig_json)
GpuOperator("gpu-operator", {"node_image": AmiType.AL2023_X86_64_NVIDIA, "gpu_nodes": gpu_nodes},
            opts=pulumi.ResourceOptions(provider=provider))
pulumi.export("kubeconfig", pulumi.Output.secret(cluster.kubeconfig_json))
pulumi.export("nodeGroupName", cluster.eks_cluster.name)
'''


def write_program(folder: Path, name: str, source: str, stack: str = "", stacks: tuple[str, ...] = ("dev",)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Pulumi.yaml").write_text(f"name: {name}\nruntime:\n  name: python\n")
    (folder / "__main__.py").write_text(textwrap.dedent(source))
    body = f"config:\n{textwrap.indent(stack, '  ')}" if stack else "config: {}\n"
    for s in stacks:
        (folder / f"Pulumi.{s}.yaml").write_text(body)
    return folder


GKE_STACK = """\
my-gpus:project: acme-research
my-gpus:region: europe-west4
my-gpus:gpuPools:
  - {name: l4, gpu: l4, spot: true, max_nodes: 4}
"""


def test_a_users_gke_program_plans_with_one_command(tmp_path: Path) -> None:
    folder = write_program(tmp_path / "my-gpus", "my-gpus", GKE_PROGRAM, GKE_STACK)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "components")}
    cmd = [sys.executable, "-m", "gpuplane.cli", "plan", "--program", str(folder), "--format", "json"]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert (doc["project"], doc["stack"]) == ("my-gpus", "dev")
    (cluster,) = [r for r in doc["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    pools = [r for r in doc["resources"] if r["type"] == "gcp:container/nodePool:NodePool"]
    assert pools, "gpuplane's GPU node pools are planned on the user's cluster"
    for pool in pools:  # the user's cluster's ID Output reached the pool, and the pool waits for the cluster
        assert pool["inputs"]["cluster"] == "projects/acme-research/locations/europe-west4/clusters/research"
        assert cluster["urn"] in pool["dependsOn"]
        assert pool["inputs"]["nodeConfig"]["serviceAccount"] == "gpu-nodes@acme-research.iam.gserviceaccount.com"
    assert doc["outputs"]["clusterEndpoint"].startswith("203.0.113.")
    # The same program in tree form, with the deploy simulator: it would deploy.
    tree = subprocess.run([*cmd[:-2], "--check"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert tree.returncode == 0 and "deploy check passed" in tree.stdout, tree.stderr


def test_a_users_eks_program_plans_in_process(tmp_path: Path) -> None:
    """pulumi-eks's remote components resolve (Pulumi's stock mocks fail on them)."""
    folder = write_program(tmp_path / "ml", "ml", EKS_PROGRAM)
    plan = gpuplane.testing.plan_program(folder)
    (cluster,) = plan.by_type("eks:index:Cluster")
    groups = plan.by_type("eks:index:ManagedNodeGroup")
    assert [g.name for g in groups] == ["gpu", "system"]
    for group in groups:  # the user's cluster and role reached the node groups
        assert group.inputs["cluster"] == cluster.urn
        assert group.inputs["nodeRoleArn"].startswith("arn:aws:iam::123456789012:role/nodes-")
    (provider,) = plan.by_type("pulumi:providers:kubernetes")
    assert (
        json.loads(provider.inputs["kubeconfig"])["current-context"] == "aws"
    )  # pulumi-eks generateKubeconfig names its context aws
    releases = plan.by_type("kubernetes:helm.sh/v3:Release")
    assert releases and all(r.provider and r.provider.startswith(provider.urn) for r in releases)
    assert plan.outputs == {"kubeconfig": "[secret]", "nodeGroupName": "ml"}
    assert gpuplane.testing.check(plan) == []


INFRA = """
import pulumi
import pulumi_gcp as gcp

conf = pulumi.Config()
cluster = gcp.container.Cluster("c", name=conf.require("clusterName"), project="p", location="us-central1",
                                initial_node_count=1)
pool = gcp.container.NodePool("gpu", cluster=cluster.id, node_config={
    "machine_type": "g2-standard-8",
    "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
})
"""


def test_the_documented_unit_test_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/testing-your-program.md: set_mocks, import the program, `@pulumi.runtime.test`."""
    (tmp_path / "infra_doc.py").write_text(INFRA)
    monkeypatch.syspath_prepend(str(tmp_path))
    session = gpuplane.testing.set_mocks(project="my-gpus", stack="dev", config={"clusterName": "research"})
    infra = importlib.import_module("infra_doc")

    @pulumi.runtime.test  # type: ignore[misc]
    def test_gpu_pool_is_tainted_and_on_the_cluster() -> pulumi.Output[None]:
        def check(args: list[object]) -> None:
            cluster_id, taints = args
            assert cluster_id == "projects/p/locations/us-central1/clusters/research"
            assert [t["key"] for t in taints] == ["nvidia.com/gpu"]  # type: ignore[attr-defined]

        return pulumi.Output.all(infra.pool.cluster, infra.pool.node_config.taints).apply(check)

    test_gpu_pool_is_tainted_and_on_the_cluster()
    assert [r.name for r in session.plan().resources if r.custom] == ["c", "gpu"]
    sys.modules.pop("infra_doc")


def test_offline_collects_the_with_block(tmp_path: Path) -> None:
    with gpuplane.testing.offline(project="my-gpus", config={"clusterName": "research", "gcp:project": "p"}) as plan:
        import pulumi_gcp as gcp

        cluster = gcp.container.Cluster("c", name=pulumi.Config().require("clusterName"), location="us-central1")
        pulumi.export("endpoint", cluster.endpoint)
    assert [r.type for r in plan.resources] == ["pulumi:pulumi:Stack", "gcp:container/cluster:Cluster"]
    assert plan.outputs["endpoint"].startswith("203.0.113.")


def test_every_example_plans_through_the_cli_form() -> None:
    # The Python examples (the YAML one is checked against the package schema in test_provider.py).
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/__main__.py"))
    assert examples
    for folder in examples:
        plan, crds = plan_program(folder)
        assert any(r.custom and not r.type.startswith("pulumi:") for r in plan.resources), folder.name
        violations = gpuplane.testing.check(plan, crds)
        assert violations == [], f"{folder.name}: " + "\n".join(map(str, violations))


def test_bad_programs_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no Pulumi.yaml in"):
        plan_program(tmp_path)
    (tmp_path / "Pulumi.yaml").write_text("name: ts\nruntime: nodejs\n")
    with pytest.raises(ConfigError, match="'nodejs': only Python programs can be planned offline") as exc:
        plan_program(tmp_path)
    assert "no program at" in str(exc.value)
    folder = write_program(tmp_path / "needs", "needs", GKE_PROGRAM, stacks=("dev", "prod"))
    with pytest.raises(ConfigError, match=r"several stacks \(Pulumi.dev.yaml, Pulumi.prod.yaml\): name one"):
        plan_program(folder)
    with pytest.raises(ConfigError, match="needs:project: missing: set it in the stack file"):
        plan_program(folder, "dev")
    bad = write_program(tmp_path / "crds", "crds", "", "gpuplane:existingCrds: {a: 1}\n")
    with pytest.raises(ConfigError, match="gpuplane:existingCrds: must be a list of API groups"):
        plan_program(bad)


def test_the_cli_needs_a_stack_or_a_program(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplane.cli import main

    assert main(["plan"]) == 2
    assert "give a STACK, or --program DIR" in capsys.readouterr().err


def test_the_mocks_answer_for_every_type_gpuplane_creates() -> None:
    """Every custom resource type gpuplane's stacks register has a specific answer (not the echo of its
    inputs), except types whose cloud reports nothing beyond their inputs."""
    from gpuplane.plan import load, plan_stack
    from gpuplane.plan.mocks import PlanMocks

    echo_only = {  # their providers' schemas have no computed outputs besides `id`
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "aws:sqs/queuePolicy:QueuePolicy",
        "aws:autoscaling/tag:Tag",
        "aws:ec2/routeTableAssociation:RouteTableAssociation",
        "gcp:compute/routerNat:RouterNat",
    }
    mocks = PlanMocks()
    types = {
        r.type
        for s in ("gcp-standard", "gcp-autopilot", "aws-karpenter", "aws-managed")
        for r in plan_stack(load(s)).resources
        if r.custom
    }
    answered = {t for t in types if t in mocks.outputs or t.startswith(("kubernetes:", "pulumi:providers:"))}
    assert types - answered <= echo_only, types - answered - echo_only


def test_the_mocks_answer_the_invokes_a_program_makes() -> None:
    with gpuplane.testing.offline(project="p", config={"aws:region": "eu-west-1"}) as plan:
        import pulumi_aws as aws
        import pulumi_gcp as gcp

        aws.Provider("aws", region="eu-west-1")
        existing = aws.eks.get_cluster_output(name="prod")
        policy = aws.iam.get_policy_document_output(
            statements=[
                {
                    "actions": ["sts:AssumeRole"],
                    "principals": [{"type": "Service", "identifiers": ["pods.eks.amazonaws.com"]}],
                }
            ]
        )
        role = aws.iam.Role("pods", assume_role_policy=policy.json)
        addon = aws.eks.Addon("cni", cluster_name=existing.name, addon_name="vpc-cni")
        gcp_project = gcp.organizations.get_project_output(project_id="acme")
        pulumi.export("issuer", existing.identities[0].oidcs[0].issuer)
        pulumi.export("endpoint", existing.endpoint)
        pulumi.export("roleArn", role.arn)
        pulumi.export("addonArn", addon.arn)
        pulumi.export("projectNumber", gcp_project.number)
    doc = json.loads(plan.get(next(r.urn for r in plan.resources if r.name == "pods")).inputs["assumeRolePolicy"])
    assert doc["Statement"] == [
        {"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "pods.eks.amazonaws.com"}}
    ]
    assert plan.outputs["issuer"].startswith("https://oidc.eks.eu-west-1.amazonaws.com/id/")
    assert plan.outputs["endpoint"].endswith(".gr7.eu-west-1.eks.amazonaws.com")
    assert plan.outputs["roleArn"].startswith("arn:aws:iam::123456789012:role/pods-")
    assert plan.outputs["addonArn"].startswith("arn:aws:eks:eu-west-1:123456789012:addon/prod/vpc-cni/")
    assert plan.outputs["projectNumber"].isdigit()


def test_an_unanswered_invoke_says_how_to_answer_it() -> None:
    with pytest.raises(Exception, match="subclass gpuplane.testing.Mocks"):
        with gpuplane.testing.offline() as _:
            import pulumi_aws as aws

            aws.ec2.get_instance_type_output(instance_type="g6.xlarge").default_vcpus.apply(lambda v: v)


def test_the_docs_unit_test_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first Python block of docs/testing-your-program.md, run against a program module `infra`."""
    doc = (ROOT / "docs" / "testing-your-program.md").read_text()
    block = doc.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "infra.py").write_text(INFRA)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("infra", None)
    namespace: dict[str, object] = {}
    try:
        exec(compile(block, "testing-your-program.md", "exec"), namespace)
        tests = [v for k, v in namespace.items() if k.startswith("test_") and callable(v)]
        assert tests
        for test in tests:
            test()
    finally:
        sys.modules.pop("infra", None)


REF_PROGRAM = """
import pulumi
ref = pulumi.StackReference("acme/net/prod")
pulumi.export("vpc", ref.require_output("vpcId"))
pulumi.export("token", ref.require_output("token"))
"""


def test_stack_references_are_answered_from_the_stack_file(tmp_path: Path) -> None:
    refs = "gpuplane:stackReferences:\n  acme/net/prod: {vpcId: vpc-1, token: {secure: t0ken}}\n"
    plan, _ = plan_program(write_program(tmp_path / "ok", "ok", REF_PROGRAM, refs))
    assert plan.outputs == {"vpc": "vpc-1", "token": "[secret]"}
    missing = r"gpuplane:stackReferences: no outputs for stack 'acme/net/prod' \(given: none\)"
    with pytest.raises(ConfigError, match=missing):
        plan_program(write_program(tmp_path / "missing", "missing", REF_PROGRAM))
    bad = write_program(tmp_path / "bad", "bad", REF_PROGRAM, "gpuplane:stackReferences: [1]\n")
    with pytest.raises(ConfigError, match="gpuplane:stackReferences: must map stack names to their outputs"):
        plan_program(bad)


def test_a_program_whose_resources_live_in_its_own_module_plans_every_time(tmp_path: Path) -> None:
    """Each run imports the program's own modules afresh (as each `pulumi up` does in a new process): the
    second plan is not empty because the first imported `infra`."""
    folder = write_program(tmp_path / "mod", "mod", "import infra  # noqa: F401\n", "gcp:project: p\n")
    (folder / "infra.py").write_text(
        "import pulumi_gcp as gcp\n\ngcp.compute.Network('vpc', auto_create_subnetworks=False)\n"
    )
    first, second = gpuplane.testing.plan_program(folder), gpuplane.testing.plan_program(folder)
    assert [r.type for r in first.resources] == [r.type for r in second.resources]
    assert "gcp:compute/network:Network" in {r.type for r in second.resources}


def test_a_program_that_registers_nothing_is_refused(tmp_path: Path) -> None:
    folder = write_program(tmp_path / "empty", "empty", "import pulumi\n")
    with pytest.raises(ConfigError, match="registered no resources and exported nothing"):
        gpuplane.testing.plan_program(folder)


def test_check_reads_the_crds_the_stack_file_states(tmp_path: Path) -> None:
    source = """\
    import pulumi_kubernetes as k8s
    provider = k8s.Provider("k", kubeconfig="{}")
    k8s.apiextensions.CustomResource(
        "sm", api_version="monitoring.coreos.com/v1", kind="ServiceMonitor",
        metadata={"name": "sm", "namespace": "default"}, spec={"endpoints": [{"port": "metrics"}], "selector": {}},
        opts=__import__("pulumi").ResourceOptions(provider=provider),
    )
    """
    stated = write_program(tmp_path / "crds", "crds", source, "gpuplane:existingCrds: [monitoring.coreos.com]\n")
    assert gpuplane.testing.check(gpuplane.testing.plan_program(stated)) == []
    bare = write_program(tmp_path / "bare", "bare", source)
    assert [v.rule for v in gpuplane.testing.check(gpuplane.testing.plan_program(bare))] == [
        "custom-resource-waits-for-crd"
    ]


def test_a_virtualenv_inside_the_program_folder_is_left_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pulumi new` puts the venv in the program folder: its packages (pulumi, grpc, protobuf in real life)
    must stay imported across plans, or the running SDK breaks; only the program's own modules are re-imported."""
    folder = write_program(tmp_path / "p", "p", "import pulumi\npulumi.export('x', 1)\n")
    site = folder / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "vendored_thing.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(site))
    import vendored_thing  # type: ignore[import-not-found]

    gpuplane.testing.plan_program(folder)
    assert sys.modules.get("vendored_thing") is vendored_thing
