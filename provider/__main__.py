"""Plugin entry point: host gpuplane's components for TypeScript, Go, YAML, ... programs."""

from pulumi.provider.experimental import component_provider_host

from gpuplane.provider import COMPONENTS

if __name__ == "__main__":
    component_provider_host(COMPONENTS, name="gpuplane", version="0.1.0")
