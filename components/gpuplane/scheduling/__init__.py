"""Where GPU pods and nodes go: pool labels and taints, placement fragments, multi-node jobs, GKE
ComputeClasses, smoke tests."""
