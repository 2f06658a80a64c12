"""The typed arguments of gpuplane's components and platforms, and how they are checked: in the caller's
spelling, before anything registers."""
