"""The CEL evaluation behind every CRD check: Kubernetes' extra functions behave as upstream documents, a
rule that cannot be evaluated fails instead of counting as skipped, and the create-time rules the library
used to raise on (Karpenter's restricted label keys, the EC2NodeClass AMI alias) now reject bad objects."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .conftest import need_reference
from .crds import CEL_UNEVALUABLE, CelError, _find, _split, cel_results, crd_schema


def test_find_and_split_follow_the_kubernetes_cel_libraries() -> None:
    # kubernetes/apiserver pkg/cel/library/regex.go: "abc 123".find('[0-9]+') == "123", no match is "".
    assert _find("abc 123", "[0-9]+") == "123"
    assert _find("abc", "[0-9]+") == ""
    assert _find("karpenter.sh/nodepool", "^([^/]+)") == "karpenter.sh"
    # google/cel-go ext/strings.go: 'hello hello hello'.split(' ', 2) == ['hello', 'hello hello'].
    assert _split("hello hello hello", " ") == ["hello", "hello", "hello"]
    assert _split("hello hello hello", " ", 2) == ["hello", "hello hello"]
    assert _split("hello", " ", 0) == []
    assert _split("al2023@latest", "@") == ["al2023", "latest"]


def schema(rule: str) -> dict[str, Any]:
    return {"type": "object", "x-kubernetes-validations": [{"rule": rule, "message": "nope"}]}


def test_a_rule_that_raises_fails_the_check() -> None:
    with pytest.raises(CelError, match="noSuchFunction"):
        cel_results({"a": 1}, schema("self.a.noSuchFunction()"))
    assert CEL_UNEVALUABLE == {}  # every rule the CRDs carry is evaluated (add one only with its reason)


def test_transition_rules_see_the_unchanged_object() -> None:
    """A second `up` of the same object is an update with oldSelf == self: immutability rules hold."""
    assert cel_results({"a": 1}, schema("self == oldSelf")) == ([], 1)
    assert cel_results({"a": 1}, schema("self.a == oldSelf.a + 1")) == (["<root>: nope"], 1)


def karpenter_objects() -> tuple[dict[str, Any], dict[str, Any]]:
    pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
                }
            }
        },
    }
    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu"},
        "spec": {
            "role": "r",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"k": "v"}}],
            "securityGroupSelectorTerms": [{"tags": {"k": "v"}}],
        },
    }
    return pool, node_class


def test_karpenter_create_time_rules_are_evaluated() -> None:
    ref = need_reference()
    pool, node_class = karpenter_objects()
    pool_schema = crd_schema(ref, pool["apiVersion"], pool["kind"])
    class_schema = crd_schema(ref, node_class["apiVersion"], node_class["kind"])
    assert cel_results(pool, pool_schema)[0] == []
    assert cel_results(node_class, class_schema)[0] == []

    restricted = copy.deepcopy(pool)
    restricted["spec"]["template"]["spec"]["requirements"][0]["key"] = "karpenter.sh/custom"
    assert cel_results(restricted, pool_schema)[0], "a karpenter.sh/ key outside the allowed list is refused"

    ubuntu = copy.deepcopy(node_class)
    ubuntu["spec"]["amiSelectorTerms"] = [{"alias": "ubuntu@latest"}]
    assert cel_results(ubuntu, class_schema)[0], "an AMI alias family Karpenter does not know is refused"
