"""Packaging extras: `gpuplane[gcp]` brings no AWS SDKs, `gpuplane[aws]` no pulumi-gcp, and gpuplane imports
each SDK lazily, so a GKE stack plans with pulumi_aws/pulumi_eks unimportable (and an EKS stack without
pulumi_gcp). A stack whose SDK is missing fails with one clear `pip install 'gpuplane[...]'` error."""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import ROOT

SDKS = {"gcp": ("pulumi_gcp",), "aws": ("pulumi_aws", "pulumi_eks"), "deployments": ("pulumi_pulumiservice",)}


class Blocker(importlib.abc.MetaPathFinder):
    """Makes modules unimportable, as if their distribution were not installed; records the attempts."""

    def __init__(self, blocked: tuple[str, ...]) -> None:
        self.blocked = blocked
        self.attempts: list[str] = []

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in self.blocked:
            self.attempts.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@pytest.fixture
def without() -> Iterator[Any]:
    """`without("aws")`: the aws extra's SDKs are unimportable and gpuplane is imported afresh; the earlier
    modules are restored afterwards (fresh gpuplane module objects never leak into other tests)."""
    saved = dict(sys.modules)
    blockers: list[Blocker] = []

    def block(extra: str) -> Blocker:
        blocker = Blocker(SDKS[extra])
        for name in list(sys.modules):
            if name.split(".")[0] in (*blocker.blocked, "gpuplane"):
                del sys.modules[name]
        sys.meta_path.insert(0, blocker)
        blockers.append(blocker)
        return blocker

    yield block
    for b in blockers:
        sys.meta_path.remove(b)
    for name in set(sys.modules) - set(saved):
        if name.split(".")[0] == "gpuplane":  # SDKs first imported here stay: they register packages once
            del sys.modules[name]
    sys.modules.update(saved)


@pytest.mark.parametrize(
    ("stack", "missing"), [("gcp-standard", "aws"), ("aws-karpenter", "gcp"), ("gcp-fleet", "deployments")]
)
def test_a_stack_plans_without_the_other_clouds_sdk(without: Any, stack: str, missing: str, capsys: Any) -> None:
    blocker = without(missing)
    from gpuplane.cli import main

    assert main(["plan", stack, "--format", "json"]) == 0, capsys.readouterr().err
    assert '"resources"' in capsys.readouterr().out
    assert blocker.attempts == []  # CLI, config models, catalog, plan mocks, simulator: none reached for it
    assert not [m for m in sys.modules if m.split(".")[0] in SDKS[missing]]
    import gpuplane.testing  # noqa: F401  the public testing module too

    assert blocker.attempts == []


@pytest.mark.parametrize(("stack", "missing"), [("aws-managed", "aws"), ("gcp-autopilot", "gcp")])
def test_a_stack_without_its_sdk_names_the_extra(without: Any, stack: str, missing: str, capsys: Any) -> None:
    without(missing)
    from gpuplane.cli import main

    assert main(["plan", stack]) == 2
    err = capsys.readouterr().err
    assert f"pip install 'gpuplane[{missing}]'" in err
    sdk = {"aws": "pulumi_aws", "gcp": "pulumi_gcp"}[missing]
    assert f"needs {sdk}, which is not installed" in err  # one sentence naming the platform and the SDK
    assert "gpuplane:platform" in err and "Traceback" not in err


def test_importing_a_cloud_package_without_its_sdk_names_the_extra(without: Any) -> None:
    without("aws")
    with pytest.raises(ModuleNotFoundError, match=re.escape("pip install 'gpuplane[aws]'")):
        importlib.import_module("gpuplane.aws")
    import gpuplane

    with pytest.raises(ModuleNotFoundError, match=re.escape("pip install 'gpuplane[aws]'")):
        gpuplane.EksGpuPlatform  # noqa: B018  the lazy top-level name


def test_importing_the_deployments_module_without_its_sdk_names_the_extra(without: Any) -> None:
    without("deployments")
    with pytest.raises(ModuleNotFoundError, match=re.escape("pip install 'gpuplane[deployments]'")):
        importlib.import_module("gpuplane.fleet.deployments")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def _extra_closure(extras: dict[str, list[str]], extra: str) -> set[str]:
    """Distributions an extra of gpuplane names, following `gpuplane[...]` self-references."""
    out: set[str] = set()
    for req in extras[extra]:
        if _name(req) == "gpuplane":
            for inner in re.search(r"\[(.*)\]", req).group(1).split(","):  # type: ignore[union-attr]
                out |= _extra_closure(extras, inner.strip())
        else:
            out.add(_name(req))
    return out


def test_extras_are_as_documented() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert {_name(d) for d in project["dependencies"]} == {
        "pulumi",
        "pulumi-kubernetes",
        "pulumi-tls",
        "pydantic",
        "pyyaml",
    }
    assert _extra_closure(extras, "gcp") == {"pulumi-gcp"}
    assert _extra_closure(extras, "aws") == {"pulumi-aws", "pulumi-eks"}
    assert _extra_closure(extras, "deployments") == {"pulumi-pulumiservice"}
    assert _extra_closure(extras, "all") == {"pulumi-gcp", "pulumi-aws", "pulumi-eks", "pulumi-pulumiservice"}
    assert _extra_closure(extras, "all") <= _extra_closure(extras, "test")


def _installed_closure(names: set[str]) -> set[str]:
    """Names reached through installed distributions' unconditional requirements (no network)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        todo += [_name(r) for r in reqs if "extra ==" not in r]
    return seen


def test_the_gcp_extra_installs_no_aws_sdk_and_vice_versa() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras, base = project["optional-dependencies"], {_name(d) for d in project["dependencies"]}
    gcp = _installed_closure(base | _extra_closure(extras, "gcp"))
    aws = _installed_closure(base | _extra_closure(extras, "aws"))
    assert "pulumi-gcp" in gcp and not {"pulumi-aws", "pulumi-eks", "boto3", "botocore"} & gcp
    assert {"pulumi-aws", "pulumi-eks"} <= aws and "pulumi-gcp" not in aws


def test_the_pulumi_programs_install_both_clouds() -> None:
    """`pulumi up` installs requirements.txt into the program's venv: the stack program (any platform) and
    the multi-language provider need both clouds' SDKs, so they ask for the `all` extra."""
    from .conftest import ROOT

    for req in (ROOT / "requirements.txt", ROOT / "provider" / "requirements.txt"):
        lines = [ln.strip() for ln in req.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        assert lines and all(ln.endswith("[all]") for ln in lines if ln.startswith("-e")), (req, lines)
