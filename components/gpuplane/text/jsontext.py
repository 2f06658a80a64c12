"""JSON text for the plan's output: `json.dumps(value, indent=2)`, byte for byte, written faster.

With `indent` set, the standard library encodes in pure Python through nested generators (CPython 3.11
`json/encoder.py` `_make_iterencode`; its C encoder serves only `indent=None`), which was a few percent of
an offline plan. `dumps` writes the same text with one recursive function into a list of strings, reusing
the C string escaper (`encode_basestring_ascii`) and the encoder's number spellings. Anything else the
standard library accepts (non-string keys, which it converts) or refuses (unknown types, cycles) is
handed to `json.dumps` itself, so its text and errors are unchanged. `tests/test_jsontext.py` compares the
two with Hypothesis.
"""

from __future__ import annotations

import json
from json.encoder import INFINITY, encode_basestring_ascii
from typing import Any


class _Fallback(Exception):
    """A value this writer leaves to `json.dumps`."""


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == INFINITY:
        return "Infinity"
    if value == -INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def dumps(value: Any) -> str:
    """`json.dumps(value, indent=2)`."""
    out: list[str] = []
    append = out.append

    def write(o: Any, level: int) -> None:
        if isinstance(o, str):
            append(encode_basestring_ascii(o))
        elif o is None:
            append("null")
        elif o is True:
            append("true")
        elif o is False:
            append("false")
        elif isinstance(o, int):
            append(int.__repr__(o))
        elif isinstance(o, float):
            append(_float(o))
        elif isinstance(o, (dict, list, tuple)):
            mapping = isinstance(o, dict)
            if not o:
                append("{}" if mapping else "[]")
                return
            inner = "\n" + "  " * (level + 1)
            append("{" if mapping else "[")
            separator = inner
            items: Any = o.items() if isinstance(o, dict) else o
            for item in items:
                append(separator)
                separator = "," + inner
                if mapping:
                    key, item = item
                    if not isinstance(key, str):
                        raise _Fallback
                    append(encode_basestring_ascii(key))
                    append(": ")
                write(item, level + 1)
            append("\n" + "  " * level + ("}" if mapping else "]"))
        else:
            raise _Fallback

    try:
        write(value, 0)
    except (_Fallback, RecursionError):
        return json.dumps(value, indent=2)
    return "".join(out)
