"""The gpuplane Pulumi program: stack config -> GPU platform -> stack outputs.

`pulumi up` runs this file; `gpuplane plan STACK` runs the same `gpuplane.stack.program.main`
under mocks, so the offline plan and a real deployment share one code path.
"""

from gpuplane.stack.program import main

main()
