"""Deterministic building blocks for mock outputs (hashes of names, never randomness)."""

from __future__ import annotations

import hashlib
from typing import Any

State = dict[str, Any]


def digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def fake_ip(name: str) -> str:
    """A stable public-looking IPv4 (from TEST-NET-3, 203.0.113.0/24) for an endpoint."""
    return f"203.0.113.{int(digest(name)[:4], 16) % 254 + 1}"
