"""Your own EKS cluster (pulumi-eks), declared here, with gpuplane's managed GPU node groups and the NVIDIA
gpu-operator tolerating exactly those groups; subnets come from your VPC stack's config."""

import json

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks

from gpuplane import AmiType, EksGpuNodeGroups, GpuMonitoring, GpuOperator, GpuType, MonitoredExporter

conf = pulumi.Config()
subnet_ids = conf.require_object("privateSubnetIds")

cluster = eks.Cluster(
    "inference",
    name="inference",
    vpc_id=conf.require("vpcId"),
    private_subnet_ids=subnet_ids,
    skip_default_node_group=True,
    authentication_mode=eks.AuthenticationMode.API,
    create_oidc_provider=True,
)
node_role = aws.iam.Role(
    "gpu-nodes",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
)
for policy in ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly"):
    aws.iam.RolePolicyAttachment(
        f"gpu-nodes-{policy}", role=node_role.name, policy_arn=f"arn:aws:iam::aws:policy/{policy}"
    )
# A small system node group for add-ons: the gpu-operator runs its operator on `gpuplane.io/role: system`.
eks.ManagedNodeGroup(
    "system",
    cluster=cluster,
    node_role_arn=node_role.arn,
    instance_types=["m7i.large"],
    labels={"gpuplane.io/role": "system"},
    scaling_config={"min_size": 2, "max_size": 3, "desired_size": 2},
)

# As pulumi-eks's own ManagedNodeGroup(cluster=...): the components read the cluster's name, version and
# private subnets from the object, and put their Kubernetes resources on a provider for it (never the
# ambient kubeconfig).
groups = EksGpuNodeGroups(
    "gpu",
    {
        "cluster": cluster,
        "node_role_arn": node_role.arn,
        "gpu_pools": [{"name": "a10g", "gpu": GpuType.A10G, "min_nodes": 1, "max_nodes": 4}],
    },
)
operator = GpuOperator(
    "gpu-operator",
    {"cluster": cluster, "node_image": AmiType.AL2023_X86_64_NVIDIA, "gpu_nodes": groups.gpu_nodes},
    opts=pulumi.ResourceOptions(depends_on=[groups]),
)
# The default integration (scrape-config) creates nothing in the cluster: the scrape job is an output,
# labelled with the cluster's name and region.
monitoring = GpuMonitoring(
    "monitoring",
    {"cluster": cluster, "exporter": MonitoredExporter.GPU_OPERATOR, "exporter_namespace": operator.namespace},
    opts=pulumi.ResourceOptions(depends_on=[operator]),
)

pulumi.export("gpuNodeGroups", groups.node_group_names)
pulumi.export("scrapeConfig", monitoring.scrape_config)
