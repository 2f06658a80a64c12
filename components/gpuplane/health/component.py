"""`GpuValidation`: the DCGM diagnostics and NCCL checks of `gpuplane:validation` (the GPU count check is the
smoke Job, `scheduling.smoke`), in their own namespace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config.model import StackConfig
from ..k8s.objects import job_timeouts, namespace_manifest
from ..scheduling.smoke import smoke_tests
from . import validation as v


class GpuValidation(pulumi.ComponentResource):
    """The validation namespace (Pod Security `privileged`: the checks read device nodes as root), and per
    pool its DCGM diagnostics Job and its NCCL test (headless Service, Indexed Job, and on EFA pools the ssh
    key the pods share)."""

    checks: list[dict[str, object]]
    """Every check per pool, run or skipped with why (`gpuplane validate` reads their output)."""

    def __init__(
        self, name: str, cfg: StackConfig, after: Sequence[pulumi.Resource], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuplane:index:GpuValidation", name, None, opts)
        self._name = name
        child = pulumi.ResourceOptions(parent=self)
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace", metadata=namespace_manifest(v.NAMESPACE, "privileged")["metadata"], opts=child
        )
        needs: list[pulumi.Resource] = [ns, *after]
        self._claims: dict[str, pulumi.Resource | None] = {}
        """Pool -> its whole-node claim template in the namespace (one, shared by the pool's checks)."""
        all_checks = v.checks(cfg)
        for check in all_checks:
            if check.job is None or check.kind == "gpus":
                continue
            if check.kind == "diag":
                self._job(f"{name}-{check.pool}-diag", v.diag_job(cfg, check.pool), cfg, check.pool, needs, ns)
            else:
                self._nccl(name, cfg, check, needs)
        self.checks = [c.to_json() for c in all_checks]
        self.register_outputs({"checks": self.checks})

    def _job(
        self,
        name: str,
        job: dict[str, Any],
        cfg: StackConfig,
        pool: str,
        needs: list[pulumi.Resource],
        ns: pulumi.Resource,
    ) -> None:
        deps = list(needs)
        claim = self._claim(cfg, pool, ns)
        if claim is not None:  # a DRA pool: the pod claims the node's GPUs (see scheduling.smoke)
            deps.append(claim)
        k8s.batch.v1.Job(
            name,
            metadata=job["metadata"],
            spec=job["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=deps, custom_timeouts=job_timeouts(job)),
        )

    def _claim(self, cfg: StackConfig, pool: str, ns: pulumi.Resource) -> pulumi.Resource | None:
        if pool not in self._claims:
            template = v.claim_template(cfg, pool)
            self._claims[pool] = None
            if template is not None:
                self._claims[pool] = k8s.resource.v1.ResourceClaimTemplate(
                    f"{self._name}-{pool}-claim",
                    metadata=template["metadata"],
                    spec=template["spec"],
                    # the API server refuses spec changes: replace, deleting first (its name is fixed)
                    opts=pulumi.ResourceOptions(
                        parent=self, depends_on=[ns], replace_on_changes=["spec"], delete_before_replace=True
                    ),
                )
        return self._claims[pool]

    def _nccl(self, name: str, cfg: StackConfig, check: v.Check, needs: list[pulumi.Resource]) -> None:
        from ..config.health import nccl_pools

        fabric = nccl_pools(cfg)[check.pool][0]
        assert fabric is not None
        service, job = v.nccl_objects(cfg, check.pool, fabric, check.floor)
        role = f"{name}-{check.pool}-nccl"
        deps = [
            *needs,
            k8s.core.v1.Service(
                role,
                metadata=service["metadata"],
                spec=service["spec"],
                opts=pulumi.ResourceOptions(parent=self, depends_on=needs),
            ),
        ]
        if fabric == "efa":  # AWS's nccl-tests image has no ssh keys: the pods share one (kept secret in state)
            import pulumi_tls as tls

            key = tls.PrivateKey(f"{role}-ssh", algorithm="ED25519", opts=pulumi.ResourceOptions(parent=self))
            meta = job["metadata"]
            assert isinstance(meta, dict)
            deps.append(
                k8s.core.v1.Secret(
                    f"{role}-ssh",
                    metadata={"name": meta["name"], "namespace": v.NAMESPACE, "labels": dict(meta["labels"])},
                    type="Opaque",
                    string_data={"ssh-privatekey": key.private_key_openssh, "authorized_keys": key.public_key_openssh},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=needs),
                )
            )
        self._job(role, job, cfg, check.pool, deps, deps[0])


def validation_checks(
    name: str, cfg: StackConfig, after: Sequence[pulumi.Resource], opts: pulumi.ResourceOptions
) -> GpuValidation | None:
    """The stack's post-deploy checks: the smoke Jobs (GPU count) and, with `validation`, `GpuValidation`."""
    smoke_tests(name, cfg, after, opts)
    if cfg.validation is None or not any(c.job and c.kind != "gpus" for c in v.checks(cfg)):
        return None
    return GpuValidation(f"{name}-validation", cfg, after, opts=opts)


__all__ = ["GpuValidation", "validation_checks"]
