"""The plan runner's per-run memo of the SDK's type introspection is scoped to one run."""

from __future__ import annotations

import pytest
from pulumi import _types as ptypes

from gpuplane.plan.runner import memoised_type_metadata


def test_memo_restores_the_sdk_functions_even_after_an_error() -> None:
    unwrap, resource_types = ptypes.unwrap_type, ptypes.resource_types
    with pytest.raises(RuntimeError), memoised_type_metadata():
        assert ptypes.unwrap_type is not unwrap
        raise RuntimeError("boom")
    assert (ptypes.unwrap_type, ptypes.resource_types) == (unwrap, resource_types)


def test_memo_answers_as_the_sdk_does() -> None:
    import pulumi
    import pulumi_gcp

    hints = [pulumi.Input[str], pulumi.Output[int] | None, dict[str, pulumi.Input[str]] | None, list]  # type: ignore[misc]
    expected = [ptypes.unwrap_type(h) for h in hints]
    types = ptypes.resource_types(pulumi_gcp.container.Cluster)
    with memoised_type_metadata():
        assert [ptypes.unwrap_type(h) for h in hints * 2] == expected * 2
        first = ptypes.resource_types(pulumi_gcp.container.Cluster)
        first.clear()  # a caller's own copy
        assert ptypes.resource_types(pulumi_gcp.container.Cluster) == types
