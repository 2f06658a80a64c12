"""Hypothesis over the whole config space of every shipped stack (every mode, fleets included).

Each example takes a shipped stack and breaks zero to four of its sections in ways that are wrong
whatever the rest says (wrong types, unknown keys, values out of range, bad patterns, duplicate pool
names, a section that is not a mapping). The property: the program either plans, or raises exactly one
ConfigError naming every broken key (or the key that holds it) and nothing unrelated; never any other
exception, and nothing registered but the stack. Derandomized: the same 500 examples on every run, in
shards of one or two stacks (a heavy fleet with a light stack) that pytest-xdist spreads over the cores.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.catalog import GPUS, PLATFORMS
from gpuplane.config.model import StackConfig
from gpuplane.plan.stackfile import StackFile, load

from .badinput import run_program, set_path, steps
from .conftest import ROOT, STACKS, examples, session_cache
from .summary import record

EXAMPLES = 500
SHARDS = [sorted({STACKS[i], STACKS[-1 - i]}) for i in range((len(STACKS) + 1) // 2)]
"""Stacks drawn from by each shard: the first with the last, and so on (the two fleets land apart)."""

_IDENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyzXYZ", min_size=3, max_size=12)
_NOT_BOOL = st.sampled_from(["maybe", "yes please", [True], {"on": 1}, 3])
_NOT_INT = st.sampled_from(["eight", "1e3", [1], {"n": 1}, "", 2.5])
_NOT_DURATION = st.sampled_from(["15 seconds", "1d", "fast", "-5s", "", "10"])
_NOT_DNS = st.sampled_from(["ML_Cluster", "-x", "a" * 64, "has space", "UPPER"])


def _unknown_key(model_keys: set[str]) -> st.SearchStrategy[str]:
    return _IDENT.filter(lambda k: k not in model_keys)


def section_breakers(raw: dict[str, Any]) -> dict[str, st.SearchStrategy[list[tuple[str, Any]]]]:
    """Section -> strategy for a list of (key path, bad value); each path is bad whatever else holds."""
    pools = raw["gpuPools"]
    n = len(pools)
    pool_field = st.sampled_from(
        [
            ("gpusPerNode", _NOT_INT | st.integers(-8, 0) | st.integers(17, 99)),
            ("maxNodes", _NOT_INT | st.integers(-5, 0)),
            ("minNodes", _NOT_INT | st.integers(-9, -1)),
            ("spot", _NOT_BOOL),
            ("gpu", st.sampled_from(["a1000", "h10", "tpu-v5", "", "rtx4090"])),
            ("name", _NOT_DNS),
            ("diskSizeGb", _NOT_INT | st.integers(-1, 19)),
            ("labels", st.sampled_from(["team=ml", ["a"], {"bad key!": "x"}])),
            ("taints", st.sampled_from(["nvidia.com/gpu", [{"value": "x"}], [{"key": "k", "effect": "Never"}]])),
        ]
    )

    @st.composite
    def pool_breaks(draw: Any) -> list[tuple[str, Any]]:
        i = draw(st.integers(0, n - 1))
        if draw(st.integers(0, 3)) == 0:
            return [("gpuPools", ("duplicate", i))]
        field, values = draw(pool_field)
        value = draw(values)
        if field == "taints" and isinstance(value, list) and value and "value" in value[0]:
            return [(f"gpuPools[{i}].taints[0].key", ("taints", value))]
        if field == "taints" and isinstance(value, list):
            return [(f"gpuPools[{i}].taints[0].effect", ("taints", value))]
        return [(f"gpuPools[{i}].{field}", value)]

    unknown_top = _unknown_key(set(StackConfig.model_fields))
    out: dict[str, st.SearchStrategy[list[tuple[str, Any]]]] = {
        "platform": st.sampled_from(["gke", "eks", "gke-standrd", "aks-managed", ""]).map(lambda v: [("platform", v)]),
        "cluster": st.one_of(
            _NOT_DNS.map(lambda v: [("cluster.name", v)]),
            _IDENT.map(lambda v: [("cluster.releaseChannel", v.upper())]),
            _NOT_BOOL.map(lambda v: [("cluster.protect", v)]),
            st.integers(-3, 0).map(lambda v: [("cluster.systemPool.minNodes", v)]),
            st.just([("cluster", "not-a-mapping")]),
        ),
        "gpuPools": pool_breaks(),
        "monitoring": st.one_of(
            _NOT_DURATION.map(lambda v: [("monitoring.scrapeInterval", v)]),
            st.floats(100.5, 1e6).map(lambda v: [("monitoring.idlePercent", v)]),
            _IDENT.map(lambda v: [("monitoring.integration", v)]),
            _NOT_DNS.map(lambda v: [("monitoring.namespace", v)]),
        ),
        "stray": unknown_top.map(lambda k: [(k, {"x": 1})]),
    }
    if "gcp" in raw:
        out["gcp"] = st.one_of(
            st.sampled_from(["Acme", "a", "1-project"]).map(lambda v: [("gcp.project", v)]),
            st.sampled_from(["central", "us_central1", "US-CENTRAL1"]).map(lambda v: [("gcp.region", v)]),
        )
    if "aws" in raw:
        out["aws"] = st.one_of(
            st.sampled_from(["virginia", "us-east", "US-EAST-1"]).map(lambda v: [("aws.region", v)]),
            st.integers(-1, 1).map(lambda v: [("aws.availabilityZones", v)]),
            st.sampled_from(["10.0.0.0/33", "not-a-cidr"]).map(lambda v: [("aws.vpcCidr", v)]),
        )
    if "karpenter" in raw:
        out["karpenter"] = _NOT_DURATION.map(lambda v: [("karpenter.consolidateAfter", v)])
    if "autoProvisioning" in raw:
        out["autoProvisioning"] = st.integers(-10, 0).map(lambda v: [("autoProvisioning.cpuMax", v)])
    if "fleet" in raw:
        out["fleet"] = st.one_of(
            _NOT_INT.map(lambda v: [(f"fleet.totals.{raw['gpuPools'][0]['name']}", v)]),
            st.just([("fleet.regions", [])]),
        )
    # Impossible combinations across keys, each blamed on one key.
    platform = PLATFORMS.get(raw["platform"])
    if platform is not None:
        other_cloud_gpu = next(g for g in GPUS if getattr(GPUS[g], platform.cloud) is None)
        floor_key = "maxNodes" if platform.fixed_pools else "minNodes"  # classes have no floor at all
        out["combination"] = st.one_of(
            st.integers(0, n - 1).map(lambda i: [(f"gpuPools[{i}].gpu", other_cloud_gpu)]),
            st.integers(0, n - 1).map(
                lambda i: [(f"gpuPools[{i}].{floor_key}", ("floor", i, pools[i].get("maxNodes", 1) + 1))]
            ),
            st.just([("monitoring.scrapeTimeout", ("timeout", "20s", "15s"))]),
            st.just([("karpenter" if "karpenter" not in platform.sections else "autoProvisioning", {})]),
        )
    return out


def valid_tweaks(raw: dict[str, Any]) -> dict[str, st.SearchStrategy[list[tuple[str, Any]]]]:
    """Section -> strategy for changes that keep the stack valid (so valid examples are not only the
    shipped stacks)."""
    platform = PLATFORMS[raw["platform"]]
    n = len(raw["gpuPools"])
    # `spot` may only be toggled where `capacity` (which decides spot itself) is not given.
    plain = [i for i, p in enumerate(raw["gpuPools"]) if "capacity" not in p] or [None]
    out: dict[str, st.SearchStrategy[list[tuple[str, Any]]]] = {
        "gpuPools": st.one_of(
            st.tuples(st.sampled_from(plain), st.booleans()).map(
                lambda t: [] if t[0] is None else [(f"gpuPools[{t[0]}].spot", t[1])]
            ),
            st.integers(0, n - 1).map(lambda i: [(f"gpuPools[{i}].labels", {"team": "ml"})]),
            st.integers(0, n - 1).map(
                lambda i: [(f"gpuPools[{i}].taints", [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}])]
            ),
        ),
        "monitoring": st.one_of(
            st.sampled_from(platform.integrations).map(lambda v: [("monitoring.integration", v)]),
            st.sampled_from(["30s", "1m"]).map(lambda v: [("monitoring.scrapeInterval", v)]),
            st.floats(1, 50).map(lambda v: [("monitoring.idlePercent", round(v, 1))]),
        ),
        "cluster": st.one_of(
            st.booleans().map(lambda v: [("cluster.protect", v)]),
            st.booleans().map(lambda v: [("cluster.retainOnDelete", v)]),
        ),
        # a stack that runs gpuplane:validation turns it off and on; the others the older smoke test
        "smokeTest": st.booleans().map(
            lambda v: [("validation.enabled", v)] if "validation" in raw else [("smokeTest", {"enabled": v})]
        ),
    }
    if platform.cloud == "gcp":
        out["cluster"] = st.sampled_from(["RAPID", "STABLE"]).map(lambda v: [("cluster.releaseChannel", v)])
    return out


@session_cache
def shipped(name: str) -> StackFile:
    """A shipped stack, read once (reading the YAML was most of the cost of drawing an example); callers
    copy its config before changing it."""
    return load(name, ROOT)


@st.composite
def broken_stack(draw: Any, stacks: list[str]) -> tuple[StackFile, list[str]]:
    """One of `stacks` with some sections broken, and the key paths that were broken."""
    base = shipped(draw(st.sampled_from(stacks)))
    raw = {k.removeprefix("gpuplane:"): v for k, v in base.config.items()}
    breakers = section_breakers(raw)
    count = draw(st.sampled_from([0, 1, 1, 2, 0, 3, 4]))  # about one example in seven plans
    sections = draw(st.permutations(sorted(breakers)))[:count]
    if "combination" in sections:  # a combination reads the platform, the pools and monitoring: leave them be
        sections = [x for x in sections if x not in ("platform", "gpuPools", "monitoring")]
    config = copy.deepcopy(base.config)
    tweaks = valid_tweaks(raw)
    reads = {"gpuPools", "monitoring"} if "combination" in sections else set()
    free = sorted(set(tweaks) - reads - set(sections))
    for section in draw(st.permutations(free))[: draw(st.integers(0, 2))]:
        for path, value in draw(tweaks[section]):
            set_path(config, path, value)
    broken: list[str] = []
    for section in sections:
        for path, value in draw(breakers[section]):
            if isinstance(value, tuple) and value[0] == "duplicate":
                pools = config["gpuplane:gpuPools"]
                pools.append(copy.deepcopy(pools[value[1]]))  # a second pool of the same name
            elif isinstance(value, tuple) and value[0] == "floor":  # minNodes above maxNodes
                _, i, lo = value
                set_path(config, f"gpuPools[{i}].minNodes", lo)
                set_path(config, f"gpuPools[{i}].maxNodes", lo - 1)
            elif isinstance(value, tuple) and value[0] == "timeout":  # timeout longer than the interval
                set_path(config, "monitoring.scrapeTimeout", value[1])
                set_path(config, "monitoring.scrapeInterval", value[2])
            elif isinstance(value, tuple) and value[0] == "taints":
                first = steps(path)
                set_path(config, f"gpuPools[{first[1]}].taints", value[1])
            else:
                set_path(config, path, value)
            broken.append(path)
    return StackFile(project=base.project, stack=f"{base.stack}-fuzz", config=config), broken


def _covers(problem: str, key: str) -> bool:
    """A problem at `problem` names `key` when it is the key or one that holds it."""
    return key == problem or key.startswith(problem + ".") or key.startswith(problem + "[")


def check(case: tuple[StackFile, list[str]], tally: Counter[str]) -> None:
    stack, broken = case
    outcome = run_program(stack)  # any exception but ConfigError fails the test
    if outcome.problems is None:
        assert not broken, f"planned although {broken} were broken"
        assert any(t.endswith(":Cluster") for t in outcome.registered), outcome.registered
        tally["planned"] += 1
        return
    assert outcome.registered == ["pulumi:pulumi:Stack"], "resources were registered before the error"
    named = [f"{p}" for p, _ in outcome.problems]
    keys = [f"gpuplane:{k}" for k in broken]
    assert broken, f"a valid stack was refused: {outcome.problems}"
    for key in keys:
        assert any(_covers(p, key) for p in named), (key, outcome.problems)
    for p in named:  # nothing unrelated is blamed
        assert any(_covers(p, k) or _covers(k, p) for k in keys), (p, keys, outcome.problems)
    assert len(set(named)) == len(named), outcome.problems
    tally["refused"] += 1
    tally[f"refused naming {len(broken)} broken section(s)"] += 1


@pytest.mark.parametrize("stacks", SHARDS, ids=["+".join(s) for s in SHARDS])
def test_plan_succeeds_or_one_error_names_each_broken_key(stacks: list[str]) -> None:
    count = examples(math.ceil(EXAMPLES * len(stacks) / len(STACKS)))  # the shards add up to at least EXAMPLES
    tally: Counter[str] = Counter()

    @settings(
        max_examples=count,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(broken_stack(stacks))
    def prop(case: tuple[StackFile, list[str]]) -> None:
        check(case, tally)

    prop()
    total = tally["planned"] + tally["refused"]
    assert total >= count and tally["planned"] > 0 and tally["refused"] > 0, tally
    detail = ", ".join(f"{v} {k}" for k, v in sorted(tally.items()) if k not in ("planned", "refused"))
    record(
        "bad-input property (Hypothesis)",
        f"{total} examples over {', '.join(stacks)}: {tally['planned']} planned, {tally['refused']} refused ({detail})",
    )
