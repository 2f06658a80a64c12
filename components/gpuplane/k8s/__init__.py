"""Kubernetes objects, kubeconfigs and providers, and the cluster objects users pass in."""
