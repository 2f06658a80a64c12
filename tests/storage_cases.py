"""Broken and fixed graphs for the deploy simulator's volume and pod-identity rules (`plan/deploy/volumes.py`),
written from the Kubernetes and EKS documentation, not from the rules: `tests/test_deploy.py` adds them to its
`CASES` (its builders are passed in, so this module imports nothing from it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

P = "urn:pulumi:s::p::"
K8S = f"{P}pulumi:providers:kubernetes::k8s"
EKS = f"{P}eks:index:Cluster::c-eks"
AWS = f"{P}pulumi:providers:aws::aws"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"


def storage_cases(
    res: Callable[..., Any],
    plan: Callable[..., Any],
    eks_base: Callable[..., Any],
    gke_base: Callable[..., Any],
    system: Any,
) -> list[tuple[str, Any, Any]]:
    """`system`: test_deploy's untainted system node group (the Mountpoint controller's home)."""

    def volume(
        driver: str = "s3.csi.aws.com", claim: str = "models", modes: tuple[str, ...] = ("ReadOnlyMany",)
    ) -> Any:
        spec = {
            "capacity": {"storage": "1Ti"},
            "accessModes": list(modes),
            "storageClassName": "",
            "claimRef": {"namespace": "inference", "name": claim},
            "csi": {"driver": driver, "volumeHandle": "h"},
        }
        return res(PV, "pv", {"metadata": {"name": "c-models-inference-ro"}, "spec": spec}, provider=K8S)

    def claim(waits: bool = True, volume_name: str = "c-models-inference-ro", klass: str = "") -> Any:
        spec: dict[str, Any] = {"accessModes": ["ReadOnlyMany"], "storageClassName": klass}
        if not klass:
            spec["volumeName"] = volume_name
        spec["resources"] = {"requests": {"storage": "1Ti"}}
        meta = {"name": "models", "namespace": "inference"}
        return res(PVC, "pvc", {"metadata": meta, "spec": spec}, deps=(f"{P}{PV}::pv",) if waits else (), provider=K8S)

    def addon(name: str) -> Any:
        return res("aws:eks/addon:Addon", name, {"clusterName": "c", "addonName": name}, deps=(EKS,), provider=AWS)

    def association(name: str, sa: str = "vllm") -> Any:
        inputs = {"clusterName": "c", "namespace": "inference", "serviceAccount": sa, "roleArn": "arn"}
        return res("aws:eks/podIdentityAssociation:PodIdentityAssociation", name, inputs, deps=(EKS,), provider=AWS)

    def eks(*more: Any) -> Any:
        return plan(*eks_base(), system, *more)

    mountpoint = addon("aws-mountpoint-s3-csi-driver")
    agent = addon("eks-pod-identity-agent")
    gke = gke_base()
    gcs_on = [
        *gke[:1],
        res(
            gke[1].type,
            gke[1].name,
            {**gke[1].inputs, "addonsConfig": {"gcsFuseCsiDriverConfig": {"enabled": True}}},
            provider=f"{P}pulumi:providers:gcp::gcp",
        ),
        *gke[2:],
    ]
    return [
        # Kubernetes docs, Persistent Volumes ("Reserving a PersistentVolume"): a static claim binds to the volume it
        # names, reserved for it, with the claim's access modes; otherwise it stays Pending
        ("claim-binds", eks(mountpoint, claim()), eks(mountpoint, volume(), claim())),
        ("claim-binds", eks(mountpoint, volume(claim="other"), claim()), eks()),
        (
            "claim-binds",
            eks(mountpoint, volume(modes=("ReadWriteOnce",)), claim()),
            eks(mountpoint, volume(modes=("ReadOnlyMany", "ReadWriteMany")), claim()),
        ),
        ("claim-binds", eks(mountpoint, volume(), claim(waits=False)), eks()),
        # EKS from 1.30 has no StorageClass; GKE comes with standard-rwo
        ("claim-binds", eks(claim(klass="standard-rwo")), plan(*gke_base(), claim(klass="standard-rwo"))),
        # a volume of a driver the cluster doesn't run never mounts
        (
            "volume-driver-installed",
            eks(volume(), claim()),
            eks(mountpoint, volume(), claim()),
        ),
        (
            "volume-driver-installed",
            plan(*gke_base(), volume("gcsfuse.csi.storage.gke.io"), claim()),
            plan(*gcs_on, volume("gcsfuse.csi.storage.gke.io"), claim()),
        ),
        # EKS CreatePodIdentityAssociation: one association per cluster, namespace and service account
        (
            "pod-identity-unique",
            eks(agent, association("a"), association("b")),
            eks(agent, association("a"), association("b", sa="loader")),
        ),
        # EKS user guide, pod-id-agent-setup: without the agent the pods get no credentials
        ("pod-identity-agent", eks(association("a")), eks(agent, association("a"))),
    ]
