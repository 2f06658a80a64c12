"""Move a fleet stack's state into a stack per region, without replacing anything: split its `pulumi stack export`
into one deployment per region part, for `pulumi stack import` (docs/fleets.md, "Moving an existing fleet stack").

Why not `pulumi state move`: it never moves providers, and the providers of a region live inside its subtree
(gpuplane's platform providers, pulumi-eks's Kubernetes provider in its cluster component), which its integrity
check refuses (pulumi/pulumi pkg/cmd/pulumi/state/state_move.go). A split export carries each region's subtree,
providers included, with the URNs the engine gives the same resources when the region's own stack registers them:
the stack name changes, `GpuFleet` leaves the type chain, and the region's platform is parented to the new stack's
root (pulumi/pulumi sdk/go/common/resource/urn.go `NewURN`: a resource's type is its parent's qualified type, `$`,
its own; a child of the root stack has its own type only).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

STACK_TYPE = "pulumi:pulumi:Stack"
FLEET_TYPE = "gpuplane:index:GpuFleet"


def urn(stack: str, project: str, qualified_type: str, name: str) -> str:
    return f"urn:pulumi:{stack}::{project}::{qualified_type}::{name}"


def parts_of(u: str) -> tuple[str, str, str, str]:
    """(stack, project, qualified type, name) of a URN (a name may hold `::`)."""
    _, _, rest = u.partition("urn:pulumi:")
    stack, project, qualified, name = rest.split("::", 3)
    return stack, project, qualified, name


def root_urn(stack: str, project: str) -> str:
    """The root stack resource's URN (pulumi/pulumi pkg/resource/stack: `<project>-<stack>`)."""
    return urn(stack, project, STACK_TYPE, f"{project}-{stack}")


def _provider_ref(ref: str) -> tuple[str, str]:
    """A provider reference `<urn>::<id>`."""
    at = ref.rindex("::")
    return ref[:at], ref[at + 2 :]


def _subtree(resources: Sequence[Mapping[str, Any]], top: str) -> list[str]:
    kids: dict[str, list[str]] = {}
    for r in resources:
        if r.get("parent"):
            kids.setdefault(str(r["parent"]), []).append(str(r["urn"]))
    out, todo = [], [top]
    while todo:
        u = todo.pop()
        out.append(u)
        todo.extend(kids.get(u, []))
    return out


def _rewrite(u: str, dest: str) -> str:
    """A URN in the region's own stack: the stack renamed, `GpuFleet` out of the type chain."""
    _, project, qualified, name = parts_of(u)
    chain = [t for t in qualified.split("$") if t != FLEET_TYPE]
    return urn(dest, project, "$".join(chain), name)


def split(
    deployment: Mapping[str, Any], fleet_stack: str, platforms: Mapping[str, str], dest: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """One deployment per region from a fleet stack's (`pulumi stack export`'s `deployment`): `platforms` maps each
    region to its platform component's logical name (`<cluster>-<region>`), `dest` each region to its stack's name.
    Each holds the region's subtree, the root-level providers it uses and a root stack resource of its own; URNs,
    parents, providers and dependencies rewritten, dependencies on what stays behind dropped. Raises `ValueError`
    for a region whose platform is not in the state."""
    resources = list(deployment.get("resources") or [])
    if deployment.get("pending_operations") or deployment.get("pendingOperations"):
        raise ValueError(
            f"{fleet_stack}: the state has pending operations (an interrupted update): finish or "
            "cancel it first, import would drop them"
        )
    by_urn = {str(r["urn"]): r for r in resources}
    fleets = [u for u in by_urn if parts_of(u)[2].split("$")[-1] == FLEET_TYPE]
    out: dict[str, dict[str, Any]] = {}
    for region, platform in platforms.items():
        tops = [u for u in by_urn if parts_of(u)[3] == platform and by_urn[u].get("parent") in fleets]
        if len(tops) != 1:
            raise ValueError(f"{fleet_stack}: no platform {platform!r} under GpuFleet in the state ({region})")
        stack = dest[region]
        moved = set(_subtree(resources, tops[0]))
        # providers the subtree uses that live elsewhere (root-level default providers): copied along
        used = {_provider_ref(str(by_urn[u]["provider"]))[0] for u in moved if by_urn[u].get("provider")} - moved
        shared = {u for u in used if u in by_urn and is_provider(u)}
        project = parts_of(tops[0])[1]
        root = root_urn(stack, project)
        names = {u: _rewrite(u, stack) for u in moved | shared}
        # in the export's own order: the engine checks that what a resource refers to comes before it
        # (pulumi/pulumi pkg/resource/deploy/snapshot.go VerifyIntegrity, run by `pulumi stack import`)
        states = [
            {"urn": root, "custom": False, "type": STACK_TYPE, "inputs": {}, "outputs": {}},
            *(_moved(r, names, root, fleets) for r in resources if str(r["urn"]) in names),
        ]
        out[region] = {**copy.deepcopy({k: v for k, v in deployment.items() if k != "resources"}), "resources": states}
    return out


def is_provider(u: str) -> bool:
    return parts_of(u)[2].split("$")[-1].startswith("pulumi:providers:")


def left_behind(deployment: Mapping[str, Any], parts: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Resources of the fleet stack no region takes, but its root, `GpuFleet` and providers (copied where used)."""
    taken = {parts_of(str(r["urn"]))[2:] for d in parts.values() for r in d["resources"]}
    return [
        str(r["urn"])
        for r in deployment.get("resources") or []
        if parts_of(str(r["urn"]))[2].split("$")[-1] not in (STACK_TYPE, FLEET_TYPE)
        and not is_provider(str(r["urn"]))
        and (_rewrite_type(str(r["urn"])), parts_of(str(r["urn"]))[3]) not in taken
    ]


def _rewrite_type(u: str) -> str:
    return "$".join(t for t in parts_of(u)[2].split("$") if t != FLEET_TYPE)


def renamed(value: Any, names: Mapping[str, str]) -> Any:
    """`value` with every URN of `names` in it renamed: resource references in inputs and outputs (a reference is
    stored with its URN: pulumi/pulumi sdk/go/common/resource/properties.go `ResourceReference`)."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: renamed(v, names) for k, v in value.items()}
    return value


def _moved(r: Mapping[str, Any], names: Mapping[str, str], root: str, fleets: Sequence[str]) -> dict[str, Any]:
    state = copy.deepcopy(dict(r))
    state["urn"] = names[str(r["urn"])]
    for key in ("inputs", "outputs"):
        if key in state:
            state[key] = renamed(state[key], names)
    parent = r.get("parent")
    if parent in fleets or (parent and parts_of(str(parent))[2] == STACK_TYPE):
        state["parent"] = root
    elif parent:
        state["parent"] = names[str(parent)]
    if r.get("provider"):
        p_urn, p_id = _provider_ref(str(r["provider"]))
        state["provider"] = f"{names.get(p_urn, p_urn)}::{p_id}"
    if "dependencies" in r:
        state["dependencies"] = [names[d] for d in r["dependencies"] if d in names]
    for key in ("deletedWith", "replaceWith"):  # checked by the import's integrity check too
        if r.get(key):
            if r[key] in names:
                state[key] = names[r[key]]
            else:
                state.pop(key)
    state.pop("aliases", None)  # old names in the old stack: nothing to match in the new one
    if "propertyDependencies" in r:
        state["propertyDependencies"] = {
            k: [names[d] for d in deps if d in names] for k, deps in dict(r["propertyDependencies"]).items()
        }
    return state


def dangling(deployment: Mapping[str, Any]) -> Iterator[str]:
    """References (parent, provider, dependencies, deletedWith, replaceWith) to URNs the deployment does not hold
    before the resource: the order `pulumi stack import`'s integrity check demands (pulumi/pulumi
    pkg/resource/deploy/snapshot.go VerifyIntegrity)."""
    seen: set[str] = set()
    for r in deployment["resources"]:
        refs = [r.get("parent"), r.get("deletedWith"), r.get("replaceWith"), *(r.get("dependencies") or [])]
        if r.get("provider"):
            refs.append(_provider_ref(str(r["provider"]))[0])
        refs += [d for deps in (r.get("propertyDependencies") or {}).values() for d in deps]
        yield from (f"{r['urn']} -> {ref}" for ref in refs if ref and ref not in seen)
        seen.add(str(r["urn"]))
