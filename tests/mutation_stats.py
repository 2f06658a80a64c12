"""Keep mutmut's map from functions to tests true where the suite caches work (benchmarks/mutation.py).

mutmut first runs the selected tests unmutated ("stats": MUTANT_UNDER_TEST is `stats`) and records, per test,
which mutated functions it called; later it runs only those tests against each mutant of a function. A cached
plan, a `session_cache` result or a module- or session-scoped fixture is computed in the first test that needs
it: without this module, only that test is recorded as calling the functions behind it, and a mutant there is
judged by that one test (the fleet group's region split "survived" every test that reads a fleet's plan).

So, in the stats run only: the functions called while a cached value or a wider-scoped fixture is computed are
kept with it (`replayed`, `fixture_setup`) and credited to every test that uses it (`credit`). Outside that run
every function here is a pass-through.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

MUTANT = "MUTANT_UNDER_TEST"

_HITS: dict[Hashable, frozenset[str]] = {}
"""Per cache key or fixture: the mutated functions its computation called (stats run only)."""


def _hits() -> set[str] | None:
    """mutmut's set of functions called in the current test, in its stats run; else None."""
    if os.environ.get(MUTANT) != "stats":
        return None
    from mutmut.state import state

    hits: set[str] = state()._stats
    return hits


@contextmanager
def isolated(key: Hashable) -> Iterator[None]:
    """Record the functions called inside the block under `key`, and keep crediting the current test."""
    hits = _hits()
    if hits is None:
        yield
        return
    before = set(hits)
    hits.clear()
    try:
        yield
    finally:
        _HITS[key] = frozenset(hits)
        hits |= before


def hits_of(key: Hashable) -> frozenset[str]:
    """The mutated functions the computation under `key` called (stats run only; empty elsewhere)."""
    return _HITS.get(key, frozenset())


def credit(key: Hashable) -> None:
    """Credit the current test with the functions behind `key` (a cached value or fixture it reuses)."""
    hits = _hits()
    if hits is not None:
        hits |= _HITS.get(key, frozenset())


def replayed(memo: dict[Any, T], key: Hashable, compute: Callable[[], T]) -> T:
    """`memo[key]`, computed by `compute()` the first time; every test that gets it is credited with the
    functions computing it called."""
    if key not in memo:
        with isolated(("memo", id(memo), key)):
            memo[key] = compute()
    else:
        credit(("memo", id(memo), key))
    return memo[key]


@contextmanager
def fixture_setup(fixturedef: Any) -> Iterator[None]:
    """Around a module- or session-scoped fixture's setup: record what it called (see `credit_fixtures`)."""
    if getattr(fixturedef, "scope", "function") == "function":
        yield
        return
    with isolated(("fixture", id(fixturedef))):
        yield


def credit_fixtures(item: Any) -> None:
    """Credit a test with the functions behind each wider-scoped fixture it uses (set up once, for all)."""
    info = getattr(item, "_fixtureinfo", None)
    if _hits() is None or info is None:
        return
    for name in item.fixturenames:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            credit(("fixture", id(fixturedef)))
