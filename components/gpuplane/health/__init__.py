"""GPU node health: detection and repair per platform (`repair`, `summary`), post-deploy checks per pool
(`validation`) and reading their output (`results`), and the CNCF AI Conformance report (`conformance`)."""
