"""Your own EKS cluster (pulumi-eks), declared here, with gpuplane's managed GPU node groups and the NVIDIA
gpu-operator tolerating exactly those groups; subnets come from your VPC stack's config."""

import json

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

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

groups = EksGpuNodeGroups(
    "gpu",
    {
        "cluster_name": cluster.eks_cluster.name,
        "node_role_arn": node_role.arn,
        "subnet_ids": subnet_ids,
        "kubernetes_version": cluster.eks_cluster.version,
        "cluster_label": "inference",
        "gpu_pools": [{"name": "a10g", "gpu": GpuType.A10G, "min_nodes": 1, "max_nodes": 4}],
    },
)
kubeconfig: pulumi.Output[str] = pulumi.Output.secret(cluster.kubeconfig_json)
provider = k8s.Provider("inference", kubeconfig=kubeconfig)
operator = GpuOperator(
    "gpu-operator",
    {"node_image": AmiType.AL2023_X86_64_NVIDIA, "gpu_nodes": groups.gpu_nodes},
    opts=pulumi.ResourceOptions(provider=provider, depends_on=[groups]),
)
# The default integration (scrape-config) creates nothing in the cluster: the scrape job is an output.
monitoring = GpuMonitoring(
    "monitoring",
    {
        "cluster": cluster.eks_cluster.name,
        "region": aws.get_region_output().region,
        "exporter": MonitoredExporter.GPU_OPERATOR,
    },
    opts=pulumi.ResourceOptions(provider=provider, depends_on=[operator]),
)

pulumi.export("gpuNodeGroups", groups.node_group_names)
pulumi.export("scrapeConfig", monitoring.scrape_config)
