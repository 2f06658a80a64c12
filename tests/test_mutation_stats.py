"""tests/mutation_stats.py: in mutmut's stats run a reused cached value credits its test with the functions behind
it; outside that run nothing is recorded (mutmut itself is the benchmark's tool, not a test dependency: its set of
hits is stood in for here)."""

from __future__ import annotations

from typing import Any

import pytest

from . import mutation_stats


@pytest.fixture
def stats_run(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """mutmut's set of the functions the current test called, as its stats run has it."""
    hits: set[str] = set()
    monkeypatch.setattr(mutation_stats, "_hits", lambda: hits)
    return hits


def _compute(hits: set[str]) -> object:
    hits.add("gpuplane.stack.fleet.x_region_configs")
    return object()


def test_a_reused_value_credits_each_test_with_what_computing_it_called(stats_run: set[str]) -> None:
    memo: dict[Any, Any] = {}
    stats_run.add("called before, by the first test")
    first = mutation_stats.replayed(memo, "key", lambda: _compute(stats_run))
    assert stats_run == {"called before, by the first test", "gpuplane.stack.fleet.x_region_configs"}
    stats_run.clear()  # mutmut's teardown: the next test starts with none
    second = mutation_stats.replayed(memo, "key", lambda: pytest.fail("recomputed"))
    assert second is first
    assert stats_run == {"gpuplane.stack.fleet.x_region_configs"}
    stats_run.clear()
    mutation_stats.replayed(memo, "other", lambda: "nothing mutated called")
    assert stats_run == set()


def test_a_wider_scoped_fixture_credits_every_test_that_uses_it(stats_run: set[str]) -> None:
    class Def:
        scope = "module"

    fixture = Def()

    class Info:
        name2fixturedefs = {"plans": (fixture,)}

    class Item:
        fixturenames = ["plans"]
        _fixtureinfo = Info()

    with mutation_stats.fixture_setup(fixture):
        stats_run.add("gpuplane.kueue.render.x_cluster_queue")
    stats_run.clear()
    mutation_stats.credit_fixtures(Item())
    assert stats_run == {"gpuplane.kueue.render.x_cluster_queue"}


def test_only_the_stats_run_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(mutation_stats.MUTANT, raising=False)
    assert mutation_stats._hits() is None
    monkeypatch.setenv(mutation_stats.MUTANT, "gpuplane.stack.fleet.x_region_configs__mutmut_27")
    assert mutation_stats._hits() is None
