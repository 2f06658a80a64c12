"""The replacement table's data: per Pulumi type, (input path, effect, why, source[, flags]).

Paths are Pulumi input names (camelCase, list blocks pluralised by the bridge, e.g. terraform
`guest_accelerator` -> `guestAccelerators`). Sources name the upstream repo, file and schema field.
Flags: "exact" (an SDKv2 ForceNew block: only adding/removing it replaces), "when_removed", "target=<child>",
"old_has=<path>" (only when the stored object has that path), "when_gone=<path>" (only when a value the stored
object has there is gone).
See components/gpuplane/plan/replacement.py for how they are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .replacement_kubernetes import KUBERNETES, D, R, RawRule, forcenew
from .replacement_storage import STORAGE

TPG = "hashicorp/terraform-provider-google google/services/"
GKE_CLUSTER = TPG + "container/resource_container_cluster.go"
GKE_POOL = TPG + "container/resource_container_node_pool.go"
NODE_CONFIG = TPG + "container/node_config.go schemaNodeConfig"
TPA = "hashicorp/terraform-provider-aws internal/service/"
EKS_CLUSTER = TPA + "eks/cluster.go"
EKS_NG = TPA + "eks/node_group.go"
PEKS_CLUSTER = "pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts"
PEKS_NG = "pulumi/pulumi-eks nodejs/eks/nodes/nodegroup.ts createManagedNodeGroupInternal"


def _node_config(prefix: str) -> list[RawRule]:
    """node_config fields that are ForceNew in schemaNodeConfig (shared by cluster and node pool)."""
    fields = {
        "guestAccelerators": "guest_accelerator",
        "spot": "spot",
        "preemptible": "preemptible",
        "serviceAccount": "service_account",
        "oauthScopes": "oauth_scopes",
        "metadata": "metadata",
        "shieldedInstanceConfig": "shielded_instance_config",
        "localSsdCount": "local_ssd_count",
        "minCpuPlatform": "min_cpu_platform",
        "reservationAffinity": "reservation_affinity",
        "bootDiskKmsKey": "boot_disk_kms_key",
        "sandboxConfig": "sandbox_config",
        "flexStart": "flex_start",
        "maxRunDuration": "max_run_duration",
        "ephemeralStorageLocalSsdConfig": "ephemeral_storage_local_ssd_config",
        "secondaryBootDisks": "secondary_boot_disks",
    }
    return [
        ("nodeConfig", R, "adding or removing the node_config block", f"{NODE_CONFIG} `node_config` ForceNew", "exact"),
        *forcenew(NODE_CONFIG, *((f"{prefix}.{k}", f"node_config.{v}") for k, v in fields.items())),
    ]


# GKE recreates every node of the pool for these in-place node_config updates (nodePoolNodeConfigUpdate in
# node_config.go; https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools#change-machine-attributes).
# gcfs_config (image streaming) is counted here conservatively: GKE's table of changes that recreate nodes
# (concepts/node-pool-upgrade-strategies) was not readable offline; the node's image-streaming daemon is configured
# at boot.
GKE_NODE_RECREATE = [
    (f"nodeConfig.{k}", D, "updated in place, but GKE recreates every node (surge upgrade)", f"{NODE_CONFIG} `{v}`")
    for k, v in {
        "machineType": "machine_type",
        "diskSizeGb": "disk_size_gb",
        "diskType": "disk_type",
        "imageType": "image_type",
        "workloadMetadataConfig": "workload_metadata_config",
        "kubeletConfig": "kubelet_config",
        "linuxNodeConfig": "linux_node_config",
        "gvnic": "gvnic",
        "gcfsConfig": "gcfs_config",
    }.items()
]

_EKS_NG_FIELDS = (
    ("nodeGroupName", "node_group_name"),
    ("nodeGroupNamePrefix", "node_group_name_prefix"),
    ("instanceTypes", "instance_types"),
    ("amiType", "ami_type"),
    ("capacityType", "capacity_type"),
    ("subnetIds", "subnet_ids"),
    ("nodeRoleArn", "node_role_arn"),
    ("diskSize", "disk_size"),
    ("remoteAccess", "remote_access"),
    ("launchTemplate.id", "launch_template.id"),
    ("launchTemplate.name", "launch_template.name"),
)
# UpdateNodegroupVersion (resourceNodeGroupUpdate: HasChanges("launch_template", "release_version", "version"))
# rolls every node; `version` and `launch_template.version` are not ForceNew. Labels, taints and scaling go
# through UpdateNodegroupConfig without replacing nodes.
_EKS_NG_ROLL = [
    (path, D, "in-place update: EKS rolls every node (UpdateNodegroupVersion)", f"{EKS_NG} `{tf}` (not ForceNew)")
    for path, tf in (
        ("version", "version"),
        ("releaseVersion", "release_version"),
        ("launchTemplate.version", "launch_template.version"),
    )
]

TABLE: Mapping[str, list[RawRule]] = MappingProxyType(
    {
        **KUBERNETES,
        **STORAGE,
        "gcp:container/cluster:Cluster": [
            *forcenew(
                GKE_CLUSTER,
                ("name", "name"),
                ("location", "location"),
                ("project", "project"),
                ("network", "network"),
                ("subnetwork", "subnetwork"),
                ("enableAutopilot", "enable_autopilot"),
                ("initialNodeCount", "initial_node_count"),
                ("networkingMode", "networking_mode"),
                ("datapathProvider", "datapath_provider"),
                ("defaultMaxPodsPerNode", "default_max_pods_per_node"),
                ("description", "description"),
                ("enableKubernetesAlpha", "enable_kubernetes_alpha"),
                ("ipAllocationPolicy.clusterSecondaryRangeName", "ip_allocation_policy.cluster_secondary_range_name"),
                ("ipAllocationPolicy.servicesSecondaryRangeName", "ip_allocation_policy.services_secondary_range_name"),
                ("ipAllocationPolicy.clusterIpv4CidrBlock", "ip_allocation_policy.cluster_ipv4_cidr_block"),
                ("ipAllocationPolicy.servicesIpv4CidrBlock", "ip_allocation_policy.services_ipv4_cidr_block"),
                ("privateClusterConfig.masterIpv4CidrBlock", "private_cluster_config.master_ipv4_cidr_block"),
                (
                    "privateClusterConfig.privateEndpointSubnetwork",
                    "private_cluster_config.private_endpoint_subnetwork",
                ),
                (
                    "clusterAutoscaling.autoProvisioningDefaults.bootDiskKmsKey",
                    "cluster_autoscaling.auto_provisioning_defaults.boot_disk_kms_key",
                ),
                ("confidentialNodes", "confidential_nodes"),
            ),
            ("ipAllocationPolicy", R, "adding or removing ip_allocation_policy", f"{GKE_CLUSTER} ForceNew", "exact"),
            *_node_config("nodeConfig"),
            # resourceContainerClusterUpdate sends node_config changes to the default pool through the
            # same nodePoolNodeConfigUpdate as a node pool's
            *GKE_NODE_RECREATE,
        ],
        "gcp:container/nodePool:NodePool": [
            *forcenew(
                GKE_POOL,
                ("name", "name"),
                ("namePrefix", "name_prefix"),
                ("cluster", "cluster"),
                ("location", "location"),
                ("project", "project"),
                ("initialNodeCount", "initial_node_count"),
                ("maxPodsPerNode", "max_pods_per_node"),
                ("queuedProvisioning", "queued_provisioning"),
                ("networkConfig.podRange", "network_config.pod_range"),
                ("networkConfig.additionalNodeNetworkConfigs", "network_config.additional_node_network_configs"),
                ("networkConfig.additionalPodNetworkConfigs", "network_config.additional_pod_network_configs"),
                ("networkConfig.podIpv4CidrBlock", "network_config.pod_ipv4_cidr_block"),
                ("networkConfig.createPodRange", "network_config.create_pod_range"),
            ),
            # placement_policy: a ForceNew list (SDKv2: adding or removing it replaces); inside it only policy_name is
            # ForceNew, `type` and `tpu_topology` are not (and no update path sends them).
            (
                "placementPolicy",
                R,
                "adding or removing the placement policy",
                f"{GKE_POOL} `placement_policy` ForceNew",
                "exact",
            ),
            *forcenew(GKE_POOL, ("placementPolicy.policyName", "placement_policy.policy_name")),
            *_node_config("nodeConfig"),
            *GKE_NODE_RECREATE,
            ("version", D, "node version upgrade recreates every node", f"{GKE_POOL} `version` (not ForceNew)"),
        ],
        "gcp:serviceaccount/account:Account": forcenew(
            TPG + "resourcemanager/resource_google_service_account.go",
            ("accountId", "account_id"),
            ("project", "project"),
        ),
        "gcp:serviceaccount/iAMMember:IAMMember": [
            *forcenew(
                "hashicorp/terraform-provider-google google/tpgiamresource/resource_iam_member.go",
                ("role", "role"),
                ("member", "member"),
                ("condition", "condition"),
            ),
            *forcenew(
                TPG + "resourcemanager/iam_service_account.go IamServiceAccountSchema",
                ("serviceAccountId", "service_account_id"),
            ),
        ],
        "gcp:projects/iAMMember:IAMMember": [
            *forcenew(
                "hashicorp/terraform-provider-google google/tpgiamresource/resource_iam_member.go",
                ("role", "role"),
                ("member", "member"),
                ("condition", "condition"),
            ),
            *forcenew(TPG + "resourcemanager/iam_project.go IamProjectSchema", ("project", "project")),
        ],
        # The extra VPCs of GPUDirect pools (gcp/gpudirect.py). `mtu` updates in place since provider v6.37
        # (resourceComputeNetworkUpdate `d.HasChange("mtu")`); pulumi-gcp >= 9 bundles v7.
        "gcp:compute/network:Network": forcenew(
            TPG + "compute/resource_compute_network.go",
            *((k, k) for k in ("name", "project", "description")),
            ("autoCreateSubnetworks", "auto_create_subnetworks"),
            ("networkProfile", "network_profile"),
        ),
        "gcp:compute/subnetwork:Subnetwork": [
            *forcenew(
                TPG + "compute/resource_compute_subnetwork.go",
                # `purpose` updates in place since v6.25 (resourceComputeSubnetworkUpdate).
                *((k, k) for k in ("name", "network", "region", "project")),
            ),
            (
                "ipCidrRange",
                R,
                "a range that does not contain the old one replaces the subnetwork (only widening updates in place)",
                TPG + "compute/resource_compute_subnetwork.go `ip_cidr_range` CustomizeDiff isShrinkageIpCidr "
                "(ForceNew unless the new range is a superset)",
            ),
        ],
        # `network` is not ForceNew: the provider sends it in an update, which the API refuses (an apply error,
        # not a replacement; not modelled).
        "gcp:compute/firewall:Firewall": forcenew(
            TPG + "compute/resource_compute_firewall.go",
            *((k, k) for k in ("name", "project", "direction")),
        ),
        "gcp:compute/router:Router": forcenew(
            TPG + "compute/resource_compute_router.go",
            *((k, k) for k in ("name", "network", "region", "project")),
        ),
        "gcp:compute/routerNat:RouterNat": forcenew(
            TPG + "compute/resource_compute_router_nat.go",
            *((k, k) for k in ("name", "router", "region", "project", "type")),
            ("endpointTypes", "endpoint_types"),
            ("initialNatIps", "initial_nat_ips"),
        ),
        "eks:index:Cluster": [
            *forcenew(PEKS_CLUSTER + " -> " + EKS_CLUSTER, ("name", "name"), ("serviceRole", "role_arn")),
            (
                "ipFamily",
                R,
                "replaceOnChanges",
                "pulumi/pulumi-eks provider/cmd/pulumi-resource-eks/schema.json "
                "eks:index:Cluster ipFamily replaceOnChanges; "
                + EKS_CLUSTER
                + " `kubernetes_network_config.ip_family`",
            ),
            *forcenew(EKS_CLUSTER, ("kubernetesServiceIpAddressRange", "kubernetes_network_config.service_ipv4_cidr")),
            (
                "vpcId",
                R,
                "the cluster security group is replaced and EKS cannot move a cluster to another VPC",
                PEKS_CLUSTER
                + " eksClusterSecurityGroup vpcId -> "
                + TPA
                + "ec2/vpc_security_group.go `vpc_id` ForceNew",
            ),
            (
                "encryptionConfigKeyArn",
                R,
                "envelope encryption cannot be disabled once enabled",
                EKS_CLUSTER + ' customdiff.ForceNewIfChange("encryption_config") on removal',
                "when_removed",
            ),
            *[
                (
                    f"accessEntries.*.{k}",
                    R,
                    "the access entry is recreated (access briefly lost)",
                    f"{TPA}eks/access_entry.go `{v}` ForceNew",
                    "target=access entry",
                )
                for k, v in (("principalArn", "principal_arn"), ("type", "type"))
            ],
            (
                "accessEntries.*.accessPolicies",
                R,
                "the access policy association is recreated (no Update: access briefly lost)",
                f"{TPA}eks/access_policy_association.go `policy_arn`, `access_scope` ForceNew",
                "target=access policy association",
            ),
        ],
        "eks:index:ManagedNodeGroup": [
            *forcenew(
                PEKS_NG + " -> " + EKS_NG,
                ("cluster", "cluster_name"),
                ("clusterName", "cluster_name"),
                ("nodeRole", "node_role_arn"),
                *_EKS_NG_FIELDS,
            ),
            *_EKS_NG_ROLL,
        ],
        "aws:eks/nodeGroup:NodeGroup": [
            *forcenew(EKS_NG, ("clusterName", "cluster_name"), *_EKS_NG_FIELDS),
            *_EKS_NG_ROLL,
        ],
        "aws:eks/accessEntry:AccessEntry": forcenew(
            TPA + "eks/access_entry.go",
            ("clusterName", "cluster_name"),
            ("principalArn", "principal_arn"),
            ("type", "type"),
        ),
        "aws:eks/addon:Addon": forcenew(
            TPA + "eks/addon.go", ("clusterName", "cluster_name"), ("addonName", "addon_name")
        ),
        # the provider has no update for a key: every argument is RequiresReplace
        "tls:index/privateKey:PrivateKey": forcenew(
            "hashicorp/terraform-provider-tls internal/provider/resource_private_key.go (RequiresReplace)",
            ("algorithm", "algorithm"),
            ("ecdsaCurve", "ecdsa_curve"),
            ("rsaBits", "rsa_bits"),
        ),
        "aws:eks/podIdentityAssociation:PodIdentityAssociation": forcenew(
            TPA + "eks/pod_identity_association.go (RequiresReplace)",
            ("clusterName", "cluster_name"),
            ("namespace", "namespace"),
            ("serviceAccount", "service_account"),
        ),
        "aws:ec2/placementGroup:PlacementGroup": forcenew(
            TPA + "ec2/ec2_placement_group.go",
            ("name", "name"),
            ("strategy", "strategy"),
            ("partitionCount", "partition_count"),
            ("spreadLevel", "spread_level"),
        ),
        "aws:ec2/launchTemplate:LaunchTemplate": [
            *forcenew(TPA + "ec2/ec2_launch_template.go", ("name", "name"), ("namePrefix", "name_prefix")),
            *[
                (
                    k,
                    D,
                    "a new template version: managed node groups on it roll every node",
                    TPA + f"ec2/ec2_launch_template.go resourceLaunchTemplateUpdate updateKeys `{v}`",
                )
                for k, v in (
                    ("blockDeviceMappings", "block_device_mappings"),
                    ("metadataOptions", "metadata_options"),
                    ("imageId", "image_id"),
                    ("instanceType", "instance_type"),
                    ("userData", "user_data"),
                    ("networkInterfaces", "network_interfaces"),
                    ("iamInstanceProfile", "iam_instance_profile"),
                    ("vpcSecurityGroupIds", "vpc_security_group_ids"),
                    ("tagSpecifications", "tag_specifications"),
                    ("description", "description"),
                )
            ],
        ],
        "aws:ec2/vpc:Vpc": forcenew(TPA + "ec2/vpc_.go", ("cidrBlock", "cidr_block")),
        # An EFA pool's security group (rules inline: `ingress` / `egress` update in place).
        "aws:ec2/securityGroup:SecurityGroup": forcenew(
            TPA + "ec2/vpc_security_group.go",
            ("name", "name"),
            ("namePrefix", "name_prefix"),
            ("description", "description"),
            ("vpcId", "vpc_id"),
        ),
        "aws:ec2/subnet:Subnet": forcenew(
            TPA + "ec2/vpc_subnet.go",
            ("vpcId", "vpc_id"),
            ("cidrBlock", "cidr_block"),
            ("availabilityZone", "availability_zone"),
            ("availabilityZoneId", "availability_zone_id"),
        ),
        "aws:ec2/eip:Eip": forcenew(
            TPA + "ec2/ec2_eip.go", ("domain", "domain"), ("networkBorderGroup", "network_border_group")
        ),
        "aws:ec2/natGateway:NatGateway": forcenew(
            TPA + "ec2/vpc_nat_gateway.go",
            ("allocationId", "allocation_id"),
            ("subnetId", "subnet_id"),
            ("connectivityType", "connectivity_type"),
        ),
        "aws:ec2/routeTable:RouteTable": forcenew(TPA + "ec2/vpc_route_table.go", ("vpcId", "vpc_id")),
        "aws:ec2/routeTableAssociation:RouteTableAssociation": forcenew(
            TPA + "ec2/vpc_route_table_association.go", ("subnetId", "subnet_id"), ("gatewayId", "gateway_id")
        ),
        "aws:iam/role:Role": forcenew(
            TPA + "iam/role.go", ("name", "name"), ("namePrefix", "name_prefix"), ("path", "path")
        ),
        "aws:iam/rolePolicy:RolePolicy": forcenew(
            TPA + "iam/role_policy.go", ("name", "name"), ("namePrefix", "name_prefix"), ("role", "role")
        ),
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment": forcenew(
            TPA + "iam/role_policy_attachment.go", ("role", "role"), ("policyArn", "policy_arn")
        ),
        "aws:kms/key:Key": forcenew(
            TPA + "kms/key.go",
            ("customerMasterKeySpec", "customer_master_key_spec"),
            ("keyUsage", "key_usage"),
            ("multiRegion", "multi_region"),
            ("customKeyStoreId", "custom_key_store_id"),
        ),
        "aws:kms/alias:Alias": forcenew(TPA + "kms/alias.go", ("name", "name"), ("namePrefix", "name_prefix")),
        "aws:sqs/queue:Queue": forcenew(
            TPA + "sqs/queue.go", ("name", "name"), ("namePrefix", "name_prefix"), ("fifoQueue", "fifo_queue")
        ),
        "aws:sqs/queuePolicy:QueuePolicy": forcenew(TPA + "sqs/queue_policy.go", ("queueUrl", "queue_url")),
        "aws:cloudwatch/eventRule:EventRule": forcenew(
            TPA + "events/rule.go", ("name", "name"), ("namePrefix", "name_prefix"), ("eventBusName", "event_bus_name")
        ),
        "aws:cloudwatch/eventTarget:EventTarget": forcenew(
            TPA + "events/target.go", ("rule", "rule"), ("targetId", "target_id"), ("eventBusName", "event_bus_name")
        ),
        "aws:autoscaling/tag:Tag": forcenew(
            TPA + "autoscaling/group_tag.go", ("autoscalingGroupName", "autoscaling_group_name"), ("tag", "tag")
        ),
    }
)

NO_REPLACE_INPUTS: Mapping[str, str] = MappingProxyType(
    {
        "gpuplane:": "gpuplane's own components register no inputs",
        "pulumi:pulumi:Stack": "the stack component registers no inputs",
        "aws:ec2/internetGateway:InternetGateway": (
            TPA + "ec2/vpc_internet_gateway.go: vpc_id is attached/detached in place; tags in place"
        ),
        "pulumi:providers:aws": "provider configuration (region): not modelled; a new region is a new stack",
        "pulumi:providers:gcp": "provider configuration (project/region): not modelled; a new project is a new stack",
    }
)
