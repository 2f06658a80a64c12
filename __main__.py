"""The gpuplane Pulumi program: stack config -> GPU platform -> stack outputs.

`pulumi up` runs this file; `gpuplane plan STACK` runs the same `gpuplane.program.main`
under mocks, so the offline plan and a real deployment share one code path.
"""

from gpuplane.program import main

main()
