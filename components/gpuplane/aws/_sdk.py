"""Imported first by the package: the clear missing-extra error instead of a bare ModuleNotFoundError."""

from ..resources.extras import require

require("aws")
