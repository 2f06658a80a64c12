"""`EksGpuCluster`: EKS (pulumi-eks) with a system node group and one managed GPU node group per pool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from ..catalog.regions import aws_partition
from ..config import coldstart
from ..config.aws import AwsConfig
from ..config.health import HealthConfig
from ..config.model import ClusterConfig, GpuPool
from ..config.network import is_local_zone
from ..health.repair import repair_transform
from ..resources.lifecycle import keep_component_options, keep_options
from ..resources.names import ROLE, fit_autoname
from . import efa, render
from .capacity_render import reservation_zone, reserved_launch_args
from .live_size import with_live_size
from .network import EksVpc
from .placement_group import own_placement_group


class EksGpuClusterArgs:
    """Inputs of `EksGpuCluster`: the typed config sections it needs."""

    def __init__(
        self,
        cluster: ClusterConfig,
        aws_cfg: AwsConfig,
        gpu_pools: Sequence[GpuPool],
        auto_mode: bool = False,
        system_autoscaled: bool = True,
        health: HealthConfig | None = None,
    ) -> None:
        self.cluster = cluster
        """Cluster name, Kubernetes version, deletion protection and system pool."""
        self.aws = aws_cfg
        """Region, VPC (existing or created), admins and API endpoint access."""
        self.gpu_pools = list(gpu_pools)
        """One managed GPU node group per entry; pass none when an auto-provisioner brings GPU nodes."""
        self.auto_mode = auto_mode
        """EKS Auto Mode: AWS runs the nodes (built-in `system` and `general-purpose` pools), no node groups."""
        self.system_autoscaled = system_autoscaled
        """A cluster-autoscaler scales the system node group (within `systemPool` min..max); without one the
        group is fixed at `minNodes`, as nothing else would move it."""
        self.health = health if health is not None else HealthConfig()
        """Node repair: every managed node group gets `nodeRepairConfig` (`enabled: false` when `repair` is off)."""


class EksGpuCluster(pulumi.ComponentResource):
    """EKS with API-mode access entries, an OIDC provider for IRSA, no default node group, a system
    node group and tainted GPU managed node groups that cluster-autoscaler can scale from zero
    (or, with Auto Mode, AWS-managed nodes)."""

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name, from the cluster itself: cluster-scoped resources given it wait for the cluster."""
    kubernetes_version: pulumi.Output[str]
    """The control plane's version as EKS reports it; managed node groups follow it."""
    kubeconfig: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]
    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    gpu_node_groups: pulumi.Output[list[str]]
    k8s_provider: k8s.Provider

    def __init__(self, name: str, args: EksGpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuplane:aws:EksGpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        c, a = args.cluster, args.aws

        self._subnet_zones: Sequence[pulumi.Input[str]] | None = None
        """Private subnets' Availability Zones (in subnet order) when gpuplane creates the VPC."""
        if a.vpcId:
            vpc_id: pulumi.Input[str] = a.vpcId
            private: Sequence[pulumi.Input[str]] = a.privateSubnetIds
            public: Sequence[pulumi.Input[str]] = a.publicSubnetIds
        else:
            net = EksVpc(f"{name}-network", c.name, a, opts=child)
            vpc_id, private, public = net.vpc_id, net.private_subnet_ids, net.public_subnet_ids
            self._subnet_zones = net.private_subnet_zones

        key_arn: pulumi.Input[str] = a.secretsKmsKeyArn or self._secrets_key(name, c, child).arn
        auto: dict[str, Any] = {"auto_mode": {"enabled": True, "create_node_role": True}} if args.auto_mode else {}
        cluster_args: dict[str, Any] = dict(
            name=c.name,
            version=c.kubernetesVersion,
            vpc_id=vpc_id,
            private_subnet_ids=private,
            # Auto Mode's built-in NodeClass launches nodes into the cluster's subnets: give it only the
            # private ones (load balancers find the public subnets by their `kubernetes.io/role/elb` tag).
            public_subnet_ids=None if args.auto_mode else (public or None),
            skip_default_node_group=True,
            authentication_mode=eks.AuthenticationMode.API,
            access_entries=render.access_entries(a.admins, aws_partition(a.region)) or None,
            create_oidc_provider=True,
            node_associate_public_ip_address=False,
            endpoint_private_access=True,
            endpoint_public_access=a.public_endpoint,
            public_access_cidrs=a.publicAccessCidrs if a.public_endpoint else None,
            enabled_cluster_log_types=["api", "audit", "authenticator"],
            deletion_protection=c.deletionProtection,
            encryption_config_key_arn=key_arn,
            tags={"gpuplane.io/cluster": c.name},
            **auto,
        )
        cluster = eks.Cluster(f"{name}-eks", opts=keep_component_options(c, child), **cluster_args)
        # The name and version as EKS reports them, so whatever uses them waits for the control plane
        # (and, for the version, for its upgrade).
        self.cluster_name = cluster.eks_cluster.name
        self.kubernetes_version = cluster.eks_cluster.version

        gpu_groups: list[eks.ManagedNodeGroup] = []
        if not args.auto_mode:
            repair = [repair_transform(args.health)]  # `enabled: false` too: see health.repair
            gpu_groups = self._node_groups(
                name,
                c,
                args.gpu_pools,
                cluster,
                private,
                a.ssmAccess,
                vpc_id,
                args.system_autoscaled,
                a.nodeSubnetIds,
                repair,
            )

        self.kubeconfig = pulumi.Output.secret(cluster.kubeconfig_json)
        self.k8s_provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*gpu_groups] or [cluster]),
        )
        self.oidc_provider_arn = cluster.oidc_provider_arn
        self.oidc_issuer = cluster.oidc_issuer
        self.vpc_id = pulumi.Output.from_input(vpc_id)
        self.private_subnet_ids = pulumi.Output.all(*private).apply(list)
        self.gpu_node_groups = pulumi.Output.from_input([f"{c.name}-{p.name}" for p in args.gpu_pools])
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "oidc_provider_arn": self.oidc_provider_arn,
                "vpc_id": self.vpc_id,
                "gpu_node_groups": self.gpu_node_groups,
            }
        )

    def _secrets_key(self, name: str, c: ClusterConfig, opts: pulumi.ResourceOptions) -> aws.kms.Key:
        """A customer-managed KMS key (yearly rotation, 30-day deletion window) that envelope-encrypts
        the cluster's Kubernetes secrets, kept like the cluster; and an alias to find it by."""
        key = aws.kms.Key(f"{name}-secrets-key", **render.secrets_key_args(c.name), opts=keep_options(c, opts))
        aws.kms.Alias(
            f"{name}-secrets-key-alias", name=f"alias/gpuplane/{c.name}-secrets", target_key_id=key.key_id, opts=opts
        )
        return key

    def _node_groups(
        self,
        name: str,
        c: ClusterConfig,
        pools: Sequence[GpuPool],
        cluster: eks.Cluster,
        private: Sequence[pulumi.Input[str]],
        ssm_access: bool = False,
        vpc_id: pulumi.Input[str] = "",
        system_autoscaled: bool = True,
        node_subnets: Sequence[str] = (),
        transforms: Sequence[pulumi.ResourceTransform] = (),
    ) -> list[eks.ManagedNodeGroup]:
        """The node role, the system node group, and one tagged managed node group per GPU pool (all returned)."""
        child = pulumi.ResourceOptions(parent=self)
        node_role = aws.iam.Role(
            f"{name}-node-role",
            name=fit_autoname(f"{name}-node-role", ROLE),
            assume_role_policy=render.assume_role_policy("ec2.amazonaws.com"),
            description=f"gpuplane nodes of {c.name}",
            opts=child,
        )
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{policy}",
                role=node_role.name,
                policy_arn=pulumi.Output.concat("arn:", partition, ":iam::aws:policy/", policy),
                opts=child,
            )
            for policy in render.node_policies(ssm_access)
        ]
        # node repair reaches the cloud node group inside pulumi-eks's component through a transform
        group_opts = pulumi.ResourceOptions(parent=self, depends_on=attachments, transforms=list(transforms) or None)
        system = render.system_node_group_args(c, system_autoscaled)
        system_group = self._node_group(
            name, c.name, "system", cluster, node_role, private, system, c.systemPool.diskSizeGb, group_opts
        )
        groups = [system_group]  # add-ons are pinned to the system nodes: the provider waits for them too
        for pool in pools:
            group = render.gpu_node_group_args(c, pool)
            zone = reservation_zone(pool)
            zones = list(pool.zones or ([zone] if zone is not None else []))
            # a pool pinned to a Local Zone takes the node-only subnets (aws.nodeSubnetIds), which the cluster never
            # gets; any other pinned pool the private ones of its Availability Zone
            local = any(is_local_zone(z) for z in zones)
            pinned, known = (list(node_subnets), None) if local else (list(private), self._subnet_zones)
            subnets = subnets_in_zones(pinned, known, zones, self) if zones else private
            # a reservation's target and market type, and an EFA pool's interfaces and placement group
            extra = {
                **reserved_launch_args(pool),
                **(self._efa(name, c.name, pool, vpc_id, cluster) if efa.is_efa(pool) else {}),
            }
            cold = coldstart.plan("eks-managed", pool)
            ng = self._node_group(
                name, c.name, pool.name, cluster, node_role, subnets, group, pool.diskSizeGb, group_opts, extra, cold
            )
            groups.append(ng)
            asg = asg_name(ng)
            for key, value in sorted(render.node_template_tags(c, pool).items()):
                aws.autoscaling.Tag(
                    f"{name}-{pool.name}-ca-{render.tag_slug(key)}",
                    autoscaling_group_name=asg,
                    tag={"key": key, "value": value, "propagate_at_launch": False},
                    opts=child,
                )
        return groups

    def _efa(self, name: str, cluster_name: str, pool: GpuPool, vpc_id: Any, cluster: eks.Cluster) -> dict[str, Any]:
        """An EFA pool's security group (all traffic to and from itself), cluster placement group (unless the
        pool names one) and the launch template fields that attach its EFA interfaces."""
        child = pulumi.ResourceOptions(parent=self)
        sg = aws.ec2.SecurityGroup(
            f"{name}-{pool.name}-efa", **efa.security_group_args(cluster_name, pool, vpc_id), opts=child
        )
        group: Any = own_placement_group(name, cluster_name, pool, child) or pool.placementGroup
        key = "group_id" if isinstance(group, str) and group.startswith("pg-") else "group_name"
        # A launch template that names security groups stops EKS adding its cluster security group, which is
        # what lets kubelet and the control plane reach each other: name it (pulumi-eks's EFA path does the
        # same, nodejs/eks/nodes/nodegroup.ts). pulumi-eks's own `clusterSecurityGroupId` only admits its own
        # node group, so nodes carrying it never join (NodeCreationFailure).
        eks_sg = cluster.eks_cluster.vpc_config.cluster_security_group_id
        groups = [eks_sg, sg.id]
        return {
            "network_interfaces": efa.launch_template_interfaces(efa.interfaces(pool), groups),
            "placement": {key: group},
        }

    def _node_group(
        self,
        name: str,
        cluster_name: str,
        role: str,
        cluster: eks.Cluster,
        node_role: aws.iam.Role,
        subnets: pulumi.Input[Sequence[pulumi.Input[str]]],
        group_args: dict[str, Any],
        disk_gb: int,
        opts: pulumi.ResourceOptions,
        launch_template: Mapping[str, Any] | None = None,
        cold: coldstart.ColdStartPlan | None = None,
    ) -> eks.ManagedNodeGroup:
        lt = aws.ec2.LaunchTemplate(
            f"{name}-{role}-lt",
            **render.launch_template_args(cluster_name, role, disk_gb, str(group_args["ami_type"]), cold),
            **(launch_template or {}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        wiring: dict[str, Any] = {
            "cluster": cluster,
            "node_role_arn": node_role.arn,
            "subnet_ids": subnets,
            "launch_template": {"id": lt.id, "version": lt.latest_version.apply(str)},
            # pulumi-eks sets `version` from the cluster only when no launch template is given
            # (pulumi/pulumi-eks nodejs/eks/nodes/nodegroup.ts), so without this the group never
            # follows a `kubernetesVersion` bump. Taken from the cluster's output, it waits for the
            # control plane's upgrade before EKS rolls the group.
            "version": self.kubernetes_version,
        }
        sized = with_live_size(group_args, self.cluster_name, self, wiring)  # what EKS has now, in the new range
        group: eks.ManagedNodeGroup = eks.ManagedNodeGroup(f"{name}-{role}", opts=opts, **sized)
        return group


def asg_name(group: eks.ManagedNodeGroup) -> pulumi.Output[str]:
    """The Auto Scaling group EKS created for a managed node group (for cluster-autoscaler tags)."""

    def resources(ng: Any) -> Any:
        return ng.resources

    def first_asg(rs: Any) -> str:
        return str(rs[0].autoscaling_groups[0].name)

    out: pulumi.Output[str] = group.node_group.apply(resources).apply(first_asg)
    return out


def subnets_in_zones(
    subnets: Any,
    known_zones: Sequence[pulumi.Input[str]] | None,
    zones: Sequence[str],
    parent: pulumi.Resource,
) -> pulumi.Output[list[str]]:
    """The private subnets (a list of IDs, or an Input of one) in Availability Zones `zones` (a pool pinned
    to its reservation's AZ, or an EFA pool's one AZ): from the subnets gpuplane created (their zones are
    known), else found by EC2 (`ec2:DescribeSubnets` filtered by ID and zone) among the given ones."""
    if known_zones is not None:
        pairs = pulumi.Output.all(pulumi.Output.all(*subnets), pulumi.Output.all(*known_zones))
        return pairs.apply(lambda v: [s for s, z in zip(v[0], v[1], strict=True) if z in zones])
    filters: list[aws.ec2.GetSubnetsFilterArgsDict] = [
        {"name": "subnet-id", "values": cast(Any, subnets)},  # Outputs inside: the invoke waits for them
        {"name": "availability-zone", "values": list(zones)},
    ]
    return aws.ec2.get_subnets_output(filters=filters, opts=pulumi.InvokeOutputOptions(parent=parent)).ids
