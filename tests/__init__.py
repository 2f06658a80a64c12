"""gpuplane's tests (pytest imports this package before its conftest and test modules).

Bytecode: the suite writes `__pycache__/` (gitignored) even where PYTHONDONTWRITEBYTECODE is set, as on this
project's machines. Without it every pytest-xdist worker compiles `gpuplane` and rewrites and compiles every
test module again (collection takes 5 s instead of 2.4 s), and so does each `gpuplane` CLI subprocess the
tests start.
"""

import sys

sys.dont_write_bytecode = False
