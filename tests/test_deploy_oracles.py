"""Exact examples for the deploy simulator (plan/deploy), written from the upstream behaviour each rule models."""

from __future__ import annotations
