"""What each provider does when one input changes, restated from the providers' source for the tests.

This is the oracle for `gpuplane.plan.replacement_table`, written out by hand (not derived from the table):
per Pulumi type, input path -> what changing it does. Kinds:

- ``R``: a new value replaces the resource (terraform `ForceNew` / `RequiresReplace`, pulumi
  `replaceOnChanges`, pulumi-kubernetes `forceNewProperties`);
- ``D``: updated in place, but every node is recreated or rolled;
- ``BLOCK``: an SDKv2 ForceNew block: adding or removing it replaces, a change inside it does not (unless
  that nested field is itself ForceNew);
- ``REMOVED``: replaces only when the value is removed (`customdiff.ForceNewIfChange`);
- ``CHILD``: replaces a child the component creates (``CHILD:<what>``), not the resource;
- ``W_GONE``: updated in place, but when a flavor name the queue had is gone (renamed or dropped, not added or
  reordered) the workloads Kueue admitted on it are disturbed;
- ``F``: the API server refuses the update (a CEL transition rule of the CRD, "field is immutable"), and
  ``F_TOPOLOGY`` only when the stored object has `spec.topologyName` (Kueue's ResourceFlavor rules start
  `!has(oldSelf.topologyName) || ...`);
- ``R_UNLESS_ID``: replaces, unless the provider's `clusterIdentifier` is set, the same before and after; ``R_ID``: a
  changed `clusterIdentifier` replaces, a new one does not (pulumi-kubernetes provider.go DiffConfig);
- ``-``: updated in place, nothing replaced or rolled (negative cases, so a rule added by mistake fails).

`*` in a path is one map key (the tests use a concrete key).
"""

from __future__ import annotations

TF_GOOGLE_NODE_CONFIG = "hashicorp/terraform-provider-google google/services/container/node_config.go"
"""schemaNodeConfig: ForceNew on the block and on most machine fields; nodePoolNodeConfigUpdate updates
machine_type, disk_*, image_type, workload_metadata_config, kubelet_config, linux_node_config, gvnic in place
by recreating nodes; labels, resource_labels, tags and taints update without recreating nodes."""

NODE_CONFIG_FORCENEW = (
    "guestAccelerators",
    "spot",
    "preemptible",
    "serviceAccount",
    "oauthScopes",
    "metadata",
    "shieldedInstanceConfig",
    "localSsdCount",
    "minCpuPlatform",
    "reservationAffinity",
    "bootDiskKmsKey",
    "sandboxConfig",
    "flexStart",
    "maxRunDuration",
    "ephemeralStorageLocalSsdConfig",
    "secondaryBootDisks",
)
NODE_CONFIG_RECREATES_NODES = (
    "machineType",
    "diskSizeGb",
    "diskType",
    "imageType",
    "workloadMetadataConfig",
    "kubeletConfig",
    "linuxNodeConfig",
    "gvnic",
    "gcfsConfig",  # image streaming: counted as recreating nodes until GKE's table says otherwise
)
NODE_CONFIG_IN_PLACE = ("labels", "resourceLabels", "tags", "taints")


def _node_config(recreate: str) -> dict[str, str]:
    return {
        "nodeConfig": "BLOCK",
        **{f"nodeConfig.{k}": "R" for k in NODE_CONFIG_FORCENEW},
        **{f"nodeConfig.{k}": recreate for k in NODE_CONFIG_RECREATES_NODES},
        **{f"nodeConfig.{k}": "-" for k in NODE_CONFIG_IN_PLACE},
    }


# hashicorp/terraform-provider-aws internal/service/eks/node_group.go: ForceNew fields; version,
# release_version and launch_template.version go through UpdateNodegroupVersion (every node rolls);
# scaling_config, labels, taints, update_config through UpdateNodegroupConfig (no roll).
EKS_NODE_GROUP = {
    "nodeGroupName": "R",
    "nodeGroupNamePrefix": "R",
    "instanceTypes": "R",
    "amiType": "R",
    "capacityType": "R",
    "subnetIds": "R",
    "nodeRoleArn": "R",
    "diskSize": "R",
    "remoteAccess": "R",
    "launchTemplate.id": "R",
    "launchTemplate.name": "R",
    "version": "D",
    "releaseVersion": "D",
    "launchTemplate.version": "D",
    "scalingConfig.desiredSize": "-",
    "scalingConfig.minSize": "-",
    "scalingConfig.maxSize": "-",
    "labels": "-",
    "taints": "-",
    "updateConfig": "-",
    "tags": "-",
}

CASES: dict[str, dict[str, str]] = {
    # terraform-provider-google container/resource_container_cluster.go
    "gcp:container/cluster:Cluster": {
        **{
            k: "R"
            for k in (
                "name",
                "location",
                "project",
                "network",
                "subnetwork",
                "enableAutopilot",
                "initialNodeCount",
                "networkingMode",
                "datapathProvider",
                "defaultMaxPodsPerNode",
                "description",
                "enableKubernetesAlpha",
                "ipAllocationPolicy.clusterSecondaryRangeName",
                "ipAllocationPolicy.servicesSecondaryRangeName",
                "ipAllocationPolicy.clusterIpv4CidrBlock",
                "ipAllocationPolicy.servicesIpv4CidrBlock",
                "privateClusterConfig.masterIpv4CidrBlock",
                "privateClusterConfig.privateEndpointSubnetwork",
                "clusterAutoscaling.autoProvisioningDefaults.bootDiskKmsKey",
                "confidentialNodes",
            )
        },
        "ipAllocationPolicy": "BLOCK",
        # the default pool's node_config: resourceContainerClusterUpdate sends node_config changes through
        # nodePoolNodeConfigUpdate, the same in-place updates as a node pool's
        **_node_config("D"),
        "minMasterVersion": "-",
        "releaseChannel": "-",
        "monitoringConfig": "-",
        "clusterAutoscaling.enabled": "-",
        "deletionProtection": "-",
    },
    # terraform-provider-google container/resource_container_node_pool.go
    "gcp:container/nodePool:NodePool": {
        **{
            k: "R"
            for k in (
                "name",
                "namePrefix",
                "cluster",
                "location",
                "project",
                "initialNodeCount",
                "maxPodsPerNode",
                "queuedProvisioning",
                "networkConfig.podRange",
                "networkConfig.additionalNodeNetworkConfigs",
                "networkConfig.additionalPodNetworkConfigs",
                "networkConfig.podIpv4CidrBlock",
                "networkConfig.createPodRange",
            )
        },
        **_node_config("D"),
        # resource_container_node_pool.go: placement_policy ForceNew (a list: its count), policy_name ForceNew,
        # type and tpu_topology not ForceNew, and no update path sends them: a change is planned as an update that
        # never applies (a perpetual diff; gpuplane only ever sets type COMPACT or no policy)
        "placementPolicy": "BLOCK",
        "placementPolicy.policyName": "R",
        "placementPolicy.type": "-",
        "placementPolicy.tpuTopology": "-",
        "version": "D",
        "nodeCount": "-",
        "autoscaling.maxNodeCount": "-",
        "autoscaling.totalMaxNodeCount": "-",
        "management.autoUpgrade": "-",
        "nodeLocations": "-",
        "upgradeSettings": "-",
    },
    # terraform-provider-google resourcemanager/resource_google_service_account.go
    "gcp:serviceaccount/account:Account": {"accountId": "R", "project": "R", "displayName": "-"},
    # tpgiamresource/resource_iam_member.go and resourcemanager/iam_project.go
    "gcp:projects/iAMMember:IAMMember": {"role": "R", "member": "R", "condition": "R", "project": "R"},
    # tpgiamresource/resource_iam_member.go and resourcemanager/iam_service_account.go (service_account_id ForceNew)
    "gcp:serviceaccount/iAMMember:IAMMember": {"role": "R", "member": "R", "condition": "R", "serviceAccountId": "R"},
    # compute/resource_compute_network.go
    "gcp:compute/network:Network": {
        "name": "R",
        "project": "R",
        "description": "R",
        "autoCreateSubnetworks": "R",
        "networkProfile": "R",
        "mtu": "-",  # in place since v6.37 (resourceComputeNetworkUpdate)
        "routingMode": "-",
    },
    # compute/resource_compute_subnetwork.go (ip_cidr_range: ForceNew unless widened; taken as replacing)
    "gcp:compute/subnetwork:Subnetwork": {
        "name": "R",
        "network": "R",
        "region": "R",
        "project": "R",
        "purpose": "-",  # in place since v6.25
        "ipCidrRange": "R",  # ForceNewIfChange(IsShrinkageIpCidr): widening is in place; gpuplane assumes a shrink
        "privateIpGoogleAccess": "-",
    },
    # compute/resource_compute_firewall.go
    "gcp:compute/firewall:Firewall": {
        "name": "R",
        "network": "-",  # not ForceNew: sent in an update, which the API refuses
        "project": "R",
        "direction": "R",
        "allows": "-",
        "sourceRanges": "-",
    },
    # compute/resource_compute_router.go, resource_compute_router_nat.go
    "gcp:compute/router:Router": {"name": "R", "network": "R", "region": "R", "project": "R", "bgp": "-"},
    "gcp:compute/routerNat:RouterNat": {
        "name": "R",
        "router": "R",
        "region": "R",
        "project": "R",
        "type": "R",
        "endpointTypes": "R",
        "initialNatIps": "R",
        "natIpAllocateOption": "-",
        "sourceSubnetworkIpRangesToNat": "-",
    },
    # pulumi-eks cluster.ts passes these to aws.eks.Cluster (ForceNew in eks/cluster.go), ipFamily is
    # replaceOnChanges in its schema.json, vpcId replaces the cluster security group; encryption can only be
    # added (ForceNewIfChange on removal); access entries are children (eks/access_entry.go).
    "eks:index:Cluster": {
        "name": "R",
        "serviceRole": "R",
        "ipFamily": "R",
        "kubernetesServiceIpAddressRange": "R",
        "vpcId": "R",
        "encryptionConfigKeyArn": "REMOVED",
        "accessEntries.*.principalArn": "CHILD:access entry",
        "accessEntries.*.type": "CHILD:access entry",
        "accessEntries.*.accessPolicies": "CHILD:access policy association",  # access_policy_association.go
        "version": "-",
        "desiredCapacity": "-",
        "tags": "-",
    },
    # pulumi-eks nodegroup.ts createManagedNodeGroupInternal -> aws.eks.NodeGroup
    "eks:index:ManagedNodeGroup": {**EKS_NODE_GROUP, "cluster": "R", "clusterName": "R", "nodeRole": "R"},
    "aws:eks/nodeGroup:NodeGroup": {**EKS_NODE_GROUP, "clusterName": "R"},
    # terraform-provider-aws eks/access_entry.go, addon.go, pod_identity_association.go
    "aws:eks/accessEntry:AccessEntry": {"clusterName": "R", "principalArn": "R", "type": "R", "kubernetesGroups": "-"},
    "aws:eks/addon:Addon": {"clusterName": "R", "addonName": "R", "addonVersion": "-", "configurationValues": "-"},
    # terraform-provider-tls internal/provider/resource_private_key.go: no Update, every attribute RequiresReplace
    "tls:index/privateKey:PrivateKey": {"algorithm": "R", "ecdsaCurve": "R", "rsaBits": "R"},
    # terraform-provider-aws internal/service/s3: bucket.go (`bucket`, `bucket_prefix`, `object_lock_enabled`
    # ForceNew; force_destroy and tags in place); each bucket sub-resource's `bucket` is ForceNew, its settings update
    "aws:s3/bucket:Bucket": {
        "bucket": "R",
        "bucketPrefix": "R",
        "objectLockEnabled": "R",
        "forceDestroy": "-",
        "tags": "-",
    },
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": {"bucket": "R", "blockPublicAcls": "-"},
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": {"bucket": "R", "rule": "-"},
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": {
        "bucket": "R",
        "expectedBucketOwner": "R",
        "rules": "-",
    },
    # terraform-provider-google storage/resource_storage_bucket.go: name, location, project, hierarchical_namespace
    # ForceNew; uniform access, public access prevention, labels and force_destroy update in place
    "gcp:storage/bucket:Bucket": {
        "name": "R",
        "location": "R",
        "project": "R",
        "hierarchicalNamespace": "R",
        "uniformBucketLevelAccess": "-",
        "publicAccessPrevention": "-",
        "labels": "-",
        "forceDestroy": "-",
    },
    # resourcemanager/resource_google_project_service.go: service and project ForceNew; the disable flags in place
    "gcp:projects/service:Service": {"service": "R", "project": "R", "disableOnDestroy": "-"},
    # tpgiamresource/resource_iam_member.go: the member is its parent, role, member and condition, all ForceNew
    "gcp:storage/bucketIAMMember:BucketIAMMember": {"bucket": "R", "role": "R", "member": "R", "condition": "R"},
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": {
        "clusterName": "R",
        "namespace": "R",
        "serviceAccount": "R",
        "roleArn": "-",
    },
    # ec2/ec2_placement_group.go
    "aws:ec2/placementGroup:PlacementGroup": {
        "name": "R",
        "strategy": "R",
        "partitionCount": "R",
        "spreadLevel": "R",
        "tags": "-",
    },
    # ec2/ec2_launch_template.go: name is ForceNew; the rest makes a new version, which rolls the node
    # groups that use it
    "aws:ec2/launchTemplate:LaunchTemplate": {
        "name": "R",
        "namePrefix": "R",
        **{
            k: "D"
            for k in (
                "blockDeviceMappings",
                "metadataOptions",
                "imageId",
                "instanceType",
                "userData",
                "networkInterfaces",
                "iamInstanceProfile",
                "vpcSecurityGroupIds",
                "tagSpecifications",
                "description",
            )
        },
        "tags": "-",
        "updateDefaultVersion": "-",
    },
    # ec2/vpc_.go, vpc_subnet.go, ec2_eip.go, vpc_nat_gateway.go, vpc_route_table*.go
    "aws:ec2/vpc:Vpc": {"cidrBlock": "R", "enableDnsHostnames": "-", "tags": "-"},
    # ec2/vpc_security_group.go: name, name_prefix, description and vpc_id ForceNew; inline rules and tags in place
    "aws:ec2/securityGroup:SecurityGroup": {
        "name": "R",
        "namePrefix": "R",
        "description": "R",
        "vpcId": "R",
        "ingress": "-",
        "egress": "-",
        "tags": "-",
    },
    "aws:ec2/subnet:Subnet": {
        "vpcId": "R",
        "cidrBlock": "R",
        "availabilityZone": "R",
        "availabilityZoneId": "R",
        "mapPublicIpOnLaunch": "-",
        "tags": "-",
    },
    "aws:ec2/eip:Eip": {"domain": "R", "networkBorderGroup": "R", "tags": "-"},
    "aws:ec2/natGateway:NatGateway": {"allocationId": "R", "subnetId": "R", "connectivityType": "R", "tags": "-"},
    "aws:ec2/routeTable:RouteTable": {"vpcId": "R", "routes": "-"},
    "aws:ec2/routeTableAssociation:RouteTableAssociation": {"subnetId": "R", "gatewayId": "R", "routeTableId": "-"},
    # iam/role.go, role_policy.go, role_policy_attachment.go
    "aws:iam/role:Role": {"name": "R", "namePrefix": "R", "path": "R", "assumeRolePolicy": "-", "tags": "-"},
    "aws:iam/rolePolicy:RolePolicy": {"name": "R", "namePrefix": "R", "role": "R", "policy": "-"},
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": {"role": "R", "policyArn": "R"},
    # kms/key.go, kms/alias.go
    "aws:kms/key:Key": {
        "customerMasterKeySpec": "R",
        "keyUsage": "R",
        "multiRegion": "R",
        "customKeyStoreId": "R",
        "description": "-",
        "enableKeyRotation": "-",
    },
    "aws:kms/alias:Alias": {"name": "R", "namePrefix": "R", "targetKeyId": "-"},
    # sqs/queue.go, queue_policy.go
    "aws:sqs/queue:Queue": {"name": "R", "namePrefix": "R", "fifoQueue": "R", "messageRetentionSeconds": "-"},
    "aws:sqs/queuePolicy:QueuePolicy": {"queueUrl": "R", "policy": "-"},
    # events/rule.go, events/target.go
    "aws:cloudwatch/eventRule:EventRule": {"name": "R", "namePrefix": "R", "eventBusName": "R", "eventPattern": "-"},
    "aws:cloudwatch/eventTarget:EventTarget": {"rule": "R", "targetId": "R", "eventBusName": "R", "arn": "-"},
    # autoscaling/group_tag.go
    "aws:autoscaling/tag:Tag": {"autoscalingGroupName": "R", "tag": "R"},
    # pulumi-kubernetes helm_release.go forceNewFields (.name, .namespace); values update the release
    "kubernetes:helm.sh/v3:Release": {"name": "R", "namespace": "R", "values": "-", "version": "-"},
    # pulumi-kubernetes diff.go: metadata.name/namespace for every object; ConfigMap data is immutable
    "kubernetes:core/v1:ConfigMap": {
        "data": "R",
        "binaryData": "R",
        "metadata.name": "R",
        "metadata.namespace": "R",
        "metadata.labels": "-",
    },
    "kubernetes:core/v1:Namespace": {"metadata.name": "R", "metadata.labels": "-"},
    "kubernetes:batch/v1:Job": {  # diff.go forceNewProperties `job` (batch/v1)
        "metadata.name": "R",
        "metadata.namespace": "R",
        "spec.template": "R",
        "spec.selector": "R",
        "spec.completions": "R",
        "spec.parallelism": "R",
        "spec.backoffLimit": "-",
        "spec.activeDeadlineSeconds": "-",
    },
    "kubernetes:apps/v1:DaemonSet": {
        "metadata.name": "R",
        "metadata.namespace": "R",
        "spec.selector": "R",  # diff.go forceNewProperties for apps/v1 DaemonSet
        "spec.template": "-",
    },
    # diff.go forceNewProperties: `deployment` (apps/v1) .spec.selector; core/v1 Service .spec.clusterIP,
    # ResourceQuota .spec.scopes; a Secret without enableSecretMutable (gpuplane does not set it): .type, .data and
    # .stringData
    "kubernetes:apps/v1:Deployment": {"spec.selector": "R", "spec.replicas": "-", "spec.template": "-"},
    "kubernetes:core/v1:Service": {"spec.clusterIP": "R", "spec.ports": "-", "spec.selector": "-"},
    # diff.go forceNewProperties core/v1: a PersistentVolume's sources (`.spec.csi`, ...), a claim's
    # `.spec.accessModes`, `.spec.selector`, `.spec.storageClassName`, `.spec.volumeName`; size and labels in place
    "kubernetes:core/v1:PersistentVolume": {"spec.csi": "R", "spec.mountOptions": "-", "metadata.labels": "-"},
    "kubernetes:core/v1:PersistentVolumeClaim": {
        "spec.accessModes": "R",
        "spec.storageClassName": "R",
        "spec.volumeName": "R",
        "spec.selector": "R",
        "spec.resources": "-",
    },
    "kubernetes:core/v1:ResourceQuota": {"spec.scopes": "R", "spec.hard": "-"},
    "kubernetes:core/v1:Secret": {"type": "R", "data": "R", "stringData": "R", "metadata.labels": "-"},
    # pulumi-kubernetes provider.go DiffConfig: a different active cluster replaces the provider (gpuplane takes
    # any kubeconfig change as one: a path diff cannot see which cluster is active)
    # ... unless `clusterIdentifier` is set and unchanged (DiffConfig: then only a new identifier replaces it)
    "pulumi:providers:kubernetes": {
        "kubeconfig": "R_UNLESS_ID",
        "context": "R_UNLESS_ID",
        "cluster": "R_UNLESS_ID",
        "clusterIdentifier": "R_ID",
        "enableServerSideApply": "-",
    },
    # Karpenter drift (kubernetes-sigs/karpenter disruption.md; aws provider drift.go): the object updates, its
    # nodes are replaced
    "kubernetes:karpenter.sh/v1:NodePool": {
        "spec.template": "D",
        "spec.limits": "-",
        "spec.disruption": "-",
        "metadata.name": "R",
        # karpenter.sh_nodepools.yaml (v1.14.1) nodeClassRef: "nodeClassRef.group is immutable"
        # (self.group == oldSelf.group), "nodeClassRef.kind is immutable" (self.kind == oldSelf.kind); its name
        # may change (drift)
        "spec.template.spec.nodeClassRef.group": "F",
        "spec.template.spec.nodeClassRef.kind": "F",
        "spec.template.spec.nodeClassRef.name": "D",
    },
    # Kueue v0.19.2: a ClusterQueue moved to another flavor name keeps its admitted workloads' usage under the old
    # name (pkg/cache/scheduler/clusterqueue.go updateQuotasAndResourceGroups) and drops the DWS check of those
    # admitted on it (pkg/workload/workload.go AdmissionChecksForWorkload); quotas and cohorts update plainly
    "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue": {
        "spec.resourceGroups": "W_GONE",
        "spec.admissionChecksStrategy": "W_GONE",
        "spec.cohortName": "-",
    },
    # Kueue v0.19.2 CRDs (config/components/crd/bases): "field is immutable" (self == oldSelf)
    "kubernetes:kueue.x-k8s.io/v1beta2:Topology": {"spec.levels": "F", "metadata.labels": "-"},
    "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue": {"spec.clusterQueue": "F", "spec.stopPolicy": "-"},
    "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck": {"spec.controllerName": "F", "spec.parameters.name": "-"},
    # ResourceFlavor spec rules: "nodeLabels are immutable when topologyName is set", the same for tolerations
    # and topologyName itself, each `!has(oldSelf.topologyName) || ...`; nodeTaints has no such rule
    "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor": {
        "spec.nodeLabels": "F_TOPOLOGY",
        "spec.tolerations": "F_TOPOLOGY",
        "spec.topologyName": "F_TOPOLOGY",
        "spec.nodeTaints": "-",
    },
    # resource.nvidia.com_computedomains.yaml (dra-driver-nvidia-gpu v0.4.1): "A computeDomain.spec is
    # immutable" (self == oldSelf on spec)
    "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain": {"spec": "F", "spec.numNodes": "F", "metadata.labels": "-"},
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": {"spec": "D", "metadata.name": "R", "metadata.labels": "-"},
    # pulumi-pulumiservice provider/pkg/resources/deployment_settings.go Diff: organization, project and stack are
    # `replaceProperties`; the git source and the OIDC settings update in place (UpdateDeploymentSettings)
    "pulumiservice:index:DeploymentSettings": {
        "organization": "R",
        "project": "R",
        "stack": "R",
        "sourceContext.git.branch": "-",
        "sourceContext.git.repoUrl": "-",
        "operationContext.oidc.aws.roleARN": "-",
        "operationContext.oidc.gcp.serviceAccount": "-",
    },
    # drift_schedules.go: organization, project, stack tagged `provider:"replaceOnChanges"`; Update changes the cron
    # and the remediation of the same schedule
    "pulumiservice:index:DriftSchedule": {
        "organization": "R",
        "project": "R",
        "stack": "R",
        "scheduleCron": "-",
        "autoRemediate": "-",
    },
}
