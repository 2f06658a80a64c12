"""Cold start per GPU pool (`gpuPools[].coldStart`, docs/cold-start.md): what each platform turns on by default,
read from the planned graph; the capacity summary's estimate against hand-computed seconds; one test per error."""

from __future__ import annotations

import base64
import copy
import email
import tomllib
from typing import Any

import pytest
import yaml

from gpuplane.config import parse_config
from gpuplane.plan import Plan, PlannedResource, load
from gpuplane.stack.capacity import summary, table

from .conftest import ROOT, cached_plan, config_problems, load_stack_config, need_reference, stack_with
from .crds import cel_results, crd_schema, schema_errors, strict
from .test_baseline import encrypted

LT = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
GKE_POOL = "gcp:container/nodePool:NodePool"
SNAPSHOT = "snap-0123456789abcdef0"


def of_type(plan: Plan, kind: str) -> dict[str, PlannedResource]:
    return {r.name: r for r in plan.resources if r.type == kind}


def pools_of(stack: str) -> list[dict[str, Any]]:
    return copy.deepcopy(load(stack, ROOT).config["gpuplane:gpuPools"])


def bottlerocket(pools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in p.items() if k != "sharing"} | {"amiType": "BOTTLEROCKET_x86_64_NVIDIA"} for p in pools]


def mime_part(text: str) -> tuple[str, Any]:
    """The one part of a MIME multi-part user data document: its content type and YAML body."""
    message = email.message_from_string(text)
    assert message.is_multipart()
    parts = [p for p in message.walk() if not p.is_multipart()]
    assert len(parts) == 1, parts
    return parts[0].get_content_type(), yaml.safe_load(str(parts[0].get_payload()))


def ebs(lt: PlannedResource) -> dict[str, dict[str, Any]]:
    return {m["deviceName"]: m["ebs"] for m in lt.inputs["blockDeviceMappings"]}


# --- GKE ---------------------------------------------------------------------------------------------------


def test_gke_standard_pools_stream_images_and_take_a_named_secondary_boot_disk() -> None:
    pools = pools_of("gcp-dws")
    pools[2]["coldStart"] = {"secondaryBootDisk": "projects/acme-ml-prod/global/images/vllm-cache"}
    pools[1]["coldStart"] = {"imageStreaming": False}
    graph = of_type(cached_plan(stack_with("gcp-dws", gpuPools=pools)), GKE_POOL)
    training, finetune, serving = (
        graph[f"ml-dws-{p}"].inputs["nodeConfig"] for p in ("training", "finetune", "serving")
    )
    assert training["gcfsConfig"] == {"enabled": True} and "secondaryBootDisks" not in training
    assert finetune["gcfsConfig"] == {"enabled": False}, "an explicit false is sent (the field is Computed)"
    assert serving["gcfsConfig"] == {"enabled": True}
    assert serving["secondaryBootDisks"] == [
        {"diskImage": "projects/acme-ml-prod/global/images/vllm-cache", "mode": "CONTAINER_IMAGE_CACHE"}
    ]
    assert "gcfsConfig" not in graph["ml-dws-system"].inputs["nodeConfig"], "the system pool is left alone"


def test_gke_nap_streams_images_cluster_wide_unless_a_class_turns_it_off() -> None:
    def defaults(plan: Plan) -> Any:
        (cluster,) = of_type(plan, "gcp:container/cluster:Cluster").values()
        return cluster.inputs["nodePoolDefaults"]

    assert defaults(cached_plan("gcp-nap")) == {"nodeConfigDefaults": {"gcfsConfig": {"enabled": True}}}
    pools = pools_of("gcp-nap")
    pools[0]["coldStart"] = {"imageStreaming": False}
    off = defaults(cached_plan(stack_with("gcp-nap", gpuPools=pools)))
    assert off == {"nodeConfigDefaults": {"gcfsConfig": {"enabled": False}}}


# --- EKS managed node groups --------------------------------------------------------------------------------


def test_al2023_launch_template_turns_on_fast_image_pull_in_a_mime_part_with_600_mibps() -> None:
    lts = of_type(cached_plan("aws-managed"), LT)
    lt = lts["ml-eks-inference-lt"]
    kind, node_config = mime_part(base64.b64decode(lt.inputs["userData"]).decode())
    assert kind == "application/node.eks.aws"
    assert node_config["kind"] == "NodeConfig" and node_config["apiVersion"] == "node.eks.aws/v1alpha1"
    assert node_config["spec"] == {"featureGates": {"FastImagePull": True}}
    assert ebs(lt)["/dev/xvda"] == {
        "volumeSize": 200,
        "volumeType": "gp3",
        "encrypted": "true",
        "deleteOnTermination": "true",
        "throughput": 600,
    }
    system = lts["ml-eks-system-lt"]
    assert "userData" not in system.inputs and "throughput" not in ebs(system)["/dev/xvda"]


def test_parallel_pull_off_leaves_the_template_as_before_and_fast_disks_get_their_iops() -> None:
    pools = pools_of("aws-managed")
    pools[0]["coldStart"] = {"parallelPull": False}
    pools[1]["coldStart"] = {"diskThroughputMiBps": 1000}
    lts = of_type(cached_plan(stack_with("aws-managed", gpuPools=pools)), LT)
    off = lts["ml-eks-inference-lt"]
    assert "userData" not in off.inputs
    assert ebs(off)["/dev/xvda"] == {
        "volumeSize": 200,
        "volumeType": "gp3",
        "encrypted": "true",
        "deleteOnTermination": "true",
    }
    fast = ebs(lts["ml-eks-training-lt"])["/dev/xvda"]
    assert (fast["throughput"], fast["iops"]) == (1000, 4000), "gp3: at most 0.25 MiB/s per IOPS"


def test_bottlerocket_user_data_is_toml_with_the_soci_snapshotter_on_the_data_volume() -> None:
    pools = bottlerocket(pools_of("aws-managed"))
    lt = of_type(cached_plan(stack_with("aws-managed", gpuPools=pools)), LT)["ml-eks-inference-lt"]
    settings = tomllib.loads(base64.b64decode(lt.inputs["userData"]).decode())["settings"]
    assert settings["container-runtime"] == {"snapshotter": "soci"}
    plugin = settings["container-runtime-plugins"]["soci-snapshotter"]
    assert plugin["pull-mode"] == "parallel-pull-unpack"
    assert plugin["parallel-pull-unpack"]["max-concurrent-downloads-per-image"] == 10
    volumes = ebs(lt)
    assert "throughput" not in volumes["/dev/xvda"], "the 4 GiB OS volume holds no images"
    assert volumes["/dev/xvdb"]["throughput"] == 600


def test_snapshot_volume_takes_the_snapshots_encryption_and_keeps_parallel_pull_off() -> None:
    pools = bottlerocket(pools_of("aws-managed"))
    pools[1]["coldStart"] = {"imageCacheSnapshot": SNAPSHOT}
    lt = of_type(cached_plan(stack_with("aws-managed", gpuPools=pools)), LT)["ml-eks-training-lt"]
    volumes = ebs(lt)
    assert volumes["/dev/xvdb"] == {
        "volumeSize": 1000,
        "volumeType": "gp3",
        "deleteOnTermination": "true",
        "snapshotId": SNAPSHOT,
    }, "a volume from a snapshot can't be given `encrypted` (botocore LaunchTemplateEbsBlockDeviceRequest)"
    assert volumes["/dev/xvda"]["encrypted"] == "true"
    assert all(encrypted(m, "true", "snapshotId") for m in lt.inputs["blockDeviceMappings"]), "the baseline's exception"
    assert not encrypted({"deviceName": "/dev/xvda", "ebs": volumes["/dev/xvdb"]}, "true", "snapshotId")
    assert "userData" not in lt.inputs, "switching to soci would wipe the snapshot's cached images"


# --- Karpenter ----------------------------------------------------------------------------------------------


def test_karpenter_node_classes_carry_the_settings_and_pass_their_crd() -> None:
    ref = need_reference()
    pools = bottlerocket([p for p in pools_of("aws-multinode") if p["name"] == "inference"])
    pools.append({**pools[0], "name": "cached", "coldStart": {"imageCacheSnapshot": SNAPSHOT, "imageSizeGb": 20}})
    classes = of_type(cached_plan(stack_with("aws-multinode", gpuPools=pools)), NODE_CLASS)
    schema = crd_schema(ref, "karpenter.k8s.aws/v1", "EC2NodeClass")
    specs = {}
    for r in classes.values():
        obj = {k: r.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}
        assert schema_errors(obj, strict(schema)) == [], r.name
        assert cel_results(obj, schema)[0] == [], r.name
        specs[obj["metadata"]["name"]] = obj["spec"]
    shared, own = specs["gpu-bottlerocket-200g"], specs["gpu-bottlerocket-200g-cached"]
    assert tomllib.loads(shared["userData"])["settings"]["container-runtime"]["snapshotter"] == "soci"
    assert shared["blockDeviceMappings"][1]["ebs"]["throughput"] == 600
    assert "userData" not in own
    data = own["blockDeviceMappings"][1]
    assert data["deviceName"] == "/dev/xvdb" and data["ebs"]["snapshotID"] == SNAPSHOT
    assert "encrypted" not in data["ebs"] and own["blockDeviceMappings"][0]["ebs"]["encrypted"] is True


def test_karpenter_al2023_class_user_data_is_a_nodeconfig_mime_document() -> None:
    classes = of_type(cached_plan("aws-multinode"), NODE_CLASS)
    for r in classes.values():
        kind, node_config = mime_part(r.inputs["spec"]["userData"])
        assert kind == "application/node.eks.aws", r.name
        assert node_config["spec"]["featureGates"] == {"FastImagePull": True}, r.name


# --- the estimate -------------------------------------------------------------------------------------------


def rows(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["pool"]: r["coldStart"] for r in summary(parse_config(raw))["rows"]}


def namespace(stack: str) -> dict[str, Any]:
    return {k.removeprefix("gpuplane:"): v for k, v in load_stack_config(stack).items() if k.startswith("gpuplane:")}


def test_estimate_on_eks_by_hand() -> None:
    """KBP: 9,354,342,327 bytes pulled in 39.553 s (SOCI) and 130.813 s (default). 10 GB of image is
    9536.74 MiB; SOCI at 600 MiB/s: network 10e9 x 39.553 / 9354342327 = 42.28 s, disk 9536.74 x 2.15 / 600 =
    34.17 s, so 42.3. Default on gp3's 125 MiB/s: network 139.84 s, disk 9536.74 x 2.15 / 125 = 164.03 s."""
    raw = namespace("aws-managed")
    got = rows(raw)["inference"]
    assert (got["method"], got["diskMiBps"], got["imagePullS"]) == ("SOCI parallel", 600.0, 42.3)
    assert (got["nodeBootS"], got["driverReadyS"], got["totalS"]) == (60.0, 30.0, 132.3)
    assert got["assumed"] == ["boot-eks", "driver-in-image"]
    raw["gpuPools"][0]["coldStart"] = {"parallelPull": False}
    off = rows(raw)["inference"]
    assert (off["method"], off["diskMiBps"], off["imagePullS"], off["totalS"]) == ("default pull", 125.0, 164.0, 254.0)


def test_estimate_on_gke_by_hand() -> None:
    """gcp-dws's finetune pool: a 500 GB pd-balanced disk writes at max(140, 0.28 x 500) = 140 MiB/s. Without
    streaming a 20 GB image (19073.49 MiB): network 20e9 x 130.813 / 9354342327 = 279.68 s, disk 19073.49 x 2.15 /
    140 = 292.91 s, so the disk bounds it: 292.9. Its 1000 GB pd-ssd training pool writes at 0.48 x 1000 = 480
    MiB/s (disk 85.43 s): the network's 279.7. With streaming (the default) 30 s whatever the size (ai-on-gke's
    measured end-to-end start of a 5.4 GB image), so 60 s boot + 30 s driver + 30 s = 120 s."""
    raw = namespace("gcp-dws")
    for p in raw["gpuPools"]:
        p["coldStart"] = {"imageSizeGb": 20}
    on = rows(raw)["finetune"]
    assert (on["method"], on["imagePullS"], on["totalS"], on["diskMiBps"]) == ("image streaming", 30.0, 120.0, None)
    for p in raw["gpuPools"]:
        p["coldStart"]["imageStreaming"] = False
    off = rows(raw)
    finetune, training = off["finetune"], off["training"]
    assert (finetune["method"], finetune["diskMiBps"], finetune["imagePullS"]) == ("default pull", 140.0, 292.9)
    assert finetune["totalS"] == 382.9 and finetune["rate"] == "65.1 MiB/s"
    assert (training["diskMiBps"], training["imagePullS"], training["totalS"]) == (480.0, 279.7, 369.7)
    assert "pull-default-gke" in finetune["assumed"]


def test_estimate_of_a_snapshot_cache_and_a_secondary_boot_disk_is_their_fixed_time() -> None:
    raw = namespace("aws-managed")
    for p in raw["gpuPools"]:
        p.pop("sharing", None)
        p["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"
    raw["gpuPools"][1]["coldStart"] = {"imageCacheSnapshot": SNAPSHOT, "imageSizeGb": 100}
    assert rows(raw)["training"]["method"] == "snapshot cache" and rows(raw)["training"]["imagePullS"] == 5.0
    gke = namespace("gcp-dws")
    gke["gpuPools"][2]["coldStart"] = {"secondaryBootDisk": "global/images/vllm-cache"}
    assert (rows(gke)["serving"]["method"], rows(gke)["serving"]["totalS"]) == ("secondary boot disk", 95.0)


def test_capacity_output_and_table_show_the_estimate() -> None:
    plan = cached_plan("aws-managed")
    out = plan.outputs["capacity"]["rows"][0]["coldStart"]
    assert set(out) == {
        "nodeBootS",
        "driverReadyS",
        "imagePullS",
        "totalS",
        "method",
        "imageGb",
        "diskMiBps",
        "rate",
        "assumed",
    }
    text = table(plan.outputs["capacity"])
    assert "Cold start per new node" in text and "SOCI parallel" in text and "assumed, no published figure" in text


# --- one test per error -------------------------------------------------------------------------------------

from .test_config_oracles import EKS, GKE  # noqa: E402  (one small stack per cloud)

KEY = "gpuplane:gpuPools[0].coldStart."


def with_cold(base: dict[str, Any], platform: str | None = None, **cold: Any) -> dict[str, Any]:
    raw = copy.deepcopy(base)
    if platform:
        raw["platform"] = platform
    raw["gpuPools"][0]["coldStart"] = cold
    return raw


def error(raw: dict[str, Any], key: str) -> str:
    found = config_problems(raw)
    assert set(found) == {KEY + key}, found
    return found[KEY + key]


def test_image_streaming_on_eks() -> None:
    assert error(with_cold(EKS, imageStreaming=True), "imageStreaming").startswith("applies to GKE, not eks-managed")


def test_image_streaming_on_autopilot() -> None:
    raw = with_cold(GKE, "gke-autopilot", imageStreaming=False)
    assert "gke-autopilot always streams images" in error(raw, "imageStreaming")


def test_nap_classes_disagree_on_image_streaming() -> None:
    raw = with_cold(GKE, "gke-nap", imageStreaming=False)
    raw["gpuPools"].append(
        {"name": "training", "gpu": "a100-40gb", "maxNodes": 1, "coldStart": {"imageStreaming": True}}
    )
    found = config_problems(raw)
    assert set(found) == {KEY + "imageStreaming", "gpuplane:gpuPools[1].coldStart.imageStreaming"}
    assert "every class that sets it must agree" in found[KEY + "imageStreaming"]


def test_secondary_boot_disk_on_eks() -> None:
    msg = error(with_cold(EKS, secondaryBootDisk="global/images/cache"), "secondaryBootDisk")
    assert msg.startswith("applies to GKE Standard, not eks-managed (on EKS Bottlerocket: imageCacheSnapshot)")


def test_secondary_boot_disk_on_nap() -> None:
    msg = error(with_cold(GKE, "gke-nap", secondaryBootDisk="global/images/cache"), "secondaryBootDisk")
    assert msg.startswith("not supported on gke-nap yet: its nodes would need a ComputeClass")


def test_secondary_boot_disk_without_streaming() -> None:
    raw = with_cold(GKE, imageStreaming=False, secondaryBootDisk="global/images/cache")
    assert error(raw, "secondaryBootDisk") == "needs image streaming (GKE): remove imageStreaming: false"


def test_secondary_boot_disk_not_an_image() -> None:
    msg = error(with_cold(GKE, secondaryBootDisk="gs://bucket/cache.tar"), "secondaryBootDisk")
    assert "must be a disk image: global/images/NAME" in msg


def test_secondary_boot_disk_on_an_old_cluster() -> None:
    raw = with_cold(GKE, secondaryBootDisk="global/images/cache")
    raw["cluster"]["kubernetesVersion"] = "1.28.2-gke.100"
    assert "needs GKE 1.28.3-gke.1067000 or later" in error(raw, "secondaryBootDisk")
    raw["cluster"]["kubernetesVersion"] = "1.28"
    parse_config(raw)  # GKE picks 1.28's default patch, long past it


def test_parallel_pull_on_gke() -> None:
    assert error(with_cold(GKE, parallelPull=True), "parallelPull").startswith("applies to EKS, not gke-standard")


def test_parallel_pull_on_auto_mode() -> None:
    raw = with_cold(EKS, "eks-automode", parallelPull=False)
    assert "eks-automode has SOCI parallel pull built in" in error(raw, "parallelPull")


def test_parallel_pull_on_an_old_karpenter_image() -> None:
    raw = with_cold(EKS, "eks-karpenter", parallelPull=True)
    raw["karpenter"] = {"amiVersion": "v20250505"}
    assert "AL2023_x86_64_NVIDIA at release v20250505 has no SOCI parallel pull" in error(raw, "parallelPull")


def test_parallel_pull_with_a_snapshot() -> None:
    raw = with_cold(EKS, parallelPull=True, imageCacheSnapshot=SNAPSHOT)
    raw["gpuPools"][0]["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"
    assert "would wipe the imageCacheSnapshot's cached images" in error(raw, "parallelPull")


def test_snapshot_on_al2023() -> None:
    msg = error(with_cold(EKS, imageCacheSnapshot=SNAPSHOT), "imageCacheSnapshot")
    assert msg.startswith("is for Bottlerocket pools: AL2023_x86_64_NVIDIA has no separate data volume")


def test_snapshot_not_a_snapshot_id() -> None:
    assert "must be an EBS snapshot ID" in error(
        with_cold(EKS, imageCacheSnapshot="ami-0123abcd"), "imageCacheSnapshot"
    )


def test_ebs_keys_on_auto_mode() -> None:
    msg = error(with_cold(EKS, "eks-automode", diskThroughputMiBps=600), "diskThroughputMiBps")
    assert msg == "not supported on eks-automode yet: gpuplane maps no EBS volumes of its nodes"


def test_ebs_keys_on_gke() -> None:
    msg = error(with_cold(GKE, diskThroughputMiBps=600), "diskThroughputMiBps")
    assert msg == "applies to EKS EBS volumes, not gke-standard (on GKE: diskType and diskSizeGb)"
    msg = error(with_cold(GKE, imageCacheSnapshot=SNAPSHOT), "imageCacheSnapshot")
    assert msg.endswith("(on GKE: secondaryBootDisk)")


@pytest.mark.parametrize(("value", "fragment"), [(100, "greater than or equal to 125"), (1001, "less than or equal")])
def test_throughput_out_of_gp3_range(value: int, fragment: str) -> None:
    assert fragment in error(with_cold(EKS, diskThroughputMiBps=value), "diskThroughputMiBps")


@pytest.mark.parametrize(("value", "fragment"), [(0, "greater than 0"), (501, "less than or equal to 500")])
def test_image_size_out_of_range(value: float, fragment: str) -> None:
    assert fragment in error(with_cold(GKE, imageSizeGb=value), "imageSizeGb")


# --- docs/cold-start.md ---------------------------------------------------------------------------------------


def test_docs_rates_table_and_before_after_come_from_the_code() -> None:
    from gpuplane.catalog.coldstart import rates_table
    from gpuplane.stack.coldstart import cold_start_table

    doc = (ROOT / "docs" / "cold-start.md").read_text()
    assert rates_table() in doc
    after = namespace("aws-managed")
    before = copy.deepcopy(after)
    for p in before["gpuPools"]:
        p["coldStart"] = {"parallelPull": False}
    for raw in (before, after):
        assert cold_start_table(summary(parse_config(raw))["rows"]) in doc
