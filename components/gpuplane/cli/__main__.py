"""`python -m gpuplane.cli`."""

from . import main

raise SystemExit(main())
