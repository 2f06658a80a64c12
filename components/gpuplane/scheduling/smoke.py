"""Optional smoke test: one `nvidia-smi` Job per GPU pool, placed with the placement helpers: the GPU count
check of `gpuplane:validation` (`health.validation` adds DCGM diagnostics and NCCL).

Off by default (`gpuplane:validation.enabled`, or the older `gpuplane:smokeTest.enabled`). After `pulumi up`,
each Job completing proves that a GPU of that pool is schedulable: the pool scales up, the device plugin
advertises the GPU, and a pod with the helper's affinity and tolerations lands there. Pulumi waits for each
Job to finish.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config.model import StackConfig
from ..k8s.objects import job_timeouts, namespace_manifest
from .placement import node_units, placement, pod

NAMESPACE = "gpuplane-smoke"


# nvidia-smi needs a few MiB: small fixed requests = limits (Guaranteed QoS; GKE Autopilot raises them
# to its minimums).
SMOKE_CPU_MEMORY = {"cpu": "100m", "memory": "128Mi"}
NOBODY = 65534
"""The unprivileged `nobody` user; the NVIDIA driver's device nodes are world read-writable by default
(`NVreg_DeviceFileMode=0666`), so `nvidia-smi` needs no root."""


def count_units(cfg: StackConfig, pool: str) -> int:
    """GPU units the smoke Job takes: with `validation`, every GPU of a node (so `nvidia-smi -L` can count
    them; a node whose device plugin lost one keeps the pod Pending); with the older `smokeTest`, and on
    sharing pools (a pod sees only its share), one."""
    p = next(x for x in cfg.gpuPools if x.name == pool)
    return node_units(cfg, pool) if cfg.validation is not None and p.sharing is None else 1


def smoke_job(cfg: StackConfig, pool: str, image: str) -> dict[str, Any]:
    """A Job running `nvidia-smi -L` on `count_units` GPUs of `pool`, as an unprivileged container.

    The root filesystem stays writable: the NVIDIA container toolkit's hooks write into it (ld cache)
    when the container is created, and a GPU smoke test must not fail on that.
    """
    p = pod(cfg, pool, count_units(cfg, pool), f"gpu-smoke-{pool}", image, ["nvidia-smi", "-L"])
    spec = p["spec"]
    (container,) = spec["containers"]
    gpu = container["resources"].get("limits", {})
    claims = container["resources"].get("claims")  # a DRA pool's GPU claim (`smoke_claim_template`)
    container["resources"] = {
        "requests": dict(SMOKE_CPU_MEMORY),
        "limits": {**gpu, **SMOKE_CPU_MEMORY},
        **({"claims": claims} if claims else {}),
    }
    # The image is a tag (gpuplane:smokeTest.image): pull it rather than trust a node's cached copy.
    container["imagePullPolicy"] = "Always"
    container["securityContext"] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    spec["automountServiceAccountToken"] = False
    spec["securityContext"] = {
        "runAsNonRoot": True,
        "runAsUser": NOBODY,
        "runAsGroup": NOBODY,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"gpu-smoke-{pool}", "namespace": NAMESPACE, "labels": {"gpuplane.io/pool": pool}},
        "spec": {
            "backoffLimit": 1,
            # Scaling a GPU pool up from zero can take many minutes.
            "activeDeadlineSeconds": 1800,
            "ttlSecondsAfterFinished": 86400,
            "template": {"metadata": {"labels": {"gpuplane.io/smoke": pool}}, "spec": spec},
        },
    }


def smoke_claim_template(cfg: StackConfig, pool: str) -> dict[str, Any] | None:
    """A DRA pool's ResourceClaimTemplate in the smoke namespace (the Job's pod claims it), or None."""
    fragment = placement(cfg, pool, count_units(cfg, pool))
    template = fragment.get("resourceClaimTemplate")
    if template is None:
        return None
    return {**template, "metadata": {**template["metadata"], "namespace": NAMESPACE}}


class GpuSmokeTests(pulumi.ComponentResource):
    """The smoke-test namespace and one Job per pool."""

    def __init__(
        self, name: str, cfg: StackConfig, after: Sequence[pulumi.Resource], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuplane:index:GpuSmokeTests", name, None, opts)
        assert cfg.checks is not None
        # The Job's pod meets Pod Security `restricted` (non-root, no privilege escalation, all capabilities
        # dropped, RuntimeDefault seccomp), so its namespace enforces it.
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=namespace_manifest(NAMESPACE, "restricted")["metadata"],
            opts=pulumi.ResourceOptions(parent=self),
        )
        for p in cfg.gpuPools:
            job = smoke_job(cfg, p.name, cfg.checks.image)
            needs: list[pulumi.Resource] = [ns, *after]
            template = smoke_claim_template(cfg, p.name)
            if template is not None:
                needs.append(
                    k8s.resource.v1.ResourceClaimTemplate(
                        f"{name}-{p.name}-claim",
                        metadata=template["metadata"],
                        spec=template["spec"],
                        # The API server refuses any change to a claim template's spec, and pulumi-kubernetes does not
                        # know it (provider/pkg/provider/diff.go has no resource.k8s.io entry): replace it instead,
                        # deleting first, as its name is fixed (create-first would collide on it).
                        opts=pulumi.ResourceOptions(
                            parent=self, depends_on=[ns], replace_on_changes=["spec"], delete_before_replace=True
                        ),
                    )
                )
            k8s.batch.v1.Job(
                f"{name}-{p.name}",
                metadata=job["metadata"],
                spec=job["spec"],
                opts=pulumi.ResourceOptions(parent=self, depends_on=needs, custom_timeouts=job_timeouts(job)),
            )
        self.register_outputs({})


def smoke_tests(name: str, cfg: StackConfig, after: Sequence[pulumi.Resource], opts: pulumi.ResourceOptions) -> None:
    """Create the smoke tests (the GPU count check) when the stack turns them, or `validation`, on."""
    if cfg.checks is not None:
        GpuSmokeTests(f"{name}-smoke", cfg, after, opts=opts)
