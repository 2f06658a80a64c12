"""A fleet stack as a stack per region plus a central stack (`gpuplane.fleet.stacks`, `gpuplane:fleetStack`): the
parts, their offline plans, and that together they build what the single fleet stack builds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.cli import main as cli
from gpuplane.config import ConfigError
from gpuplane.fleet.stacks import PART_KEY, PartReport, expand, plan_fleet, plan_part
from gpuplane.plan import Plan, load, plan_stack

from .conftest import ROOT, cached_plan, session_cache

FLEETS = ("gcp-fleet", "aws-fleet")


def regions_of(stack: str) -> list[str]:
    return [r["region"] for r in load(stack, ROOT).config["gpuplane:fleet"]["regions"]]


@pytest.mark.parametrize("fleet", FLEETS)
def test_a_fleet_expands_into_a_stack_per_region_then_a_central_one(fleet: str) -> None:
    sf = load(fleet, ROOT)
    parts = expand(sf)
    regions = regions_of(fleet)
    assert [p.name for p in parts] == [f"{fleet}-{r}" for r in regions] + [f"{fleet}-central"]
    assert [p.region for p in parts] == [*regions, None]
    assert parts[-1].reads == tuple(p.name for p in parts[:-1]) and all(p.reads == () for p in parts[:-1])
    for p in parts:  # the fleet's config unchanged for the user, plus which part this is
        assert {k: v for k, v in p.config.items() if k != PART_KEY} == sf.config
        assert p.config[PART_KEY] == (p.region or "central")


def resources(plan: Plan, stack: str) -> set[tuple[str, str, str]]:
    """(type, name, inputs) of the plan's custom resources, its own stack name blanked out of references."""
    return {
        (r.type, r.name, json.dumps(r.inputs, sort_keys=True).replace(stack, "STACK"))
        for r in plan.resources
        if r.custom
    }


@pytest.mark.parametrize("fleet", FLEETS)
def test_the_region_stacks_hold_exactly_what_the_fleet_stack_holds_for_their_region(fleet: str) -> None:
    """Moving a region's resources into its own stack changes no input of any of them: nothing is replaced."""
    sf = load(fleet, ROOT)
    whole = resources(cached_plan(fleet), fleet)
    cluster = sf.config["gpuplane:cluster"]["name"]
    seen: set[tuple[str, str, str]] = set()
    for part in expand(sf)[:-1]:
        mine = resources(plan_stack(part.stack_file(sf.project)), part.name)
        assert mine == {r for r in whole if r[1].startswith(f"{cluster}-{part.region}")}, part.name
        seen |= mine
    assert seen == whole  # and nothing of the fleet stack is left to no region


@session_cache
def reports(fleet: str) -> tuple[PartReport, ...]:
    """Every part planned, with the deploy simulator (the lifecycle checks of one region are run below)."""
    return tuple(plan_fleet(load(fleet, ROOT), lifecycle=False, jobs=1))


@pytest.mark.parametrize("fleet", FLEETS)
def test_every_part_plans_and_passes_the_deploy_checks_and_a_region_the_lifecycle_checks(fleet: str) -> None:
    """`gpuplane fleet plan FLEET` runs the lifecycle checks on every region; the suite runs them on the first
    (the others differ only in their share and zones)."""
    done = reports(fleet)
    assert [r.stack for r in done] == [p.name for p in expand(load(fleet, ROOT))]
    assert all(r.ok for r in done), [r.to_json() for r in done if not r.ok]
    assert all(r.resources > 0 for r in done[:-1])
    first = plan_part(load(fleet, ROOT).project, expand(load(fleet, ROOT))[0], lifecycle=True)
    assert first.lifecycle_checked and first.ok, first.to_json()


@pytest.mark.parametrize("fleet", FLEETS)
def test_the_central_stack_exports_the_fleets_scrape_job_and_rules(fleet: str) -> None:
    """Read from the region stacks through stack references, the same text the single fleet stack exports."""
    central, whole = reports(fleet)[-1].outputs, cached_plan(fleet).outputs
    assert central["scrapeConfig"] == whole["scrapeConfig"]
    assert central["prometheusRules"] == whole["prometheusRules"]
    assert central["regions"] == whole["regions"] == regions_of(fleet)
    assert central["stacks"] == {r: f"{fleet}-{r}" for r in regions_of(fleet)}


def test_a_stack_names_a_part_of_its_fleet() -> None:
    from gpuplane.config import parse_config

    raw = {k.removeprefix("gpuplane:"): v for k, v in load("gcp-fleet", ROOT).config.items()}
    with pytest.raises(ConfigError) as info:
        parse_config({**raw, "fleetStack": "us-east5"})
    assert dict(info.value.problems) == {
        "gpuplane:fleetStack": "'us-east5' is not a part of the fleet (did you mean 'us-east4'?) (parts: central, "
        "us-central1, us-east4, europe-west4)"
    }
    single = {k.removeprefix("gpuplane:"): v for k, v in load("gcp-standard", ROOT).config.items()}
    with pytest.raises(ConfigError) as info:
        parse_config({**single, "fleetStack": "central"})
    assert dict(info.value.problems) == {
        "gpuplane:fleetStack": "names a part of gpuplane:fleet, which this stack does not have"
    }
    with pytest.raises(ConfigError, match="has no gpuplane:fleet: nothing to split"):
        expand(load("gcp-standard", ROOT))


def test_fleet_stacks_writes_stack_files_that_plan_as_the_parts(tmp_path: Path, capsys: Any) -> None:
    assert cli(["fleet", "stacks", "gcp-fleet", "--write", str(tmp_path), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["stack"] for p in listed] == [p.name for p in expand(load("gcp-fleet", ROOT))]
    written = sorted(p.name for p in tmp_path.glob("Pulumi.*.yaml"))
    assert written == sorted(f"Pulumi.{p['stack']}.yaml" for p in listed)
    part = yaml.safe_load((tmp_path / "Pulumi.gcp-fleet-us-east4.yaml").read_text())["config"]
    assert part[PART_KEY] == "us-east4"
    assert cli(["plan", str(tmp_path / "Pulumi.gcp-fleet-us-east4.yaml"), "--check"]) == 0


def test_fleet_plan_prints_one_row_per_part_and_fails_on_a_bad_jobs_count(capsys: Any) -> None:
    assert cli(["fleet", "plan", "gcp-fleet", "--no-lifecycle", "--jobs", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["stack", "region", "resources"]
    assert [line.split()[0] for line in out[1:]] == [p.name for p in expand(load("gcp-fleet", ROOT))]
    assert all("passed" in line for line in out[1:])
    assert cli(["fleet", "plan", "gcp-fleet", "--jobs", "0"]) == 2
    assert "--jobs: must be at least 1, not 0" in capsys.readouterr().err


def test_fleet_up_runs_every_part_through_the_automation_api_regions_first(monkeypatch: Any, capsys: Any) -> None:
    """With a recording workspace in place of the Automation API's (there is no Pulumi CLI here): the regions in
    the order given, the central stack after them, each with its own part's config."""
    import shutil

    import gpuplane.fleet.run as run

    from .fleet_fake import FakeWorkspace

    fake = FakeWorkspace()
    monkeypatch.setattr(run, "automation_workspace", lambda project, name: fake)
    monkeypatch.setattr(shutil, "which", lambda cmd: "/usr/local/bin/pulumi")
    assert cli(["fleet", "up", "gcp-fleet", "--parallelism", "1", "--order", "europe-west4"]) == 0
    assert fake.started() == [
        "gcp-fleet-europe-west4",
        "gcp-fleet-us-central1",
        "gcp-fleet-us-east4",
        "gcp-fleet-central",
    ]
    parts = {p.name: p for p in expand(load("gcp-fleet", ROOT))}
    for name, part in parts.items():
        keys = {c.args[0] for c in fake.of(name, "set_config")}
        assert keys == set(part.config), name
    assert "succeeded" in capsys.readouterr().out


# --- moving a fleet stack's state into the region stacks ------------------------------------------------------------


@pytest.mark.parametrize("fleet", FLEETS)
def test_the_split_state_is_what_each_region_stack_registers_so_nothing_is_replaced(fleet: str) -> None:
    """The fleet stack's state split per region holds, for each region stack, exactly the URNs its program registers
    (the engine's URN rule, `fleet_state`), each with the same inputs, parent and provider: its first `up` after the
    import changes nothing. Nothing is left dangling, and every resource of the fleet stack lands in one region."""
    from gpuplane.fleet.migrate import dangling, left_behind, split

    from .fleet_state import engine_state

    sf = load(fleet, ROOT)
    cluster = sf.config["gpuplane:cluster"]["name"]
    parts = expand(sf)[:-1]
    before = engine_state(cached_plan(fleet))
    deployments = split(
        {"manifest": {}, "resources": before},
        fleet,
        {p.region: f"{cluster}-{p.region}" for p in parts if p.region},
        {p.region: p.name for p in parts if p.region},
    )
    moved = 0
    for part in parts:
        assert part.region is not None
        imported = {r["urn"]: r for r in deployments[part.region]["resources"]}
        assert list(dangling(deployments[part.region])) == []
        planned = {r["urn"]: r for r in engine_state(plan_stack(part.stack_file(sf.project)))}
        assert set(planned) == set(imported), part.name
        for u, r in planned.items():
            kept = imported[u]
            same = ("inputs", "parent", "provider", "type", "custom")
            assert {k: kept.get(k) for k in same if k in r} == {k: r[k] for k in same if k in r}, u
        moved += len(imported) - 1  # its own root stack resource
    fleet_own = {r["urn"] for r in before if r["type"] in ("pulumi:pulumi:Stack", "gpuplane:index:GpuFleet")}
    assert moved == len(before) - len(fleet_own)
    assert left_behind({"resources": before}, deployments) == []


def test_the_split_refuses_a_state_without_the_regions_platform() -> None:
    from gpuplane.fleet.migrate import split

    with pytest.raises(ValueError, match="no platform 'ml-fleet-us-east9' under GpuFleet"):
        split({"resources": []}, "gcp-fleet", {"us-east9": "ml-fleet-us-east9"}, {"us-east9": "gcp-fleet-us-east9"})


def test_fleet_migrate_writes_a_state_file_per_region_stack(tmp_path: Path, capsys: Any) -> None:
    from .fleet_state import engine_state

    export = {
        "version": 3,
        "deployment": {"manifest": {"time": "t"}, "resources": engine_state(cached_plan("aws-fleet"))},
    }
    (tmp_path / "fleet.json").write_text(json.dumps(export))
    out = tmp_path / "moved"
    assert cli(["fleet", "migrate", "aws-fleet", "--state", str(tmp_path / "fleet.json"), "--write", str(out)]) == 0
    names = [p.name for p in expand(load("aws-fleet", ROOT)) if p.region]
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.json" for n in names)
    doc = json.loads((out / f"{names[0]}.json").read_text())
    assert doc["version"] == 3 and doc["deployment"]["manifest"] == {"time": "t"}
    assert all(r["urn"].startswith(f"urn:pulumi:{names[0]}::") for r in doc["deployment"]["resources"])
    capsys.readouterr()
    (tmp_path / "bad.json").write_text("[]")
    assert cli(["fleet", "migrate", "aws-fleet", "--state", str(tmp_path / "bad.json"), "--write", str(out)]) == 2
    assert "has no `deployment`" in capsys.readouterr().err


def test_encrypted_values_stay_with_the_stack_that_encrypted_them(tmp_path: Path, capsys: Any) -> None:
    """Only the stack that encrypted a value can read it: the parts leave it out, say so, and `--write` merges into
    a part's existing file (its secrets provider and its own secure values kept)."""
    from gpuplane.plan.stackfile import StackFile

    sf = load("gcp-fleet", ROOT)
    secret = StackFile(sf.project, sf.stack, {**sf.config, "datadog:apiKey": {"secure": "v1:abc"}}, sf.path)
    parts = expand(secret)
    assert all("datadog:apiKey" not in p.config and p.secrets == ("datadog:apiKey",) for p in parts)
    existing = tmp_path / "Pulumi.gcp-fleet-us-east4.yaml"
    existing.write_text("encryptionsalt: v1:salt\nconfig:\n  datadog:apiKey: {secure: v1:mine}\n")
    assert cli(["fleet", "stacks", "gcp-fleet", "--write", str(tmp_path)]) == 0
    kept = yaml.safe_load(existing.read_text())
    assert kept["encryptionsalt"] == "v1:salt" and kept["config"]["datadog:apiKey"] == {"secure": "v1:mine"}
    assert kept["config"][PART_KEY] == "us-east4"


def test_the_split_renames_what_the_import_checks_and_refuses_what_it_would_lose() -> None:
    from gpuplane.fleet.migrate import left_behind, split

    root = "urn:pulumi:f::p::pulumi:pulumi:Stack::p-f"
    fleet = "urn:pulumi:f::p::gpuplane:index:GpuFleet::c"
    top = "urn:pulumi:f::p::gpuplane:index:GpuFleet$gpuplane:gcp:GkeGpuPlatform::c-r1"
    bucket = "urn:pulumi:f::p::gpuplane:index:GpuFleet$gpuplane:gcp:GkeGpuPlatform$gcp:storage/bucket:Bucket::b"
    stray = "urn:pulumi:f::p::gcp:storage/bucket:Bucket::stray"
    state = {
        "resources": [
            {"urn": root, "type": "pulumi:pulumi:Stack"},
            {"urn": fleet, "type": "gpuplane:index:GpuFleet", "parent": root},
            {"urn": top, "type": "gpuplane:gcp:GkeGpuPlatform", "parent": fleet},
            {"urn": bucket, "type": "gcp:storage/bucket:Bucket", "parent": top, "deletedWith": top, "aliases": [stray]},
            {"urn": stray, "type": "gcp:storage/bucket:Bucket", "parent": root},
        ]
    }
    (moved,) = split(state, "f", {"r1": "c-r1"}, {"r1": "f-r1"}).values()
    b = moved["resources"][-1]
    assert b["urn"] == "urn:pulumi:f-r1::p::gpuplane:gcp:GkeGpuPlatform$gcp:storage/bucket:Bucket::b"
    assert b["deletedWith"] == "urn:pulumi:f-r1::p::gpuplane:gcp:GkeGpuPlatform::c-r1" and "aliases" not in b
    assert left_behind(state, {"r1": moved}) == [stray]
    with pytest.raises(ValueError, match="pending operations"):
        split({**state, "pending_operations": [{"type": "creating"}]}, "f", {"r1": "c-r1"}, {"r1": "f-r1"})


def test_fleet_up_names_a_project_it_cannot_use_without_a_traceback(monkeypatch: Any, capsys: Any) -> None:
    import shutil

    import gpuplane.fleet.run as run

    def refuse(project: Path, name: str) -> Any:
        raise ValueError(f"{project}/Pulumi.yaml is project 'other', not {name!r}")

    monkeypatch.setattr(run, "automation_workspace", refuse)
    monkeypatch.setattr(shutil, "which", lambda cmd: "/usr/local/bin/pulumi")
    assert cli(["fleet", "preview", "gcp-fleet"]) == 2
    assert "is project 'other', not 'gpuplane'" in capsys.readouterr().err


def test_the_central_stack_declares_the_region_stacks_deployment_settings() -> None:
    """With `fleet.deployments`, the central part (planned as `gpuplane fleet plan` plans it) holds one
    DeploymentSettings per region stack, for that stack (the settings' own checks: tests/test_deployments.py)."""
    from gpuplane.plan.stackfile import StackFile

    from .test_deployments import BASE, OIDC

    sf = load("gcp-fleet", ROOT)
    config = json.loads(json.dumps(sf.config))
    config["gpuplane:fleet"]["deployments"] = {**BASE, **OIDC["gcp-fleet"], "schedule": "0 */6 * * *"}
    done = plan_fleet(StackFile(sf.project, sf.stack, config), lifecycle=False, jobs=1)
    assert all(r.ok for r in done), [r.to_json() for r in done if not r.ok]
    central = plan_stack(
        StackFile(
            sf.project,
            f"{sf.stack}-central",
            {
                **expand(StackFile(sf.project, sf.stack, config))[-1].config,
                "gpuplane:stackReferences": references(done),
            },
        )
    )
    settings = central.by_type("pulumiservice:index:DeploymentSettings")
    assert sorted(s.inputs["stack"] for s in settings) == sorted(p.name for p in expand(sf)[:-1])
    assert {s.inputs["project"] for s in settings} == {sf.project} and len(
        central.by_type("pulumiservice:index:DriftSchedule")
    ) == len(settings)


def references(done: list[PartReport]) -> dict[str, Any]:
    from gpuplane.stack.parts import references_for_central

    return references_for_central("gpuplane", "gcp-fleet", {r.region: r.outputs for r in done if r.region})
