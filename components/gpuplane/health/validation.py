"""Post-deploy checks per GPU pool (`gpuplane:validation`), beside the `nvidia-smi` smoke Job
(`scheduling.smoke`, the GPU count check):

- `diag`: `dcgmi diag -r 1` (DCGM's quick deployment checks) on one whole node of the pool. `dcgmi` starts an
  embedded host engine when none answers (NVIDIA/DCGM dcgmi/Diag.cpp), so the pod needs no nv-hostengine. It
  runs privileged as root, as NVIDIA's own DCGM DaemonSet (gpu-operator assets/state-dcgm/0400_dcgm.yml) and
  Google's GPU health check (GoogleCloudPlatform/cluster-health-scanner gpu_healthcheck) do: the checks read
  device nodes and persistence mode.
- `nccl`: `all_reduce_perf` over `validation.ncclNodes` whole nodes of an EFA or GPUDirect RDMA pool.

The NCCL runner is an **Indexed Job** (completions = parallelism = nodes) with a headless Service as the pods'
subdomain, and `successPolicy: succeededIndexes "0"`: every index starts sshd, index 0 runs `mpirun` over ssh
to all of them, and the Job succeeds (the others are stopped) when index 0 does. Chosen over an MPIJob (AWS's
guides: needs the Kubeflow MPI Operator) and a JobSet (Google's: needs the JobSet controller) because it needs
no controller or CRD beyond Kubernetes' Job API (successPolicy: beta and on from 1.31, GA in 1.33), and
Kueue admits a plain Job natively when the pool is queued. AWS's nccl-tests image has no ssh keys (the MPI
Operator mounts them): gpuplane makes an ED25519 key (`tls.PrivateKey`, kept secret in state) and mounts it
from a Secret; Google's gIB image brings its own and listens on port 222 (cluster-toolkit
examples/gke-a3-ultragpu/nccl-jobset-example.yaml).

A check's Job fails in-cluster when the largest message's bus bandwidth is under the pool's floor, so `pulumi
up` fails; `gpuplane validate STACK --from LOGFILE` reads the same output (`health.results`)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ..catalog.health import NCCL_FLOORS
from ..config.capacity import pool_machines
from ..config.health import nccl_pools
from ..config.model import StackConfig
from ..scheduling.placement import find_pool, node_units, placement
from ..scheduling.smoke import count_units

NAMESPACE = "gpuplane-validation"
SMOKE_PREFIX, DIAG_PREFIX, NCCL_PREFIX = "gpu-smoke-", "gpu-diag-", "gpu-nccl-"
"""Job name prefixes (then the pool name): `gpuplane validate` tells the checks' pods apart by them."""
SSH_MOUNT = "/etc/gpuplane-ssh"
DEADLINE = 3600
"""A check waits for its pool to scale up (GPU nodes can take many minutes) and then runs."""


@dataclass(frozen=True)
class Check:
    """One post-deploy check of one pool, or why the pool does not get it."""

    pool: str
    kind: str
    """`gpus`, `diag` or `nccl`."""
    job: str | None
    """The Job's name (None: skipped)."""
    skipped: str = ""
    expect: int | None = None
    """`gpus`: the GPUs `nvidia-smi -L` must list (None on sharing pools: the pod sees only its share)."""
    floor: float | None = None
    """`nccl`: the bus bandwidth (GB/s) it must reach; None where no floor is cited or given."""
    floor_source: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pool": self.pool, "check": self.kind, "job": self.job}
        if self.skipped:
            out["skipped"] = self.skipped
        if self.kind == "gpus":
            out["expectGpus"] = self.expect
        if self.kind == "nccl" and self.job:
            out["minBusBandwidthGBps"] = self.floor
            out["floorSource"] = self.floor_source
        return out


def nccl_floor(cfg: StackConfig, pool_name: str) -> tuple[float | None, str]:
    """The pool's NCCL floor: `validation.ncclMinBusBandwidth`, else the catalog's for its machine (the lowest
    of its machines'), else None."""
    checks = cfg.checks
    if checks is not None and pool_name in checks.ncclMinBusBandwidth:
        return checks.ncclMinBusBandwidth[pool_name], "validation.ncclMinBusBandwidth"
    pool = find_pool(cfg, pool_name)
    floors = [
        (NCCL_FLOORS[m].gbps, f"{m}: {NCCL_FLOORS[m].kind}, {NCCL_FLOORS[m].source}")
        for m in pool_machines(cfg.platform_spec.cloud, pool)
        if m in NCCL_FLOORS
    ]
    return min(floors) if floors else (None, "no cited floor for its machines: set validation.ncclMinBusBandwidth")


def _diag_skip(cfg: StackConfig, pool_name: str) -> str:
    pool = find_pool(cfg, pool_name)
    if cfg.platform == "gke-autopilot":
        return "GKE Autopilot admits no privileged pods"
    if pool.sharing is not None and pool.sharing.strategy == "mig":
        return "DCGM diagnostics do not run on MIG-partitioned GPUs"
    return ""


def checks(cfg: StackConfig) -> list[Check]:
    """Every check the stack's `validation` (or `smokeTest`) asks for, per pool."""
    v = cfg.checks
    if v is None:
        return []
    nccl = nccl_pools(cfg)
    out: list[Check] = []
    for p in cfg.gpuPools:
        # the pod sees the GPUs it holds: all of a node's, or one (the older smokeTest); a share sees its GPU only
        expect = None if p.sharing is not None else p.gpusPerNode if count_units(cfg, p.name) > 1 else 1
        out.append(Check(p.name, "gpus", SMOKE_PREFIX + p.name, expect=expect))
        if v.diagnostics:
            why = _diag_skip(cfg, p.name)
            out.append(Check(p.name, "diag", None if why else DIAG_PREFIX + p.name, why))
        if v.nccl:
            fabric, why = nccl[p.name]
            if fabric is None:
                out.append(Check(p.name, "nccl", None, why))
            else:
                floor, source = nccl_floor(cfg, p.name)
                out.append(Check(p.name, "nccl", NCCL_PREFIX + p.name, floor=floor, floor_source=source))
    return out


def _spec(cfg: StackConfig, pool: str, units: int, job: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(pod spec, pod metadata extras) for a pod holding `units` GPU units of one node of `pool`."""
    f = placement(cfg, pool, units, job=job)
    spec: dict[str, Any] = {"restartPolicy": "Never", "affinity": f["affinity"], "tolerations": f["tolerations"]}
    if "nodeSelector" in f:
        spec["nodeSelector"] = f["nodeSelector"]
    if "resourceClaims" in f:
        spec["resourceClaims"] = f["resourceClaims"]
    meta: dict[str, Any] = {}
    if "annotations" in f:
        meta["annotations"] = f["annotations"]
    if "labels" in f:
        meta["labels"] = f["labels"]
    return spec, {"resources": f["resources"], **meta}


def claim_template(cfg: StackConfig, pool: str) -> dict[str, Any] | None:
    """A DRA pool's whole-node ResourceClaimTemplate in the validation namespace, or None."""
    template = placement(cfg, pool, node_units(cfg, pool)).get("resourceClaimTemplate")
    if template is None:
        return None
    return {**template, "metadata": {**template["metadata"], "namespace": NAMESPACE}}


def _job(
    name: str, pool: str, kind: str, pod_spec: dict[str, Any], meta: dict[str, Any], **spec: Any
) -> dict[str, Any]:
    labels = {"gpuplane.io/pool": pool, "gpuplane.io/check": kind}
    template_meta = {"labels": {**labels, **meta.get("labels", {})}}
    if "annotations" in meta:
        template_meta["annotations"] = meta["annotations"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": DEADLINE,
            "ttlSecondsAfterFinished": 86400,
            **spec,
            "template": {"metadata": template_meta, "spec": pod_spec},
        },
    }


PRIVILEGED: dict[str, Any] = {"privileged": True, "runAsUser": 0}
DIAG_CPU_MEMORY = {"cpu": "1", "memory": "2Gi"}
NCCL_CPU_MEMORY = {"cpu": "8", "memory": "32Gi"}
"""The NCCL pods' CPU and memory requests, and no CPU or memory limit: a CFS quota throttles the MPI ranks'
spinning threads and NCCL's proxy threads, and the memory-backed /dev/shm counts against a memory limit
(aws-samples/awsome-distributed-training nccl-tests.yaml sets no CPU limit; Google's gpudirect-rdma
nccl-test.yaml asks 150m CPU and a 250Gi shm)."""
NCCL_SHM = "64Gi"


def _resources(gpu: dict[str, Any], cpu_memory: dict[str, str], limited: bool = True) -> dict[str, Any]:
    """CPU and memory requests (and, `limited`, the same limits: Guaranteed QoS), beside the GPU units (and
    claims) of the pool."""
    out: dict[str, Any] = {
        "requests": dict(cpu_memory),
        "limits": {**gpu.get("limits", {}), **(cpu_memory if limited else {})},
    }
    if gpu.get("claims"):
        out["claims"] = gpu["claims"]
    return out


def diag_job(cfg: StackConfig, pool: str) -> dict[str, Any]:
    """`dcgmi diag -r 1` on one whole node of `pool` (every GPU of it)."""
    assert cfg.checks is not None
    spec, extra = _spec(cfg, pool, node_units(cfg, pool))
    spec["containers"] = [
        {
            "name": "diag",
            "image": cfg.checks.dcgmImage,
            "command": ["dcgmi", "diag", "-r", "1"],
            "resources": _resources(extra["resources"], DIAG_CPU_MEMORY),
            "imagePullPolicy": "Always",
            "securityContext": dict(PRIVILEGED),
        }
    ]
    spec["automountServiceAccountToken"] = False
    return _job(DIAG_PREFIX + pool, pool, "diag", spec, extra)


def _hosts(job: str, nodes: int) -> str:
    """The Indexed Job's pod hostnames (`<job>-<index>.<subdomain>`), space-separated."""
    return " ".join(f"{job}-{i}.{job}" for i in range(nodes))


def gate(floor: float | None) -> str:
    """Shell lines that fail unless the last size row's out-of-place busbw (column 8) reaches `floor` and no
    row has wrong values; the same rule `results.nccl_verdict` applies to a log."""
    rows = r"/^ *[0-9]+ +[0-9]+ /"
    wrong = f"awk '{rows} && ($9 != 0) {{bad=1}} END {{exit bad}}' /tmp/nccl.out"
    if floor is None:
        return wrong
    return f"{wrong}\nawk '{rows} {{b=$8}} END {{exit !(b >= {floor:g})}}' /tmp/nccl.out"


EFA_ENV = {
    "LD_LIBRARY_PATH": "/opt/amazon/openmpi/lib:/opt/nccl/build/lib:/opt/amazon/efa/lib:"
    "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/usr/local/nvidia/lib",
}
"""aws-samples/awsome-distributed-training @ 7217859f micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml."""


def _efa_script(job: str, nodes: int, gpus: int, floor: float | None) -> str:
    mpirun = (
        f"/opt/amazon/openmpi/bin/mpirun --allow-run-as-root -np {nodes * gpus} -N {gpus} "
        f"-H {','.join(f'{job}-{i}.{job}:{gpus}' for i in range(nodes))} --bind-to none "
        "-x PATH -x LD_LIBRARY_PATH -x FI_PROVIDER=efa -x FI_EFA_FORK_SAFE=1 -x NCCL_BUFFSIZE=8388608 "
        "-x NCCL_P2P_NET_CHUNKSIZE=524288 "
        "-x NCCL_TUNER_PLUGIN=/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so "
        "--mca pml ^ucx --mca btl tcp,self --mca btl_tcp_if_exclude lo,docker0,veth_def_agent "
        "--mca plm_rsh_args '-o StrictHostKeyChecking=no -o ConnectionAttempts=10' "
        "/opt/nccl-tests/build/all_reduce_perf -b 8 -e 16G -f 2 -g 1 -c 1 -n 100"
    )
    return "\n".join(
        [
            "set -euo pipefail",
            "mkdir -p /root/.ssh /var/run/sshd",
            f"cp {SSH_MOUNT}/ssh-privatekey /root/.ssh/id_ed25519",
            f"cp {SSH_MOUNT}/authorized_keys /root/.ssh/authorized_keys",
            "chmod 600 /root/.ssh/id_ed25519 /root/.ssh/authorized_keys",
            "/usr/sbin/sshd -e",
            'if [ "$JOB_COMPLETION_INDEX" != 0 ]; then exec sleep infinity; fi',
            f"for h in {_hosts(job, nodes)}; do",
            "  until ssh -o StrictHostKeyChecking=no -o ConnectTimeout=5 $h true; do sleep 5; done",
            "done",
            f"{mpirun} | tee /tmp/nccl.out",
            gate(floor),
        ]
    )


def _rdma_script(job: str, nodes: int, gpus: int, floor: float | None) -> str:
    ssh = "ssh -q -o LogLevel=ERROR -o StrictHostKeyChecking=no -p 222"
    return "\n".join(
        [
            "set -euo pipefail",
            "/sbin/ldconfig",
            "/scripts/container_entry.sh daemon &",
            'if [ "$JOB_COMPLETION_INDEX" != 0 ]; then exec sleep infinity; fi',
            f"for h in {_hosts(job, nodes)}; do",
            f"  until {ssh} $h hostname; do sleep 10; done",
            f'  echo "$h port=222 slots={gpus}" >> /tmp/hostfile',
            "done",
            # the node's gIB installer DaemonSet copies the plugin at boot; a node just scaled up may not have it yet
            "until [ -f /usr/local/gib/scripts/set_nccl_env.sh ]; do sleep 5; done",
            "export NCCL_TESTS_SPLIT_MASK=0x0 NCCL_NET=gIB",
            "set +u; source /usr/local/gib/scripts/set_nccl_env.sh; set -u",
            "ENV_VARS=$(echo ${!NCCL*} ${!OMPI*} LD_LIBRARY_PATH PATH | sed 's/ / -x /g')",
            "mpirun --hostfile /tmp/hostfile -x $ENV_VARS -mca plm_rsh_no_tree_spawn 1 "
            "--mca orte_keep_fqdn_hostnames 1 --mca btl self,tcp --mca btl_tcp_if_include eth0 --bind-to none "
            f"--mca plm_rsh_agent {shlex.quote(ssh)} "
            "/third_party/nccl-tests/build/all_reduce_perf -b 1K -e 8G -f 2 -g 1 -w 5 --iters 100 -c 1 "
            "| tee /tmp/nccl.out",
            gate(floor),
        ]
    )


def nccl_objects(cfg: StackConfig, pool: str, fabric: str, floor: float | None) -> list[dict[str, Any]]:
    """The headless Service and the Indexed Job of the pool's NCCL test (`fabric`: `efa` or `rdma`)."""
    from ..config.health import NCCL_IMAGES

    assert cfg.checks is not None
    nodes, job = cfg.checks.ncclNodes, NCCL_PREFIX + pool
    gpus = node_units(cfg, pool)
    spec, extra = _spec(cfg, pool, gpus, job=job)
    script = (_efa_script if fabric == "efa" else _rdma_script)(job, nodes, gpus, floor)
    container: dict[str, Any] = {
        "name": "nccl",
        "image": NCCL_IMAGES[fabric],
        "command": ["/bin/bash", "-c", script],
        "resources": _resources(extra["resources"], NCCL_CPU_MEMORY, limited=False),
        "imagePullPolicy": "Always",
        "securityContext": dict(PRIVILEGED),
    }
    volumes: list[dict[str, Any]] = [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": NCCL_SHM}}]
    mounts: list[dict[str, Any]] = [{"name": "shm", "mountPath": "/dev/shm"}]
    if fabric == "efa":
        container["env"] = [{"name": k, "value": v} for k, v in EFA_ENV.items()]
        volumes.append({"name": "ssh", "secret": {"secretName": job, "defaultMode": 0o400}})
        mounts.append({"name": "ssh", "mountPath": SSH_MOUNT, "readOnly": True})
    else:  # the GKE node's gIB plugin and NVIDIA libraries (cluster-toolkit nccl-jobset-example.yaml)
        for vol, host, path in (
            ("gib", "/home/kubernetes/bin/gib", "/usr/local/gib"),
            ("nvidia", "/home/kubernetes/bin/nvidia", "/usr/local/nvidia"),
        ):
            volumes.append({"name": vol, "hostPath": {"path": host}})
            mounts.append({"name": vol, "mountPath": path})
        container["env"] = [
            {"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"},
            {"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"},
            {"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "value": "1"},
        ]
    container["volumeMounts"] = mounts
    spec.update(
        {"containers": [container], "volumes": volumes, "subdomain": job, "automountServiceAccountToken": False}
    )
    selector = {"gpuplane.io/pool": pool, "gpuplane.io/check": "nccl"}
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": job, "namespace": NAMESPACE, "labels": dict(selector)},
        "spec": {"clusterIP": "None", "selector": selector, "publishNotReadyAddresses": True},
    }
    indexed = {
        "completionMode": "Indexed",
        "completions": nodes,
        "parallelism": nodes,
        "successPolicy": {"rules": [{"succeededIndexes": "0"}]},
    }
    return [service, _job(job, pool, "nccl", spec, extra, **indexed)]


__all__ = ["NAMESPACE", "Check", "checks", "claim_template", "diag_job", "gate", "nccl_floor", "nccl_objects"]
