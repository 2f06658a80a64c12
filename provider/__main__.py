"""Plugin entry point: host gpuplane's components and its `placement` function for TypeScript, Go, YAML, ...
programs (Pulumi's Python component provider host, serving gpuplane's finished schema)."""

import sys

from pulumi.provider import main

from gpuplane.provider import GpuplaneProvider

if __name__ == "__main__":
    main(GpuplaneProvider(), sys.argv[1:])
