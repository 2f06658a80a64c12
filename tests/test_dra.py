"""GPU claims (DRA) and ComputeDomains: the fragments a pod takes, the driver gpuplane installs, and what the
pools carry, held against the Kubernetes API (`resource.k8s.io/v1`, kubernetes-validate at the stacks'
minor), the published ComputeDomain CRD with its CEL rules, and facts restated here from upstream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest

from gpuplane.config import ConfigError, parse_config
from gpuplane.plan import Plan
from gpuplane.scheduling.placement import placement

from .conftest import load_stack_config, need_reference, schema_version, stack_with
from .graph import kube_objects, matches, tolerates

K8S = schema_version("aws-blackwell")


def config(stack: str, **pool_labels: dict[str, str]) -> Any:
    """A shipped stack's parsed config; `pool_labels` adds node labels to the named pools."""
    raw = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config(stack).items()}
    raw["gpuPools"] = [
        {**p, "labels": {**p.get("labels", {}), **pool_labels.get(p["name"], {})}} for p in raw["gpuPools"]
    ]
    return parse_config(raw)


PARTITIONED = {"b200": {"nvidia.com/mig.config": "all-1g.23gb"}}
"""The gpu-operator MIG manager's label on the aws-blackwell B200 pool: its GPUs split into 1g.23gb devices."""


def validate(obj: dict[str, Any]) -> None:
    kubernetes_validate.validate(obj, K8S, strict=True)


def pod_of(fragment: dict[str, Any]) -> dict[str, Any]:
    """A Pod assembled from a placement fragment the way its docstring tells a user to."""
    container = {
        "name": "main",
        "image": "nvcr.io/nvidia/cuda:13.0.0-base-ubuntu24.04",
        "resources": fragment["resources"],
    }
    spec: dict[str, Any] = {
        "containers": [container],
        "affinity": fragment["affinity"],
        "tolerations": fragment["tolerations"],
    }
    if "resourceClaims" in fragment:
        spec["resourceClaims"] = fragment["resourceClaims"]
    metadata: dict[str, Any] = {"name": "p", "labels": fragment.get("labels", {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


# --- claims ------------------------------------------------------------------------------------------------


def test_a_dra_pool_claims_gpus_instead_of_counting_them() -> None:
    f = placement(config("aws-blackwell"), "b200", 2)
    template = f["resourceClaimTemplate"]
    # Kubernetes DRA docs / the driver's demo gpu-test1.yaml: one request of the whole-GPU class, two devices.
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"] == {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}
    assert "nvidia.com/gpu" not in f["resources"].get("limits", {}), "a claimed GPU is not counted as well"
    assert f["resources"]["limits"] == {"vpc.amazonaws.com/efa": 2}, "the node's EFA share still comes by count"
    (claim,) = f["resourceClaims"]
    assert claim["resourceClaimTemplateName"] == template["metadata"]["name"]
    assert f["resources"]["claims"] == [{"name": claim["name"]}]
    validate(template)
    validate(pod_of(f))


def test_a_mig_claim_selects_the_profile_by_the_drivers_attribute() -> None:
    f = placement(config("aws-blackwell", **PARTITIONED), "b200", 3, mig="1g.23gb")
    exactly = f["resourceClaimTemplate"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["deviceClassName"] == "mig.nvidia.com"
    # the driver publishes the profile as attribute gpu.nvidia.com/profile (cmd/gpu-kubelet-plugin, mig.go)
    assert exactly["selectors"] == [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.23gb'"}}]
    assert exactly["count"] == 3
    validate(f["resourceClaimTemplate"])


def test_mig_claims_are_bounded_by_what_a_node_splits_into() -> None:
    cfg = config("aws-blackwell", **PARTITIONED)
    assert placement(cfg, "b200", 56, mig="1g.23gb")  # 8 GPUs x 7 instances of 1g.23gb (MIG user guide)
    with pytest.raises(ConfigError) as e:
        placement(cfg, "b200", 57, mig="1g.23gb")
    assert e.value.problems == [("gpus", "b200 nodes offer 1 to 56 1g.23gb MIG devices, not 57")]
    with pytest.raises(ConfigError) as e:
        placement(cfg, "b200", 1, mig="1g.10gb")
    ((key, reason),) = e.value.problems
    assert key == "mig" and "'1g.10gb' is not a MIG profile of b200" in reason


def test_a_mig_claim_needs_partitioned_gpus() -> None:
    """The DRA driver publishes MIG devices that exist (static MIG; DynamicMIG is alpha): on EKS the gpu-operator's
    MIG manager makes them from the node's nvidia.com/mig.config label; GKE makes none for a DRA pool."""
    with pytest.raises(ConfigError) as e:
        placement(config("aws-blackwell"), "b200", 1, mig="1g.23gb")
    ((key, reason),) = e.value.problems
    assert key == "mig" and "give the pool the gpu-operator MIG manager's label nvidia.com/mig.config" in reason
    with pytest.raises(ConfigError) as e:
        placement(config("gcp-blackwell", b200={"nvidia.com/mig.config": "all-1g.23gb"}), "b200", 1, mig="1g.23gb")
    ((key, reason),) = e.value.problems
    assert key == "mig" and "a GKE DRA pool has no MIG devices to claim" in reason


def test_a_queued_claim_with_selectors_needs_a_node_that_publishes_devices() -> None:
    """Kueue v0.19 checks a claim's CEL selectors against published ResourceSlices (pkg/dra/claims.go)."""
    from gpuplane.kueue.placement import queued_placement

    raw = {k.removeprefix("gpuplane:"): v for k, v in load_stack_config("aws-blackwell").items()}
    raw["queues"] = {"teams": [{"name": "research", "quota": {"b200": 16}}]}
    cfg = parse_config(raw)
    with pytest.raises(ConfigError) as e:
        queued_placement(cfg, "b200", 1, "research", selector="device.attributes['gpu.nvidia.com'].productName != ''")
    ((key, reason),) = e.value.problems
    assert key == "queue" and "set the pool's minNodes to 1 or more, or claim whole GPUs" in reason
    whole = queued_placement(cfg, "b200", 2, "research")
    assert whole["resourceClaimTemplate"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2


def test_a_selector_narrows_the_claim() -> None:
    cel = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('150Gi')) >= 0"
    f = placement(config("gcp-blackwell"), "b200", 1, selector=cel)
    exactly = f["resourceClaimTemplate"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["selectors"] == [{"cel": {"expression": cel}}]
    validate(f["resourceClaimTemplate"])


def test_claim_arguments_on_a_device_plugin_pool_are_refused() -> None:
    with pytest.raises(ConfigError) as e:
        placement(config("gcp-blackwell"), "inference", 1, mig="1g.24gb", selector="true")
    assert e.value.problems == [
        ("mig", "inference counts GPUs through the device plugin; claims need gpuAllocation: dra"),
        ("selector", "inference counts GPUs through the device plugin; claims need gpuAllocation: dra"),
    ]


def test_a_device_plugin_pool_still_counts_gpus() -> None:
    f = placement(config("gcp-blackwell"), "inference", 1)
    assert f["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert "resourceClaimTemplate" not in f


# --- ComputeDomains ----------------------------------------------------------------------------------------

NVLINK_LABEL = {"aws-blackwell": "nvidia.com/gpu.clique", "gcp-blackwell": "cloud.google.com/gce-topology-subblock"}
"""The label naming a node's NVLink domain: GFD's clique label on EKS (EKS user guide, ml-eks-nvidia-ultraserver),
GKE's topology sub-block on A4X."""


@pytest.mark.parametrize("stack", sorted(NVLINK_LABEL))
def test_a_compute_domain_job_shares_one_channel_within_one_nvlink_domain(stack: str) -> None:
    f = placement(config(stack), "nvl72", 4, job="train", compute_domain=16)
    domain = f["computeDomain"]
    assert domain["apiVersion"] == "resource.nvidia.com/v1beta1" and domain["kind"] == "ComputeDomain"
    assert domain["spec"] == {"numNodes": 16, "channel": {"resourceClaimTemplate": {"name": "train-channel"}}}
    names = {c["name"]: c["resourceClaimTemplateName"] for c in f["resourceClaims"]}
    assert names["channel"] == "train-channel" and names["gpus"] == f["resourceClaimTemplate"]["metadata"]["name"]
    assert {c["name"] for c in f["resources"]["claims"]} == {"channel", "gpus"}
    (term,) = f["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {"labelSelector": {"matchLabels": {"gpuplane.io/job": "train"}}, "topologyKey": NVLINK_LABEL[stack]}
    assert f["labels"] == {"gpuplane.io/job": "train"}
    validate(pod_of(f))


def test_the_compute_domain_validates_against_its_published_crd() -> None:
    from .crds import cel_results, crd_schema, schema_errors

    ref = need_reference()
    domain = placement(config("aws-blackwell"), "nvl72", 4, job="train", compute_domain=18)["computeDomain"]
    schema = crd_schema(ref, domain["apiVersion"], domain["kind"])
    assert not schema_errors(domain, schema)
    failures, evaluated = cel_results(domain, schema)
    assert not failures and evaluated, (failures, evaluated)
    broken = {**domain, "spec": {"numNodes": -1, "channel": {"allocationMode": "Some"}}}
    assert schema_errors(broken, schema), "the CRD refuses a negative numNodes, a missing template and a bad mode"


def test_a_compute_domain_stays_within_one_nvlink_domain() -> None:
    cfg = config("aws-blackwell")
    with pytest.raises(ConfigError) as e:
        placement(cfg, "nvl72", 4, job="train", compute_domain=19)
    assert e.value.problems == [("nodes", "one NVLink domain of nvl72 spans 1 to 18 nodes, not 19")]
    with pytest.raises(ConfigError) as e:
        placement(cfg, "b200", 8, job="train", compute_domain=2)
    assert e.value.problems == [
        ("pool", "b200's NVLink domain ends at the node: a ComputeDomain is for GB200 / GB300 pools")
    ]
    with pytest.raises(ConfigError) as e:
        placement(cfg, "nvl72", 4, compute_domain=2)
    assert e.value.problems == [("job", "required with compute_domain: it names the job's ComputeDomain")]


# --- what the stacks install and label -------------------------------------------------------------------


def _release(plan: Plan, chart: str) -> Any:
    found = [
        r for r in plan.resources if r.type.endswith("helm.sh/v3:Release") and str(r.inputs["chart"]).endswith(chart)
    ]
    return found[0] if found else None


def _pool_labels(plan: Plan) -> dict[str, tuple[dict[str, str], set[tuple[str, str, str]]]]:
    """Pool name -> (node labels, taints as (key, value, Kubernetes effect)) from the planned node pools/groups."""
    from .graph import GKE_EFFECTS, gpu_node_pools, node_taints

    out = {}
    for r in gpu_node_pools(plan):
        labels = r.inputs["nodeConfig"]["labels"]
        out[labels["gpuplane.io/pool"]] = (labels, node_taints(r))
    for r in plan.by_type("eks:index:ManagedNodeGroup"):
        labels = r.inputs.get("labels") or {}
        if "gpuplane.io/pool" in labels:
            taints = {(t["key"], t.get("value", ""), GKE_EFFECTS[t["effect"]]) for t in r.inputs.get("taints") or []}
            out[labels["gpuplane.io/pool"]] = (labels, taints)
    return out


@pytest.mark.parametrize(("stack", "root"), [("aws-blackwell", "/"), ("gcp-blackwell", "/home/kubernetes/bin/nvidia")])
def test_the_dra_driver_serves_exactly_the_claiming_and_nvlink_pools(
    stack: str, root: str, plan_of: Callable[..., Plan]
) -> None:
    plan = plan_of(stack)
    values = _release(plan, "dra-driver-nvidia-gpu").inputs["values"]
    assert values["nvidiaDriverRoot"] == root
    # chart 0.4.1 templates/validation.yaml refuses GPU claims without the override
    assert values["resources"]["gpus"]["enabled"] is True and values["gpuResourcesEnabledOverride"] is True
    assert values["resources"]["computeDomains"]["enabled"] is True
    selector = values["kubeletPlugin"]["nodeSelector"]
    tolerations = values["kubeletPlugin"]["tolerations"]
    pools = _pool_labels(plan)
    served = {name for name, (labels, _) in pools.items() if all(labels.get(k) == v for k, v in selector.items())}
    assert served == {name for name in pools if name in ("b200", "nvl72")}, served
    for name in served:
        labels, taints = pools[name]
        assert all(tolerates(tolerations, t) for t in taints), (name, taints)
        assert labels["nvidia.com/gpu.present"] == "true", "the chart's kubelet plugin affinity requires it"


DEVICE_PLUGIN_OFF = {
    # gpu-operator v26.7.0 assets/state-device-plugin: the DaemonSet selects ...deploy.device-plugin=true
    "aws-blackwell": ("nvidia.com/gpu.deploy.device-plugin", "false"),
    # GKE "Set up DRA": this label turns GKE's own device plugin off
    "gcp-blackwell": ("gke-no-default-nvidia-gpu-device-plugin", "true"),
}


@pytest.mark.parametrize("stack", sorted(DEVICE_PLUGIN_OFF))
def test_dra_pools_keep_the_device_plugins_off(stack: str, plan_of: Callable[..., Plan]) -> None:
    off = set(DEVICE_PLUGIN_OFF.values())
    for name, (labels, _) in _pool_labels(plan_of(stack)).items():
        dra = name in ("b200", "nvl72")
        mine = {(k, v) for k, v in labels.items() if (k, v) in off}
        # the cloud's own label on its DRA pools, and no other cloud's label on any pool
        assert mine == ({DEVICE_PLUGIN_OFF[stack]} if dra else set()), (stack, name, mine)


def test_gke_installs_no_driver_on_a_dra_pool_and_gpuplane_runs_gkes_installer(plan_of: Callable[..., Plan]) -> None:
    plan = plan_of("gcp-blackwell")
    pools = {r.inputs["name"]: r for r in plan.resources if r.type == "gcp:container/nodePool:NodePool"}
    versions = {
        n: r.inputs["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"]
        for n, r in pools.items()
        if r.inputs["nodeConfig"].get("guestAccelerators")
    }
    assert versions == {"b200": "INSTALLATION_DISABLED", "nvl72": "INSTALLATION_DISABLED", "inference": "DEFAULT"}
    (installer,) = [r for r in kube_objects(plan) if r.inputs["metadata"]["name"] == "nvidia-driver-installer"]
    spec = installer.inputs["spec"]["template"]["spec"]
    # GKE labels nodes whose driver it installs with cloud.google.com/gke-gpu-driver-version; the installer
    # (container-engine-accelerators daemonset-preloaded.yaml) runs only where that label is missing.
    gke_installed = {
        "cloud.google.com/gke-accelerator": "nvidia-rtx-pro-6000",
        "cloud.google.com/gke-gpu-driver-version": "default",
    }
    disabled = {"cloud.google.com/gke-accelerator": "nvidia-b200"}
    assert matches(spec["affinity"], disabled) and not matches(spec["affinity"], gke_installed)
    validate(installer.inputs)
    # A4X gets container-engine-accelerators' A4X variant (latest driver), and the two never share a node
    (a4x,) = [r for r in kube_objects(plan) if r.inputs["metadata"]["name"] == "nvidia-driver-installer-a4x"]
    a4x_node = {
        "cloud.google.com/gke-accelerator": "nvidia-gb200",
        "node.kubernetes.io/instance-type": "a4x-highgpu-4g",
    }
    a4_node = {**disabled, "node.kubernetes.io/instance-type": "a4-highgpu-8g"}
    a4x_spec = a4x.inputs["spec"]["template"]["spec"]
    assert matches(a4x_spec["affinity"], a4x_node) and not matches(spec["affinity"], a4x_node)
    assert matches(spec["affinity"], a4_node) and not matches(a4x_spec["affinity"], a4_node)
    assert "--version=latest" in a4x_spec["initContainers"][0]["command"][-1]
    # neither reinstalls over a loaded driver (container-engine-accelerators 918b9958)
    assert all("lsmod | grep nvidia" in s["initContainers"][0]["command"][-1] for s in (spec, a4x_spec))


def test_gke_arm_nodes_are_tainted_and_every_agent_tolerates_them(plan_of: Callable[..., Plan]) -> None:
    pools = _pool_labels(plan_of("gcp-blackwell"))
    arm = ("kubernetes.io/arch", "arm64", "NoSchedule")  # GKE docs: Arm nodes carry this taint
    assert arm in pools["nvl72"][1] and arm not in pools["b200"][1]


def test_a_stack_without_claims_or_nvlink_installs_no_dra_driver(plan_of: Callable[..., Plan]) -> None:
    for stack in ("gcp-standard", "aws-managed"):
        plan = plan_of(stack)
        assert _release(plan, "dra-driver-nvidia-gpu") is None
        assert not [r for r in kube_objects(plan) if r.inputs["metadata"]["name"] == "nvidia-driver-installer"]


@pytest.mark.parametrize("stack", ["aws-blackwell", "gcp-blackwell"])
def test_a_nvlink_pool_counting_gpus_gets_compute_domains_only(stack: str, plan_of: Callable[..., Plan]) -> None:
    from gpuplane.plan.deploy import check

    raw = load_stack_config(stack)
    pools = [{**p, "gpuAllocation": "device-plugin"} for p in raw["gpuplane:gpuPools"] if p["name"] == "nvl72"]
    plan = plan_of(stack_with(stack, gpuPools=pools, gpuAllocation=None))
    values = _release(plan, "dra-driver-nvidia-gpu").inputs["values"]
    # the EKS UltraServer guide and cluster-toolkit's A4X blueprint: GPUs by count, the driver for ComputeDomains
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}
    assert values["gpuResourcesEnabledOverride"] is False
    labels, _ = _pool_labels(plan)["nvl72"]
    assert labels.get("gpuplane.io/dra-plugin") == "true" and "nvidia.com/gpu.deploy.device-plugin" not in labels
    # the chart's kubelet plugin requires NFD's labels or this one, and GKE runs no NFD
    assert labels["nvidia.com/gpu.present"] == "true"
    assert [str(v) for v in check(plan, rerun=False)] == []


def test_kueue_counts_claimed_gpus_as_the_gpu_quota(plan_of: Callable[..., Plan]) -> None:
    import yaml

    queues = {"teams": [{"name": "research", "quota": {"b200": 16}}]}
    values = _release(plan_of(stack_with("aws-blackwell", queues=queues)), "kueue").inputs["values"]
    manager = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    # Kueue v0.19 apis/config/v1beta2 DeviceClassMapping: the quota resource name and the classes counted as it
    # Kueue marks a workload with a claim of an unmapped class inadmissible (pkg/dra/claims.go): every class a
    # placement can claim is mapped, whole GPUs as the GPU quota
    mappings = {m["name"]: m["deviceClassNames"] for m in manager["resources"]["deviceClassMappings"]}
    assert mappings["nvidia.com/gpu"] == ["gpu.nvidia.com"]
    claimed = {"gpu.nvidia.com", "mig.nvidia.com", "compute-domain-default-channel.nvidia.com"}
    assert {c for classes in mappings.values() for c in classes} == claimed
    plain = _release(plan_of("aws-reserved"), "kueue").inputs["values"]
    assert (
        "deviceClassMappings" not in yaml.safe_load(plain["managerConfig"]["controllerManagerConfigYaml"])["resources"]
    )


def test_a_claim_template_change_replaces_it_deleting_first(plan_of: Callable[..., Plan]) -> None:
    """The API server refuses updates to a ResourceClaimTemplate's spec (resource.k8s.io/v1: "spec is immutable")
    and pulumi-kubernetes' diff has no resource.k8s.io entry, so gpuplane replaces it; its name is fixed, so a
    create-first replacement would collide on it."""
    templates = plan_of("aws-blackwell").by_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert templates
    for t in templates:
        assert t.replace_on_changes == ("spec",) and t.delete_before_replace, t.urn


def test_the_simulator_sees_which_gke_nodes_have_gkes_driver(plan_of: Callable[..., Plan]) -> None:
    """GKE labels nodes whose driver it installs (`cloud.google.com/gke-gpu-driver-version`) and A4X nodes are Arm:
    the simulator's node shapes carry that, so the driver installer is checked to reach exactly the DRA pools."""
    from gpuplane.plan.deploy.scheduling import node_shapes

    shapes = {s.source.rsplit("::", 1)[-1]: s.labels for s in node_shapes(plan_of("gcp-blackwell"))}
    assert "cloud.google.com/gke-gpu-driver-version" not in shapes["ml-blackwell-b200"]
    assert shapes["ml-blackwell-inference"]["cloud.google.com/gke-gpu-driver-version"] == {"default"}
    assert shapes["ml-blackwell-nvl72"]["kubernetes.io/arch"] == {"arm64"}
    assert shapes["ml-blackwell-b200"]["kubernetes.io/arch"] == {"amd64"}


def test_the_driver_component_refuses_bad_arguments_before_registering_anything() -> None:
    from gpuplane.args.checks import ArgsError
    from gpuplane.nvidia.dra import NvidiaDraDriver

    from .test_library import run

    with pytest.raises(ArgsError) as info:
        run(lambda: NvidiaDraDriver("dra", {"host": "aks", "gpu_nodes": [], "namespaces": "x"}))  # type: ignore[typeddict-item]
    paths = [p for p, _ in info.value.problems]
    assert "host" in paths and "namespaces" in paths, info.value.problems


def test_the_driver_component_serves_a_users_own_pools() -> None:
    """Used alone, as pulumi-eks's pieces are: a user's own GPU node groups, labelled as the component says."""
    from gpuplane import DraHostKind, GpuAllocation
    from gpuplane.nvidia.dra import NvidiaDraDriver

    from .test_library import of_type, run

    nodes = [
        {
            "pool": "mine",
            "labels": {"gpuplane.io/dra-plugin": "true"},
            "taints": [{"key": "team", "value": "ml", "effect": "NoSchedule"}],
            "resource": "nvidia.com/gpu",
            "allocation": GpuAllocation.DRA,
            "nodes": 4,
        }
    ]
    regs = run(lambda: NvidiaDraDriver("dra", {"host": DraHostKind.GKE, "gpu_nodes": nodes}))
    (release,) = of_type(regs, "kubernetes:helm.sh/v3:Release")
    values = release.inputs["values"]
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert tolerates(values["kubeletPlugin"]["tolerations"], ("team", "ml", "NoSchedule"))
    (quota,) = of_type(regs, "kubernetes:core/v1:ResourceQuota")  # GKE admits system-node-critical pods with it
    assert quota.inputs["spec"]["scopeSelector"]["matchExpressions"][0]["values"] == ["system-node-critical"]


def test_turning_claims_on_says_what_it_replaces(plan_of: Callable[..., Plan]) -> None:
    """GKE installs no driver on a DRA pool, and a node pool's guest_accelerator is ForceNew
    (terraform-provider-google node_config.go): turning claims on replaces the pool, and the diff says so. On EKS
    only node labels change, which a managed node group updates in place (terraform-provider-aws eks/node_group.go)."""
    from gpuplane.plan.diff import diff

    from .test_replacement import doc

    def switched(stack: str, pool: str) -> Any:
        pools = [
            {**p, "gpuAllocation": "dra"} if p["name"] == pool else p
            for p in load_stack_config(stack)["gpuplane:gpuPools"]
        ]
        cluster = {**load_stack_config(stack)["gpuplane:cluster"], "kubernetesVersion": "1.35"}
        return diff(
            doc(plan_of(stack_with(stack, cluster=cluster))),
            doc(plan_of(stack_with(stack, cluster=cluster, gpuPools=pools))),
        )

    gke = switched("gcp-standard", "training")
    replaced = {c.urn.rsplit("::", 1)[-1] for c in gke.changed if c.replaces}
    assert "ml-gke-training" in replaced, replaced
    eks = switched("aws-managed", "training")
    groups = [c for c in eks.changed if c.type == "eks:index:ManagedNodeGroup"]
    assert groups and not any(c.replaces for c in groups), [c.urn for c in groups]


def test_the_operators_device_plugin_is_off_when_every_pool_claims(plan_of: Callable[..., Plan]) -> None:
    """gpu-operator v26.7.0's validator drops its plugin check only when the device plugin is disabled in the
    ClusterPolicy (controllers/object_controls.go); with it on, a DRA node fails validation."""
    values = _release(plan_of("aws-blackwell"), "gpu-operator").inputs["values"]
    assert values["devicePlugin"]["enabled"] is False
    raw = load_stack_config("aws-blackwell")
    counted = {"name": "serving", "gpu": "l4", "maxNodes": 2, "gpuAllocation": "device-plugin"}
    mixed = _release(
        plan_of(stack_with("aws-blackwell", gpuPools=[*raw["gpuplane:gpuPools"], counted])), "gpu-operator"
    )
    assert mixed.inputs["values"]["devicePlugin"]["enabled"] is True


def test_a_local_zone_subnet_is_for_gpu_nodes_only(plan_of: Callable[..., Plan]) -> None:
    """EKS user guide, network requirements: the cluster's subnets can't be in a Local Zone. The P6e-GB200
    subnet (aws.nodeSubnetIds) reaches neither the control plane nor the system pool."""
    plan = plan_of("aws-blackwell")
    local = "subnet-0a1b2c3d4e5f6000d"
    (cluster,) = plan.by_type("eks:index:Cluster")
    assert local not in cluster.inputs["privateSubnetIds"]
    groups = {r.name.rsplit("-", 1)[-1]: r.inputs["subnetIds"] for r in plan.by_type("eks:index:ManagedNodeGroup")}
    assert local not in groups["system"]
    # the UltraServer group draws only from the node subnets, the B200 group (us-east-1a) only from the cluster's:
    # the mock answers EC2's zone filter with the first candidate, so the candidates are what this checks
    assert groups["nvl72"] == [local] and local not in groups["b200"]
