"""`Karpenter`: the controller (Pod Identity, six scoped policies), its node role and access entry,
the interruption queue with its EventBridge rules, the CRDs, GPU EC2NodeClasses and NodePools, and a
NodeOverlay per sharing class (its shared or MIG GPU capacity)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from ..config.model import ClusterConfig, GpuPool
from ..config.provisioning import KarpenterConfig
from ..k8s.objects import custom_resource, pinned_release
from ..resources.names import ROLE, fit_autoname
from . import efa
from . import karpenter_render as kr
from .karpenter_iam import controller_policies
from .placement_group import own_placement_group
from .render import node_policies


def _policy_json(key: str, docs: dict[str, dict[str, Any]]) -> str:
    return json.dumps(docs[key])


class KarpenterArgs:
    """Inputs of `Karpenter`."""

    def __init__(
        self,
        cluster: ClusterConfig,
        region: str,
        classes: Sequence[GpuPool],
        settings: KarpenterConfig,
        subnet_ids: Sequence[str] = (),
        ssm_access: bool = False,
        cluster_name: pulumi.Input[str] | None = None,
        node_repair: bool = False,
    ) -> None:
        self.cluster = cluster
        """The EKS cluster's config (name, system pool for the controller's replicas)."""
        self.cluster_name: pulumi.Input[str] = cluster_name if cluster_name is not None else cluster.name
        """The cluster's name as an output of the cluster (`EksGpuCluster.cluster_name`), so the add-on,
        access entry and Pod Identity association wait for the cluster; the config string when omitted."""
        self.region = region
        self.classes = list(classes)
        """GPU classes: one NodePool each; their image families give the EC2NodeClasses."""
        self.settings = settings
        """Disruption, expiry and AMI version."""
        self.subnet_ids = list(subnet_ids)
        """Existing private subnets to launch into; empty selects subnets tagged `karpenter.sh/discovery`."""
        self.ssm_access = ssm_access
        """Attach Session Manager's policy to the node role."""
        self.node_repair = node_repair
        """Turn on Karpenter's node repair (feature gate `nodeRepair`, alpha in 1.14): it replaces a node whose
        `AcceleratedHardwareReady` condition has been False for 10 minutes, forcefully (no drain, no
        PodDisruptionBudgets). Needs the EKS node monitoring agent to set the conditions."""


class Karpenter(pulumi.ComponentResource):
    """Karpenter v1 for GPU classes on an existing EKS cluster (pass the cluster's Kubernetes provider)."""

    node_role_name: pulumi.Output[str]
    queue_name: pulumi.Output[str]

    def __init__(self, name: str, args: KarpenterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:aws:Karpenter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        c = args.cluster.name
        invoke = pulumi.InvokeOutputOptions(parent=self)
        partition = aws.get_partition_output(opts=invoke).partition
        account = aws.get_caller_identity_output(opts=invoke).account_id

        node_role = aws.iam.Role(
            f"{name}-node-role",
            name=fit_autoname(f"{name}-node-role", ROLE),
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
                    ],
                }
            ),
            description=f"Karpenter GPU nodes of {c}",
            opts=child,
        )
        for policy in node_policies(args.ssm_access):
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{policy}",
                role=node_role.name,
                policy_arn=pulumi.Output.concat("arn:", partition, ":iam::aws:policy/", policy),
                opts=child,
            )
        cluster_name = args.cluster_name  # cluster-scoped resources: wait for the cluster
        access = aws.eks.AccessEntry(
            f"{name}-node-access", cluster_name=cluster_name, principal_arn=node_role.arn, type="EC2_LINUX", opts=child
        )

        queue = aws.sqs.Queue(
            f"{name}-queue", name=c, message_retention_seconds=300, sqs_managed_sse_enabled=True, opts=child
        )
        aws.sqs.QueuePolicy(
            f"{name}-queue-policy", queue_url=queue.url, policy=queue.arn.apply(kr.queue_policy), opts=child
        )
        for role in kr.INTERRUPTION_EVENTS:
            rule = aws.cloudwatch.EventRule(
                f"{name}-{role}",
                name=fit_autoname(f"{name}-{role}", "aws:cloudwatch/eventRule:EventRule"),
                description=f"Karpenter interruption handling for {c}: {kr.INTERRUPTION_EVENTS[role][1]}",
                event_pattern=kr.event_pattern(role),
                opts=child,
            )
            aws.cloudwatch.EventTarget(
                f"{name}-{role}",
                rule=rule.name,
                arn=queue.arn,
                target_id="KarpenterInterruptionQueueTarget",
                opts=child,
            )

        controller_role = aws.iam.Role(
            f"{name}-controller-role",
            name=fit_autoname(f"{name}-controller-role", ROLE),
            assume_role_policy=kr.pod_identity_trust(),
            description=f"Karpenter controller of {c}",
            opts=child,
        )

        def documents(v: list[Any]) -> dict[str, dict[str, Any]]:
            return controller_policies(str(v[0]), args.region, str(v[1]), c, str(v[2]), str(v[3]))

        docs = pulumi.Output.all(partition, account, node_role.arn, queue.arn).apply(documents)
        policies = [
            aws.iam.RolePolicy(
                f"{name}-controller-{key}",
                role=controller_role.id,
                policy=docs.apply(functools.partial(_policy_json, key)),
                opts=child,
            )
            for key in (
                "node-lifecycle",
                "iam-integration",
                "eks-integration",
                "interruption",
                "resource-discovery",
                "zonal-shift",
            )
        ]
        agent = aws.eks.Addon(
            f"{name}-pod-identity-agent", cluster_name=cluster_name, addon_name="eks-pod-identity-agent", opts=child
        )
        identity = aws.eks.PodIdentityAssociation(
            f"{name}-pod-identity",
            cluster_name=cluster_name,
            namespace=kr.NAMESPACE,
            service_account=kr.SERVICE_ACCOUNT,
            role_arn=controller_role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[agent]),
        )

        crds = pinned_release(
            f"{name}-crds", "karpenter-crd", kr.CRD_RELEASE, kr.NAMESPACE, {}, opts=pulumi.ResourceOptions(parent=self)
        )
        controller = pinned_release(
            f"{name}-controller",
            "karpenter",
            kr.RELEASE,
            kr.NAMESPACE,
            kr.controller_values(args.cluster, c, args.node_repair),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[crds, identity, *policies, access]),
            skip_crds=True,
        )

        after = pulumi.ResourceOptions(parent=self, depends_on=[crds, controller])
        role_name = node_role.name
        for key in kr.node_classes(args.classes):
            spec = pulumi.Output.from_input(role_name).apply(functools.partial(self._node_class_spec, key, args))
            class_name = kr.node_class_name(*key)
            custom_resource(f"{name}-{class_name}", kr.node_class_manifest(class_name, spec), after)
        for pool in [p for p in args.classes if efa.is_efa(p)]:
            group = own_placement_group(name, args.cluster.name, pool, pulumi.ResourceOptions(parent=self))
            spec = pulumi.Output.all(role_name, group).apply(functools.partial(self._efa_class_spec, pool, args))
            class_name = efa.node_class_name(pool)
            custom_resource(f"{name}-{class_name}", kr.node_class_manifest(class_name, spec), after)
        s = args.settings
        for pool in args.classes:
            obj = kr.gpu_node_pool(
                args.cluster,
                pool,
                {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": kr.pool_node_class(pool)},
                "karpenter.k8s.aws",
                {"consolidationPolicy": s.consolidationPolicy, "consolidateAfter": s.consolidateAfter},
                s.expireAfter,
            )
            custom_resource(f"{name}-{pool.name}", obj, after)
            overlay = kr.gpu_overlay(pool)
            if overlay is not None:
                custom_resource(f"{name}-{pool.name}-overlay", overlay, after)
        self.node_role_name = node_role.name
        self.queue_name = queue.name
        self.register_outputs({"node_role_name": self.node_role_name, "queue_name": self.queue_name})

    @staticmethod
    def _node_class_spec(key: kr.NodeClassKey, args: KarpenterArgs, role: str) -> dict[str, Any]:
        family, disk, owner = key
        reservation = kr.key_reservation(args.classes, key)
        cold = kr.key_cold_start(args.classes, key, args.settings)
        obj = kr.ec2_node_class(
            family, disk, args.cluster.name, role, args.subnet_ids, args.settings, reservation, owner, cold
        )
        spec: dict[str, Any] = obj["spec"]
        return spec

    @staticmethod
    def _efa_class_spec(pool: GpuPool, args: KarpenterArgs, v: list[Any]) -> dict[str, Any]:
        # an EFA class's own EC2NodeClass keeps its reservation terms too (a Capacity Block of p5s, say)
        role, group = v
        spec = kr.efa_node_class_spec(Karpenter._node_class_spec(kr.node_class_key(pool), args, role), pool)
        if group is not None:
            spec["placementGroupSelector"] = {"name": str(group)}
        return spec
