"""Your own GKE Standard cluster, declared here, with gpuplane's GPU node pools, dcgm-exporter on exactly
those pools, and GPU metrics for the Prometheus Operator the cluster already runs."""

import pulumi
import pulumi_gcp as gcp

from gpuplane import (
    CrdSource,
    DcgmExporter,
    ExporterHost,
    GkeGpuNodePools,
    GpuMonitoring,
    GpuType,
    MonitoringIntegration,
    kubernetes_provider,
)

conf = pulumi.Config()
region = conf.require("region")

nodes_sa = gcp.serviceaccount.Account("nodes", account_id="research-nodes", display_name="GKE nodes")
cluster = gcp.container.Cluster(
    "research",
    name="research",
    project=gcp.config.project,
    location=region,
    remove_default_node_pool=True,
    initial_node_count=1,
    workload_identity_config={"workload_pool": f"{gcp.config.project}.svc.id.goog"},
    deletion_protection=False,
)
pools = GkeGpuNodePools(
    "gpu",
    {
        "cluster": cluster,  # the object: its ID, location and project (or pass them as Outputs)
        "node_service_account": nodes_sa.email,
        "zones": conf.get_object("zones") or [],
        "gpu_pools": [
            {"name": "l4", "gpu": GpuType.L4, "spot": True, "max_nodes": 4},
            {"name": "a100", "gpu": GpuType.A100_40GB, "max_nodes": 2},
        ],
        "cluster_label": "research",
    },
)

# The cluster's own provider (kubeconfig with gke-gcloud-auth-plugin), shared by the components below (each
# would otherwise make its own from `cluster`): nothing goes to the ambient kubeconfig.
provider = kubernetes_provider("research", cluster)
on_cluster = pulumi.ResourceOptions(provider=provider, depends_on=[pools])
exporter = DcgmExporter("dcgm", {"host": ExporterHost.GKE, "gpu_nodes": pools.gpu_nodes}, opts=on_cluster)
# The cluster runs Prometheus Operator, so its CRDs exist: gpuplane must not install a second copy
# (CrdSource.EXISTING).
monitoring = GpuMonitoring(
    "monitoring",
    {
        "cluster": cluster.name,
        "region": cluster.location,
        "monitoring": {
            "integration": MonitoringIntegration.PROMETHEUS_OPERATOR,
            "prometheus_operator_crds": CrdSource.EXISTING,
        },
    },
    opts=pulumi.ResourceOptions(provider=provider, depends_on=[exporter]),
)

pulumi.export("gpuNodePools", pools.node_pool_names)
pulumi.export("scrapeConfig", monitoring.scrape_config)
