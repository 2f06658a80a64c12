"""GKE GPUDirect for `network: gpudirect` pools (A3 Mega: GPUDirect-TCPXO; A3 Ultra, A4: GPUDirect RDMA).

Pure renders (VPCs, subnets, firewall, node pool and cluster arguments, the `Network` /
`GKENetworkParamSet` objects pods attach to, Google's NCCL plugin installer DaemonSet) and one function that
creates the Compute Engine networks. Sources:
- GKE "Maximize GPU network bandwidth in Standard mode clusters" (kubernetes-engine/docs/how-to/
  gpu-bandwidth-gpudirect-tcpx, .../gpudirect-rdma): one VPC + subnet per extra gVNIC, one RoCE VPC (network
  profile `<zone>-vpc-roce`) with a subnet per RDMA NIC; the cluster with `--enable-multi-networking` and
  `--enable-dataplane-v2`; node pools with `--additional-node-network` per extra NIC, gVNIC on and compact
  placement; a `GKENetworkParamSet` (deviceMode `NetDevice` for TCPXO / gVNIC, `RDMA` for RDMA) and a `Network`
  of type `Device` per extra network. The same layout as GoogleCloudPlatform/cluster-toolkit
  examples/gke-a3-megagpu and examples/gke-a3-ultragpu.
- Installer DaemonSets: GoogleCloudPlatform/container-engine-accelerators (992db812)
  gpudirect-rdma/nccl-rdma-installer.yaml and gpudirect-tcpxo/nccl-tcpxo-installer.yaml, images pinned in
  `gpuplane.pins.IMAGES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_gcp as gcp

from ..catalog.network import GPUDIRECT, GpuDirect
from ..config.gcp import GcpConfig
from ..config.model import GpuPool
from ..config.network import gpudirect_slot
from ..pins import IMAGES
from .render import known_project, machine_type

NETWORKING_API = "networking.gke.io/v1"
INSTALLER_NAMESPACE = "kube-system"
"""Where Google's manifests put the installers (system-node-critical pods)."""


def spec_of(pool: GpuPool) -> GpuDirect | None:
    """The pool's GPUDirect networking, or None for other pools."""
    return GPUDIRECT.get(machine_type(pool)) if pool.network == "gpudirect" else None


def pools_with(pools: Sequence[GpuPool]) -> list[tuple[GpuPool, GpuDirect]]:
    """(pool, its spec) for each GPUDirect pool."""
    return [(p, s) for p in pools if (s := spec_of(p)) is not None]


def cluster_fields() -> dict[str, Any]:
    """Cluster arguments multi-networking needs: the multi-network API on dataplane V2."""
    return {"enable_multi_networking": True, "datapath_provider": "ADVANCED_DATAPATH"}


def interfaces(cluster: str, pool: GpuPool, spec: GpuDirect) -> list[tuple[str, str, str]]:
    """(role, network name, subnetwork name) of each extra NIC: gVNICs first, then the RDMA NICs."""
    out = [
        (f"gvnic-{i + 1}", f"{cluster}-{pool.name}-gvnic-{i + 1}", f"{cluster}-{pool.name}-gvnic-{i + 1}")
        for i in range(spec.gvnic_networks)
    ]
    out += [
        (f"rdma-{k}", f"{cluster}-{pool.name}-rdma", f"{cluster}-{pool.name}-rdma-{k}")
        for k in range(spec.rdma_subnets)
    ]
    return out


def subnet_cidr(pool: GpuPool, nic: int) -> str:
    """A /24 per extra NIC in 192.168.0.0/16, apart from the cluster's ranges, in the pool's own block of 32
    (`config.network.gpudirect_slot`, from its name): never from its place among the pools."""
    return f"192.168.{32 * gpudirect_slot(pool.name) + nic}.0/24"


def network_args(project: str, zone: str, network: str, spec: GpuDirect, rdma: bool) -> dict[str, Any]:
    """A custom-mode VPC at the machine's MTU; the RDMA one with the zone's RoCE network profile."""
    args: dict[str, Any] = {
        "name": network,
        "project": project,
        "auto_create_subnetworks": False,
        "mtu": spec.mtu,
        "description": "gpuplane GPUDirect network",
    }
    if rdma:
        args["network_profile"] = f"projects/{project}/global/networkProfiles/{zone}-vpc-roce"
    return args


def apply_node_pool(args: dict[str, Any], pool: GpuPool, names: Sequence[tuple[str, Any, Any]]) -> None:
    """Node pool arguments of a GPUDirect pool (in place): one additional node network per extra NIC,
    compact placement, gVNIC on, nodes in the pool's one zone."""
    args["placement_policy"] = {"type": "COMPACT"}
    args["network_config"] = {
        **args.get("network_config", {}),
        "additional_node_network_configs": [{"network": n, "subnetwork": s} for _, n, s in names],
    }
    args["node_config"] = {**args["node_config"], "gvnic": {"enabled": True}}
    args["node_locations"] = list(pool.zones or [])


def param_set(pool: GpuPool, role: str, network: str, subnet: str, spec: GpuDirect) -> dict[str, Any]:
    """The GKENetworkParamSet of one extra network (the GPU NICs' mode: `spec.device_mode`)."""
    mode = "RDMA" if role.startswith("rdma") else "NetDevice"
    return {
        "apiVersion": NETWORKING_API,
        "kind": "GKENetworkParamSet",
        "metadata": {"name": f"{pool.name}-{role}"},
        "spec": {"vpc": network, "vpcSubnet": subnet, "deviceMode": mode},
    }


def network_object(pool: GpuPool, role: str) -> dict[str, Any]:
    """The `Network` pods name in `networking.gke.io/interfaces` to get that NIC."""
    return {
        "apiVersion": NETWORKING_API,
        "kind": "Network",
        "metadata": {"name": f"{pool.name}-{role}"},
        "spec": {
            "type": "Device",
            "parametersRef": {
                "group": "networking.gke.io",
                "kind": "GKENetworkParamSet",
                "name": f"{pool.name}-{role}",
            },
        },
    }


def installer(kind: str, accelerators: Sequence[str]) -> dict[str, Any]:
    """Google's NCCL plugin installer DaemonSet for `kind` (`rdma` or `tcpxo`), on those accelerators' nodes."""
    name = f"nccl-{kind}-installer"
    labels = {"k8s-app": name}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": list(accelerators)}
                        ]
                    }
                ]
            }
        }
    }
    body = INSTALLERS[kind]
    spec = {
        "priorityClassName": "system-node-critical",
        "affinity": affinity,
        "tolerations": [{"operator": "Exists"}],
        "hostNetwork": True,
        "hostPID": True,
        "volumes": body["volumes"],
        "initContainers": body["initContainers"],
        "containers": [{"name": "pause", "image": IMAGES["gke-pause"]}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": INSTALLER_NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": {"name": name, **labels}}, "spec": spec},
        },
    }


def _host(name: str, path: str, kind: str | None = None) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path, **({"type": kind} if kind else {})}}


_RDMA_SCRIPT = """set -ex
/scripts/container_entry.sh install
cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64
cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib
echo "installation finishes"
"""
_TCPXO_PRE = """/sbin/iptables -I INPUT -p tcp -m tcp -j ACCEPT && modprobe import-helper
sudo mkdir -p /dev/aperture_devices
while IFS= read -r line; do
  BDF=$( echo "$line" | awk '{print $1}' );
  target_aperture_path="/dev/aperture_devices/$BDF"
  host_aperture_device=$(readlink -f "/sys/bus/pci/devices/$BDF");
  sudo mkdir -p $target_aperture_path;
  sudo umount -R $target_aperture_path;
  sudo mount --bind $host_aperture_device $target_aperture_path;
done < <(lspci -nn -D | grep '1ae0:0084')
if [ -d /dev/aperture_devices ]; then
    chmod -R a+r /dev/aperture_devices/
    chmod a+rw /dev/aperture_devices/*/resource*
fi
"""
_TCPXO_SCRIPT = """set -ex
chmod 755 /scripts/container_entry.sh
/scripts/container_entry.sh install --install-nccl
mkdir -p /usr/local/nvidia/lib64
cp -r /var/lib/tcpxo/lib64/. /usr/local/nvidia/lib64
echo "installation finishes"
"""

INSTALLERS: dict[str, dict[str, Any]] = {
    "rdma": {
        "volumes": [
            _host("library-dir-host", "/home/kubernetes/bin/nvidia/lib64", "DirectoryOrCreate"),
            _host("gib", "/home/kubernetes/bin/gib"),
        ],
        "initContainers": [
            {
                "name": "nccl-rdma-installer",
                "image": IMAGES["nccl-plugin-gib"],
                "resources": {"requests": {"cpu": "150m"}},
                "securityContext": {"privileged": True},
                "volumeMounts": [
                    {"name": "library-dir-host", "mountPath": "/usr/local/home/kubernetes/bin/nvidia/lib64"},
                    {"name": "gib", "mountPath": "/usr/local/home/kubernetes/bin/gib"},
                ],
                "command": ["/bin/sh", "-c"],
                "args": [_RDMA_SCRIPT],
            }
        ],
    },
    "tcpxo": {
        "volumes": [
            _host("var-lib", "/var/lib"),
            _host("tcpxo", "/var/lib/tcpxo"),
            _host("library-dir-host", "/home/kubernetes/bin"),
        ],
        "initContainers": [
            {
                "name": "pre-installation",
                "image": IMAGES["ubuntu"],
                "securityContext": {"privileged": True},
                "command": ["nsenter", "-at", "1", "--", "sh", "-c", _TCPXO_PRE],
            },
            {
                "name": "nccl-tcpxo-installer",
                "image": IMAGES["nccl-plugin-tcpxo"],
                "resources": {"requests": {"cpu": "150m"}},
                "securityContext": {"privileged": True},
                "volumeMounts": [
                    {"name": "var-lib", "mountPath": "/var/lib"},
                    {"name": "library-dir-host", "mountPath": "/usr/local"},
                ],
                "command": ["/bin/sh", "-c"],
                "args": [_TCPXO_SCRIPT],
            },
        ],
    },
}
"""Installer kind -> the volumes and init containers of Google's manifest (upstream, images pinned)."""


INSTALLER_ACCELERATORS: dict[str, tuple[str, ...]] = {
    "rdma": ("nvidia-h200-141gb", "nvidia-b200"),
    "tcpxo": ("nvidia-h100-mega-80gb",),
}
"""Installer kind -> the accelerators its upstream manifest selects (A3 Ultra and A4; A3 Mega)."""


def kube_objects(pools: Sequence[GpuPool], cluster: str) -> list[dict[str, Any]]:
    """The GPUDirect pools' param sets and networks, and Google's installer for each kind of GPUDirect the
    pools use, as published (it selects every accelerator of that kind, so a second pool of the same kind
    leaves it unchanged; it comes with the first pool of its kind and goes with the last)."""
    objects: list[dict[str, Any]] = []
    kinds: list[str] = []
    for pool, spec in pools_with(pools):
        for role, network, subnet in interfaces(cluster, pool, spec):
            objects += [param_set(pool, role, network, subnet, spec), network_object(pool, role)]
        kinds += [] if spec.installer in kinds else [spec.installer]
    return objects + [installer(kind, INSTALLER_ACCELERATORS[kind]) for kind in sorted(kinds)]


def create_networks(
    name: str, cluster: str, gcp_cfg: GcpConfig, pools: Sequence[GpuPool], opts: pulumi.ResourceOptions
) -> tuple[dict[str, list[tuple[str, Any, Any]]], list[pulumi.Resource]]:
    """The VPCs, subnets and (gVNIC) firewall rules of every GPUDirect pool: pool -> (role, network name,
    subnetwork name) as resource outputs, and every resource created (node pools wait for them)."""
    out: dict[str, list[tuple[str, Any, Any]]] = {}
    made: list[pulumi.Resource] = []
    for pool, spec in pools_with(pools):
        assert pool.zones, "config validation requires one zone"
        nets: dict[str, gcp.compute.Network] = {}
        names: list[tuple[str, Any, Any]] = []
        for nic, (role, network, subnet) in enumerate(interfaces(cluster, pool, spec)):
            rdma = role.startswith("rdma")
            if network not in nets:
                nets[network] = gcp.compute.Network(
                    f"{name}-{pool.name}-{'rdma' if rdma else role}",
                    **network_args(known_project(gcp_cfg), pool.zones[0], network, spec, rdma),
                    opts=opts,
                )
                made.append(nets[network])
                if not rdma:  # RoCE VPCs allow all traffic implicitly (VPC "RDMA network profiles")
                    made.append(
                        gcp.compute.Firewall(
                            f"{name}-{pool.name}-{role}-internal",
                            name=f"{network}-internal",
                            project=gcp_cfg.project,
                            network=nets[network].name,
                            source_ranges=[subnet_cidr(pool, nic)],
                            allows=[{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
                            opts=opts,
                        )
                    )
            sub = gcp.compute.Subnetwork(
                f"{name}-{pool.name}-{role}",
                name=subnet,
                project=gcp_cfg.project,
                region=gcp_cfg.region,
                network=nets[network].name,
                ip_cidr_range=subnet_cidr(pool, nic),
                opts=opts,
            )
            made.append(sub)
            names.append((role, nets[network].name, sub.name))
        out[pool.name] = names
    return out, made
