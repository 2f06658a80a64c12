"""`gpuplane.text.yamltext.dump` writes exactly what `yaml.safe_dump` writes, whichever emitter it picks."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.monitoring.labels import label_model
from gpuplane.monitoring.rules import ExporterPods, RuleSettings, rule_groups, rules_file_yaml
from gpuplane.monitoring.scrape import ScrapeTarget, fleet_scrape_yaml, scrape_job, stack_scrape_yaml
from gpuplane.text import yamltext

from .conftest import examples

OPTIONS: list[dict[str, Any]] = [
    {"sort_keys": False, "width": 120},
    {"sort_keys": False, "default_flow_style": False},
    {"sort_keys": False},
]
# YAML's indicators, quotes, escapes, line breaks, unicode and words the resolver reads as other types.
TEXT = st.one_of(
    st.text(alphabet=st.sampled_from(list("ab :#-'\"\\{}[],&*!|>%@`?=~.09 \t\n\x85\u2028é✓\U0001f600")), max_size=50),
    st.text(alphabet=st.sampled_from(list("ab :#-'\"\\{}[],&*!|>%@`?=~.09 ()$/")), min_size=1, max_size=300),
    st.sampled_from(["null", "yes", "No", "on", "1.0", "0x1f", "~", "-", "---", "...", ".inf", "12:30", "", " "]),
)
SCALAR = st.one_of(TEXT, st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False))
DOC = st.recursive(
    SCALAR, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(TEXT, kids, max_size=4), max_leaves=12
)


@settings(max_examples=examples(300))
@given(DOC)
def test_dump_matches_safe_dump(doc: Any) -> None:
    for options in OPTIONS:
        assert yamltext.dump(doc, **options) == yaml.safe_dump(doc, **options)


@pytest.mark.parametrize(
    "doc",
    [
        {"": "x"},  # libyaml writes `'': x`, PyYAML `? ''\n: x`
        {"expr": "\u2713 " * 80},  # long double-quoted scalars fold at other points in libyaml
        {"expr": "a\tb " * 60},
    ],
)
def test_documents_libyaml_writes_differently_take_the_python_emitter(doc: dict[str, str]) -> None:
    assert not yamltext._plain(doc)
    assert yamltext.dump(doc, sort_keys=False, width=120) == yaml.safe_dump(doc, sort_keys=False, width=120)


def test_stack_outputs_take_the_fast_path_and_round_trip() -> None:
    target = ScrapeTarget(
        namespace="gpu-operator",
        service_labels={"app": "nvidia-dcgm-exporter"},
        port_name="gpu-metrics",
        static_labels={"cluster": "c1", "region": "us-central1"},
    )
    job = scrape_job(target, "30s", "10s")
    groups = rule_groups(
        RuleSettings(labels=label_model("gke-standard", "install"), exporter_pods=ExporterPods("a", "b"))
    )
    assert yamltext._plain([job]) and yamltext._plain({"groups": groups})
    assert rules_file_yaml(groups) == yaml.safe_dump({"groups": groups}, sort_keys=False, width=120)
    text = stack_scrape_yaml(target, "30s", "10s")
    assert text == yaml.safe_dump([job], sort_keys=False, default_flow_style=False)
    assert yamltext.load(text) == yaml.safe_load(text) == [job]
    assert yaml.safe_load(fleet_scrape_yaml({"a": text}))[0]["job_name"] == "gpu-metrics-a"
