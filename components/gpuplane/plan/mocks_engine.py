"""What the engine and the providers add to a resource's inputs before the cloud sees them, and the check
that a plan never rests on a value the mocks invented.

- **Engine-made names.** Pulumi auto-names a resource whose provider declares a name property and whose
  program leaves it unset: the logical name, a dash and 7 random hex characters (pulumi/pulumi
  pkg/resource/deploy autonaming, `<name>-<random>`). Offline the suffix is a digest of the logical name,
  so plans stay deterministic.
- **Provider configuration.** A GCP resource without `project` (or `region`, or a cluster without
  `location`) takes its provider's, and the default provider's comes from stack config (`gcp:project`,
  `gcp:region`, `gcp:zone`; terraform-provider-google tpgresource `GetProject`, `GetRegion`,
  `GetLocation`, which tries the resource's `location`, then the provider's zone, and never its region).
- **Invented values.** A mock that lacks an output returns nothing, and a program that formats it gets
  the text `None`: `clusterName: "None"`, `projects/None/...`. The real engine would hold the real value.
  `invented` finds such inputs, and the mocks refuse the resource, so the plan fails instead of passing on a
  value that cannot exist.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pulumi

from ..config import ConfigError
from .mocks_base import digest

GCP_DEFAULTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        # type -> the provider-level fields it takes when unset ("name": the engine's autoname)
        "gcp:container/cluster:Cluster": ("name", "project", "location"),
        "gcp:container/nodePool:NodePool": ("name", "project", "location"),
        "gcp:compute/network:Network": ("name", "project"),
        "gcp:compute/subnetwork:Subnetwork": ("name", "project", "region"),
        "gcp:compute/router:Router": ("name", "project", "region"),
        "gcp:compute/routerNat:RouterNat": ("name", "project", "region"),
        "gcp:serviceaccount/account:Account": ("project",),
    }
)
"""GCP resource type -> inputs the engine or the provider fills when the program leaves them unset."""

GCP_SETTINGS = ("project", "region", "zone")


def engine_name(logical: str) -> str:
    """The name Pulumi gives an auto-named resource: `<logical>-<7 hex>` (deterministic here)."""
    return f"{logical}-{digest(logical)[:7]}"


def kubernetes_name(metadata: Mapping[str, Any] | None, logical: str) -> str:
    """A Kubernetes object's name: `metadata.name`, else the one pulumi-kubernetes gives it at check time,
    `<logical>-<8 hex>` (provider/pkg/metadata/naming.go `AssignNameIfAutonamable`: `resource.NewUniqueName`
    with the URN name and `-` as prefix; deterministic here). An object with `generateName` is named by the
    API server instead, from that prefix."""
    meta = metadata or {}
    if meta.get("name"):
        return str(meta["name"])
    if meta.get("generateName"):  # (not annotated `pulumi.com/autonamed`: the API server names it)
        return f"{meta['generateName']}{digest(logical, 'generate')[:5]}"
    return f"{logical}-{digest(logical, 'k8s')[:8]}"


def helm_release_name(inputs: Mapping[str, Any], logical: str) -> str:
    """A Helm Release's name: `name`, else pulumi-kubernetes's `<logical>-<8 hex>` (provider/pkg/provider/
    helm_release.go `assignNameIfAutonameable`, `resource.NewUniqueHex`; deterministic here)."""
    return str(inputs.get("name") or f"{logical}-{digest(logical, 'helm')[:8]}")


PREVIEW_UNKNOWN = "gpuplane-preview-unknown"
"""What an unknown input (a preview's computed value) reads as inside the mocks (`mocks_preview`)."""


def gcp_provider_settings(inputs: Mapping[str, Any]) -> dict[str, str]:
    """A `pulumi:providers:gcp` resource's settings, falling back to stack config as the provider does."""
    config = pulumi.Config("gcp")
    return {k: str(v) for k in GCP_SETTINGS if (v := inputs.get(k) or config.get(k))}


def default_gcp_settings() -> dict[str, str]:
    return gcp_provider_settings({})


def with_gcp_defaults(
    args: pulumi.runtime.MockResourceArgs, settings: Mapping[str, str]
) -> pulumi.runtime.MockResourceArgs:
    """`args` with the inputs the engine and the GCP provider fill in (`GCP_DEFAULTS`), from `settings`."""
    fields = GCP_DEFAULTS.get(args.typ)
    if not fields:
        return args
    filled = dict(args.inputs)
    settings = dict(settings)
    # A node pool's cluster given as its ID names the project and location (terraform-provider-google
    # resource_container_node_pool.go extractNodePoolInformation parses projects/P/locations/L/clusters/C).
    m = re.match(r"^projects/([^/]+)/locations/([^/]+)/clusters/", str(filled.get("cluster") or ""))
    if m:
        settings.update(project=m[1], zone=m[2])
    elif PREVIEW_UNKNOWN in str(filled.get("cluster") or ""):  # the cluster's ID, not known until create
        fields = tuple(f for f in fields if f not in ("project", "location"))
    for f in fields:
        if filled.get(f):
            continue
        if f == "name":
            filled[f] = engine_name(args.name)
        elif f == "location":  # GetLocation: the resource's location, else the provider's zone, never its region
            if not settings.get("zone"):
                raise ConfigError(
                    [
                        (
                            "gcp:zone",
                            f"{args.typ} {args.name!r} has no location and its GCP provider no zone "
                            '(terraform-provider-google GetLocation: "Cannot determine zone"): pass `location=`',
                        )
                    ]
                )
            filled[f] = settings["zone"]
        elif settings.get(f):
            filled[f] = settings[f]
        elif (
            f == "project"
        ):  # as the provider refuses it (tpgresource.GetProject: "project: required field is not set")
            raise ConfigError(
                [
                    (
                        "gcp:project",
                        f"{args.typ} {args.name!r} has no project and its GCP provider has none: pass `project=`, "
                        "or set gcp:project in the stack config (or the provider's `project`)",
                    )
                ]
            )
    out = copy.copy(args)
    out.inputs = filled
    return out


NONE_TOKEN = re.compile(r"(?:^|[/:@.=\s-])None(?:$|[/:@.=\s-])")
"""`None` as a whole word inside a name, ID, ARN or path."""


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


NONE_IS_A_VALUE = frozenset({"clusterIP", "sessionAffinity", "dnsPolicy", "sideEffects"})
"""Kubernetes fields for which `None` is a legitimate value (headless Service, webhook side effects...)."""


def invented(inputs: Mapping[str, Any]) -> list[str]:
    """Input paths whose text holds `None`: a value formatted from an output the mocks never gave."""
    return [
        p
        for p, s in _strings(inputs, "")
        if (s == "None" and p.rsplit(".", 1)[-1] not in NONE_IS_A_VALUE) or (s != "None" and NONE_TOKEN.search(s))
    ]


__all__ = [
    "GCP_DEFAULTS",
    "default_gcp_settings",
    "engine_name",
    "gcp_provider_settings",
    "invented",
    "with_gcp_defaults",
]
