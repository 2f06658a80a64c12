"""The recording mock monitor: what the engine would receive, kept per registration.

`RecordingMonitor` stands where the Pulumi engine's resource monitor stands in `pulumi up`: the SDK sends it
every RegisterResource, RegisterResourceOutputs and Invoke call. It keeps each registration as the engine
sees it (`engine_view`: secrets masked, resource references as URNs) and answers with the mocks' outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import mocks as pm
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from .mocks import RESOURCE_SIG, SIG_KEY, child_inputs

SECRET_SIG: str = rpc._special_secret_sig
"""The SDK's marker of a secret in serialised properties (pulumi/runtime/rpc.py), as are `UNKNOWN` and the
mocks' `SIG_KEY`/`RESOURCE_SIG`."""
UNKNOWN: str = rpc.UNKNOWN
SECRET = "[secret]"


def engine_view(value: Any) -> Any:
    """Inputs as the engine sees them, with secrets masked and resource references as URNs."""
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return SECRET
        if sig == RESOURCE_SIG:
            return value.get("urn")
        return {k: engine_view(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [engine_view(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # protobuf Struct carries every number as a double
    if value == UNKNOWN:
        return "[unknown]"
    return value


@dataclass
class PlannedResource:
    """One registration, as `gpuplane plan --format json` reports it."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    provider: str | None = None
    dependencies: tuple[str, ...] = ()
    """URNs this resource was made to depend on (explicit `depends_on` and input dependencies)."""
    protect: bool = False
    """Pulumi `protect` as registered (deleting or replacing it fails)."""
    retain_on_delete: bool = False
    """Pulumi `retainOnDelete` as registered (deleting it from the stack leaves the cloud resource)."""
    transforms: tuple[Any, ...] = ()
    """Transforms registered with the resource (the engine runs them on a component's children)."""
    ignore_changes: tuple[str, ...] = ()
    """Input paths whose later changes the engine ignores (`ignore_changes`)."""
    replace_on_changes: tuple[str, ...] = ()
    """Input paths whose change makes the engine replace the resource (`replace_on_changes`)."""
    delete_before_replace: bool = False
    """Pulumi `deleteBeforeReplace` as registered."""
    providers: tuple[tuple[str, str], ...] = ()
    """Package -> provider reference, as given to a (remote) component."""
    aliases: tuple[Any, ...] = ()
    """Pulumi `aliases` as registered: old URNs, or alias specs (`{"name": ..., "parentUrn": ...}`)."""
    custom_timeouts: dict[str, str] = field(default_factory=dict)
    """Pulumi `customTimeouts` as registered (`create`, `update`, `delete`: how long the engine waits)."""
    child_inputs: dict[str, Any] = field(default_factory=dict)
    """A packaged component's transforms run on the cloud resource it creates (`mocks.PACKAGED_CHILDREN`): the
    inputs they give that child (pulumi-eks's node group gets `nodeRepairConfig` this way)."""
    filled: dict[str, Any] = field(default_factory=dict, compare=False)
    """Inputs the engine or the provider fills in where the program left them unset (an engine-made `name`,
    the provider's `project` and `location`), as the mocks applied them; not part of the JSON."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": self.inputs,
            "dependsOn": sorted(set(self.dependencies)),
            "provider": self.provider,
        }
        # The resource options a reader needs to see what a replacement or a delete does; each only when set.
        options = {
            "ignoreChanges": list(self.ignore_changes),
            "replaceOnChanges": list(self.replace_on_changes),
            "deleteBeforeReplace": self.delete_before_replace,
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "aliases": list(self.aliases),
            "customTimeouts": dict(self.custom_timeouts),
        }
        out.update({k: v for k, v in options.items() if v})
        if self.child_inputs:
            out["childInputs"] = self.child_inputs
        return out


def _timeouts(message: Any) -> dict[str, str]:
    """A registration's customTimeouts (`create`, `update`, `delete`), the ones set."""
    return {k: str(v) for k, v in json_format.MessageToDict(message, preserving_proto_field_name=True).items() if v}


def plain_struct(state: dict[str, Any]) -> struct_pb2.Struct | None:
    """`state` as the SDK's `rpc.serialize_properties(state, {})` would encode it, when it is plain data
    (dicts, lists, strings, numbers, booleans, None: what the mocks return); None otherwise.

    The SDK's serialiser (pulumi/runtime/rpc.py `serialize_properties`, `serialize_property`) is
    asynchronous, as inputs may hold Outputs: it creates an awaitable per value. For plain data its result
    is the same bag with top-level None values left out (nested ones kept as null), which protobuf's
    `Struct.update` encodes directly."""

    def plain(value: Any) -> bool:
        if value is None or isinstance(value, (str, bool, int, float)):
            return True
        if isinstance(value, list):
            return all(plain(v) for v in value)
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        return False

    if not plain(state):
        return None
    struct = struct_pb2.Struct()
    struct.update({k: v for k, v in state.items() if v is not None})
    return struct


class RecordingMonitor(pm.MockMonitor):
    """A MockMonitor that keeps every registration in order, with parents and raw inputs.

    Resource references are turned off (as for the Pulumi CLI's older engines): remote components such
    as `eks:index:Cluster` then pass between resources by URN, which avoids the stock mock monitor's
    event-loop race.
    """

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.registrations: list[PlannedResource] = []
        self.registered_outputs: dict[str, dict[str, Any]] = {}
        """Component URN -> the outputs it registered (`register_outputs`), as the engine sees them."""

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        raw = json_format.MessageToDict(request.object, preserving_proto_field_name=True)
        transforms = pm._resolve_callbacks(request.transforms)
        self.registrations.append(
            PlannedResource(
                urn=urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=bool(request.custom),
                inputs=engine_view(raw),
                provider=request.provider or None,
                dependencies=tuple(request.dependencies),
                protect=bool(request.protect),
                retain_on_delete=bool(request.retainOnDelete),
                transforms=tuple(transforms),
                child_inputs=child_inputs(request.type, request.name, transforms),
                custom_timeouts=_timeouts(request.customTimeouts),
                ignore_changes=tuple(request.ignoreChanges),
                replace_on_changes=tuple(request.replaceOnChanges),
                delete_before_replace=bool(request.deleteBeforeReplace),
                providers=tuple(sorted(dict(request.providers).items())),
                aliases=(
                    *request.aliasURNs,
                    *(json_format.MessageToDict(a, preserving_proto_field_name=True) for a in request.aliases),
                ),
            )
        )
        return self._answer(request, urn, transforms)

    def _answer(self, request: Any, urn: str, transforms: list[Any]) -> Any:
        """The stock `MockMonitor.RegisterResource` (pulumi/runtime/mocks.py), with the mocks' state encoded
        by `plain_struct` where it is plain data instead of by the SDK's asynchronous serialiser."""
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        _ensure_event_loop()  # type: ignore[no-untyped-call]  # deserialising resource references needs a loop
        args = pulumi.runtime.MockResourceArgs(
            typ=request.type,
            name=request.name,
            inputs=rpc.deserialize_properties(request.object),
            provider=request.provider,
            resource_id=request.importId,
            custom=request.custom or False,
            transforms=transforms,
        )
        id_, state = self.mocks.new_resource(args)
        obj = plain_struct(state)
        if obj is None:
            obj = _sync_await(rpc.serialize_properties(state, {}))
        self.resources[urn] = pm.MockMonitor.ResourceRegistration(urn, id_, state)  # type: ignore[arg-type]
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=obj)  # type: ignore[arg-type]

    def RegisterResourceOutputs(self, request: Any) -> Any:
        raw = json_format.MessageToDict(request.outputs, preserving_proto_field_name=True)
        self.registered_outputs[request.urn] = engine_view(raw)
        return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]

    def SupportsFeature(self, request: Any) -> Any:
        if request.id == "resourceReferences":
            return type("SupportsFeatureResponse", (object,), {"hasSupport": False})
        return super().SupportsFeature(request)  # type: ignore[no-untyped-call]

    def GetDeploymentInfo(self, request: Any) -> Any:
        info = super().GetDeploymentInfo(request)  # type: ignore[no-untyped-call]
        keep = [f for f in info.supportedFeatures if f != resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES]
        return resource_pb2.DeploymentInfo(supportedFeatures=keep)
