"""`gpuplane.text.jsontext.dumps` writes exactly what `json.dumps(value, indent=2)` writes."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.text.jsontext import dumps

from .conftest import examples

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=examples(300))
@given(VALUES)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert dumps(value) == json.dumps(value, indent=2)


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key", None: "none key", 2.5: [True, False]},  # keys json.dumps converts
        {"nested": {"a": [], "b": {}, "c": [{}], "d": "grüße \u2028 \x00"}},
        [math.nan, math.inf, -math.inf, -0.0, 1e300, 2**64],
    ],
)
def test_edge_cases(value: Any) -> None:
    assert dumps(value) == json.dumps(value, indent=2)


def test_refusals_are_json_dumps_own() -> None:
    loop: list[Any] = []
    loop.append(loop)
    for bad in (object(), {"k": {1, 2}}, loop):
        with pytest.raises((TypeError, ValueError)) as ours:
            dumps(bad)
        with pytest.raises((TypeError, ValueError)) as theirs:
            json.dumps(bad, indent=2)
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
