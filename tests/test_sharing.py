"""GPU sharing carried to each platform's mechanism, and the combinations that cannot work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from gpuplane.plan import Plan

from .conftest import config_problems, load_stack_config, stack_with
from .graph import RELEASE, gpu_node_pools, kube_objects


def test_gke_time_sharing_reaches_the_node_pool(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-standard")
    want = {p["name"]: p for p in load_stack_config("gcp-standard")["gpuplane:gpuPools"]}
    for pool in gpu_node_pools(plan):
        acc = pool.inputs["nodeConfig"]["guestAccelerators"][0]
        sharing = want[pool.inputs["name"]].get("sharing")
        if sharing is None:
            assert "gpuSharingConfig" not in acc and "gpuPartitionSize" not in acc
        else:
            assert acc["gpuSharingConfig"] == {
                "gpuSharingStrategy": "TIME_SHARING",
                "maxSharedClientsPerGpu": sharing["replicas"],
            }


def test_gke_mig_and_mps(plan_of: Callable[..., Plan]) -> None:
    pools = [
        {"name": "mig", "gpu": "a100-40gb", "maxNodes": 1, "sharing": {"strategy": "mig", "migProfile": "1g.5gb"}},
        {"name": "mps", "gpu": "l4", "maxNodes": 1, "sharing": {"strategy": "mps", "replicas": 8}},
    ]
    plan = plan_of(stack_with("gcp-standard", gpuPools=pools))
    accs = {p.inputs["name"]: p.inputs["nodeConfig"]["guestAccelerators"][0] for p in gpu_node_pools(plan)}
    assert accs["mig"]["gpuPartitionSize"] == "1g.5gb" and "gpuSharingConfig" not in accs["mig"]
    assert accs["mps"]["gpuSharingConfig"] == {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 8}


def device_plugin_config(plan: Plan) -> dict[str, Any]:
    (cm,) = [
        r.inputs
        for r in kube_objects(plan)
        if r.inputs["kind"] == "ConfigMap" and "device-plugin" in r.inputs["metadata"]["name"]
    ]
    return cm


def test_eks_operator_device_plugin_config(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-managed")
    cm = device_plugin_config(plan)
    (op,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "gpu-operator"]
    dp = op.inputs["values"]["devicePlugin"]["config"]
    assert dp["name"] == cm["metadata"]["name"] and cm["metadata"]["namespace"] == op.inputs["namespace"]
    assert dp["default"] in cm["data"]
    default = yaml.safe_load(cm["data"]["default"])
    assert default == {"version": "v1", "flags": {"migStrategy": "mixed"}} and "sharing" not in default
    groups = {
        g.inputs["labels"]["gpuplane.io/pool"]: g
        for g in plan.by_type("eks:index:ManagedNodeGroup")
        if "gpuplane.io/pool" in g.inputs["labels"]
    }
    for name, p in {p["name"]: p for p in load_stack_config("aws-managed")["gpuplane:gpuPools"]}.items():
        label = groups[name].inputs["labels"].get("nvidia.com/device-plugin.config")
        if "sharing" not in p:
            assert label is None, "pools without sharing stay whole"
            continue
        assert label in cm["data"]
        conf = yaml.safe_load(cm["data"][label])
        assert conf["version"] == "v1"
        key = {"time-slicing": "timeSlicing", "mps": "mps"}[p["sharing"]["strategy"]]
        assert conf["sharing"][key]["resources"] == [{"name": "nvidia.com/gpu", "replicas": p["sharing"]["replicas"]}]


def test_karpenter_mig_class(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("aws-karpenter")
    (op,) = [r for r in plan.by_type(RELEASE) if r.inputs["chart"] == "gpu-operator"]
    assert op.inputs["values"]["mig"] == {"strategy": "mixed"} and op.inputs["values"]["migManager"]["enabled"] is True
    assert yaml.safe_load(device_plugin_config(plan)["data"]["default"])["flags"]["migStrategy"] == "mixed"
    pools = {r.inputs["metadata"]["name"]: r.inputs for r in kube_objects(plan) if r.inputs["kind"] == "NodePool"}
    assert pools["notebooks"]["spec"]["template"]["metadata"]["labels"]["nvidia.com/mig.config"] == "all-1g.5gb"
    assert "nvidia.com/mig.config" not in pools["training"]["spec"]["template"]["metadata"]["labels"]


BASE_EKS = {"platform": "eks-managed", "cluster": {"name": "k"}, "aws": {"region": "us-east-1"}}
BASE_GKE = {"cluster": {"name": "g"}, "gcp": {"project": "acme-ml-prod", "region": "us-central1"}}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {
                **BASE_EKS,
                "gpuPools": [
                    {"name": "p", "gpu": "t4", "maxNodes": 1, "sharing": {"strategy": "mig", "migProfile": "1g.5gb"}}
                ],
            },
            "t4 has no MIG (MIG-capable: a100-40gb, a100-80gb, h100, h200, b200, gb200, gb300, b300, rtx-pro-6000)",
        ),
        (
            {
                **BASE_EKS,
                "gpuPools": [
                    {
                        "name": "p",
                        "gpu": "a100-40gb",
                        "gpusPerNode": 8,
                        "maxNodes": 1,
                        "sharing": {"strategy": "mps", "replicas": 2, "migProfile": "1g.5gb"},
                    }
                ],
            },
            "migProfile applies to strategy mig only; mps can't be combined with MIG",
        ),
        (
            {
                **BASE_EKS,
                "gpuPools": [
                    {
                        "name": "p",
                        "gpu": "a100-40gb",
                        "gpusPerNode": 8,
                        "maxNodes": 1,
                        "sharing": {"strategy": "mig", "migProfile": "2g.20gb"},
                    }
                ],
            },
            "2g.20gb is not a MIG profile of a100-40gb here (profiles: 1g.5gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb)",
        ),
        (
            {
                **BASE_GKE,
                "platform": "gke-standard",
                "gpuPools": [
                    {
                        "name": "p",
                        "gpu": "a100-40gb",
                        "maxNodes": 1,
                        "sharing": {"strategy": "mig", "migProfile": "4g.20gb"},
                    }
                ],
            },
            "4g.20gb is not a MIG profile of a100-40gb here (profiles: 1g.5gb, 2g.10gb, 3g.20gb, 7g.40gb)",
        ),
        (
            {
                **BASE_GKE,
                "platform": "gke-autopilot",
                "gpuPools": [{"name": "p", "gpu": "l4", "maxNodes": 1, "sharing": {"strategy": "mps", "replicas": 2}}],
            },
            "gke-autopilot does not offer mps (offered: time-slicing, mig)",
        ),
        (
            {
                **BASE_EKS,
                "platform": "eks-automode",
                "gpuPools": [
                    {"name": "p", "gpu": "l4", "maxNodes": 1, "sharing": {"strategy": "time-slicing", "replicas": 2}}
                ],
            },
            "eks-automode does not offer time-slicing (offered: none (its device plugin is managed by the cloud))",
        ),
        (
            {
                **BASE_EKS,
                "gpuPools": [
                    {
                        "name": "p",
                        "gpu": "a100-40gb",
                        "gpusPerNode": 8,
                        "maxNodes": 1,
                        "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
                        "sharing": {"strategy": "mig", "migProfile": "1g.5gb"},
                    }
                ],
            },
            "BOTTLEROCKET_x86_64_NVIDIA has no gpu-operator MIG manager; use AL2023_x86_64_NVIDIA for MIG",
        ),
        (
            {
                **BASE_EKS,
                "gpuPools": [{"name": "p", "gpu": "l4", "maxNodes": 1, "sharing": {"strategy": "time-slicing"}}],
            },
            "strategy time-slicing needs replicas (2-48)",
        ),
        (
            {
                **BASE_EKS,
                "gpuPools": [
                    {
                        "name": "p",
                        "gpu": "l4",
                        "maxNodes": 1,
                        "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
                        "sharing": {"strategy": "mps", "replicas": 2},
                    }
                ],
            },
            "BOTTLEROCKET_x86_64_NVIDIA runs its own device plugin, so the gpu-operator's mps config would not apply; "
            "use AL2023_x86_64_NVIDIA for shared GPUs",
        ),
    ],
)
def test_impossible_sharing_is_refused(raw: dict[str, Any], message: str) -> None:
    assert config_problems(raw) == {"gpuplane:gpuPools[0].sharing": message}
