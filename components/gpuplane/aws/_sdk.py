"""Imported first by the package: the clear missing-extra error instead of a bare ModuleNotFoundError."""

from ..stack.extras import require

require("aws")
