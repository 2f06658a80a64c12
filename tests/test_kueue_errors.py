"""Kueue queues: one test per error message of `gpuplane:queues`, of `KueueQueues`' arguments and of
`placement --queue`."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.config import parse_flat

from .conftest import load_stack_config, stack_with
from .test_kueue import aws_queued, over_quota

CONFIG_ERRORS = [
    (
        "gcp-standard",
        {"teams": [{"name": "a", "quota": {"trainng": 1}}]},
        "gpuplane:queues.teams[0].quota",
        "no GPU pool named 'trainng' (did you mean 'training'?)",
    ),
    (
        "gcp-standard",
        {"teams": [{"name": "a", "quota": {"training": -1}}]},
        "gpuplane:queues.teams[0].quota",
        "quotas must be >= 0 (negative: training)",
    ),
    (
        "gcp-standard",
        {"teams": [{"name": "a", "quota": {"training": 1}}, {"name": "a", "quota": {"training": 1}}]},
        "gpuplane:queues.teams",
        "team names must be unique (repeated: a)",
    ),
    (
        "gcp-standard",
        {
            "teams": [
                {"name": "a", "namespace": "x", "quota": {"training": 1}},
                {"name": "b", "namespace": "x", "quota": {"training": 1}},
            ]
        },
        "gpuplane:queues.teams",
        "namespaces must be unique (repeated: x)",
    ),
    (
        "gcp-fleet",
        {"teams": [{"name": "a", "quota": {"training": 1}}]},
        "gpuplane:queues",
        "not supported with a fleet yet",
    ),
]


def test_config_refuses_a_pool_with_more_taints_than_a_flavor_holds() -> None:
    from gpuplane.config import ConfigError

    pools = load_stack_config("aws-managed")["gpuplane:gpuPools"]
    pools = [{**pools[0], "taints": [{"key": f"t{i}"} for i in range(8)]}, *pools[1:]]
    with pytest.raises(ConfigError) as info:
        parse_flat(stack_with("aws-managed", gpuPools=pools, queues=over_quota() | {"overcommit": True}).flat_config())
    assert info.value.problems == [
        (
            "gpuplane:queues",
            f"pools ['{pools[0]['name']}'] have more taints than a Kueue ResourceFlavor holds (8, with gpuplane's)",
        )
    ]


@pytest.mark.parametrize(
    ("base", "queues", "key", "message"), CONFIG_ERRORS, ids=[c[2] + ":" + c[3][:20] for c in CONFIG_ERRORS]
)
def test_config_error(base: str, queues: dict[str, Any], key: str, message: str) -> None:
    from gpuplane.config import ConfigError

    with pytest.raises(ConfigError) as info:
        parse_flat(stack_with(base, queues=queues).flat_config())
    problems = dict(info.value.problems)
    assert key in problems and message in problems[key], info.value.problems


def component_args(**change: Any) -> dict[str, Any]:
    from gpuplane.kueue.stack import kueue_args

    args: dict[str, Any] = dict(kueue_args(parse_flat(aws_queued().flat_config())))
    args.update(change)
    return args


ARG_ERRORS = [
    ({"teams": []}, "teams", "at least one team"),
    ({"teams": [{"name": "a", "quota": {}}, {"name": "a", "quota": {}}]}, "teams", "team 'a' appears twice"),
    ({"teams": [{"name": "a", "quota": {"gpu": 1}}]}, "teams[0].quota", "no pool ['gpu'] in gpu_nodes"),
    ({"queued_provisioning": ["x"]}, "queued_provisioning", "no pool ['x'] in gpu_nodes"),
    ({"topology": {"name": "t", "levels": ["a"], "pools": ["x"]}}, "topology.pools", "no pool ['x'] in gpu_nodes"),
    (
        {"teams": [{"name": "a", "quota": {"training": 17}}]},
        "teams",
        "quotas sum past the pools' ceilings (training: 17 > 16)",
    ),
]


@pytest.mark.parametrize(("change", "key", "message"), ARG_ERRORS, ids=[e[2][:24] for e in ARG_ERRORS])
def test_component_arg_error(change: dict[str, Any], key: str, message: str) -> None:
    from gpuplane.args.checks import ArgsError
    from gpuplane.kueue.component import KueueQueues

    with pytest.raises(ArgsError) as info:
        KueueQueues("q", component_args(**change))  # type: ignore[arg-type]
    assert (key, message) in [(k, m[: len(message)]) for k, m in info.value.problems], info.value.problems


def test_component_refuses_a_pool_with_more_taints_than_a_flavor_holds() -> None:
    from gpuplane.args.checks import ArgsError
    from gpuplane.kueue.component import KueueQueues

    args = component_args()
    nodes = [dict(n) for n in args["gpu_nodes"]]
    nodes[0]["taints"] = [{"key": f"t{i}", "value": "", "effect": "NoSchedule"} for i in range(8)]
    with pytest.raises(ArgsError) as info:
        KueueQueues("q", {**args, "gpu_nodes": nodes})  # type: ignore[typeddict-item]
    assert ("gpu_nodes", "pool inference has more taints than a ResourceFlavor holds (8)") in info.value.problems


def test_placement_errors_for_queues() -> None:
    from gpuplane.config import ConfigError
    from gpuplane.kueue.placement import queued_placement

    cfg = parse_flat(aws_queued().flat_config())
    cases = [
        (lambda: queued_placement(cfg, "inference", 1, "research"), "team 'research' has no quota on pool 'inference'"),
        (lambda: queued_placement(cfg, "training", 1, "prod", "g", None), "give both a pod group name and its size"),
        (lambda: queued_placement(cfg, "training", 1, "prod", "g", 0), "a pod group has at least 1 pod, not 0"),
        (
            lambda: queued_placement(parse_flat(stack_with("aws-karpenter").flat_config()), "training", 1, "prod"),
            "this stack has no gpuplane:queues",
        ),
    ]
    for call, message in cases:
        with pytest.raises(ConfigError) as info:
            call()
        assert message in str(info.value.problems), info.value.problems
