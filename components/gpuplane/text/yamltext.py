"""YAML text for stack outputs and chart values: PyYAML's `safe_dump`, with libyaml's emitter where it is
byte-identical.

PyYAML's pure-Python emitter is a large share of an offline plan (the rules file and scrape job of every
cluster). `yaml.CSafeDumper` keeps PyYAML's Python representer and resolver and swaps in libyaml's emitter
(PyYAML `yaml/cyaml.py`: `CSafeDumper(CEmitter, SafeRepresenter, Resolver)`), which writes the same text for
most documents but not all: it folds long double-quoted scalars at other points and writes an empty mapping
key as `''` where the Python emitter writes `? ''` (PyYAML `yaml/emitter.py` `check_simple_key`). So
libyaml is used only for a mapping or list whose every string is non-empty printable ASCII (no escapes,
hence no double-quoted scalars; a bare scalar document gets its `...` end marker only from the Python
emitter); anything else, or a PyYAML built without libyaml, takes the Python emitter.
`tests/test_yamltext.py` checks both paths give the same text.
"""

from __future__ import annotations

from typing import Any

import yaml

_CDumper: type[yaml.SafeDumper] | None = getattr(yaml, "CSafeDumper", None)
_CLoader: type[yaml.SafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def _plain(value: Any) -> bool:
    """True when every string in `value` (keys included) is non-empty printable ASCII."""
    if isinstance(value, str):
        return value != "" and value.isascii() and value.isprintable()
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float))


def dump(data: Any, **options: Any) -> str:
    """`yaml.safe_dump(data, **options)` as text, the same bytes whichever emitter writes it."""
    if _CDumper is not None and isinstance(data, (dict, list)) and _plain(data):
        return str(yaml.dump_all([data], None, Dumper=_CDumper, **options))
    return str(yaml.safe_dump(data, **options))


def load(text: str) -> Any:
    """`yaml.safe_load(text)`, with libyaml's parser when PyYAML has it (same Python constructor and resolver)."""
    return yaml.load(text, Loader=_CLoader or yaml.SafeLoader)  # noqa: S506 - a safe loader either way
