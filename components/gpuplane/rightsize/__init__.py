"""`gpuplane rightsize`: what each GPU workload and pool should run on, from what a running Prometheus saw.

`query` builds the PromQL from the stack's label model, `client` asks the server (HTTP API, standard library),
`observe` turns the answers into workloads and pool peaks, `rules` says which shapes fit (as data with
sources), `recommend` prices the choices from the capacity summary's price table, `report` runs it all and
`render` prints it. docs/rightsizing.md describes the queries, the rules and the confidence verdict.
"""

from __future__ import annotations

from .client import Prometheus, check_url
from .render import to_json, to_text
from .report import Report, Settings, run, settings

__all__ = ["Prometheus", "Report", "Settings", "check_url", "run", "settings", "to_json", "to_text"]
