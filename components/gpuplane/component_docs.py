"""docs/components.md, generated from the component classes: the typed components through the same
schema inference the multi-language package uses (so the docs, the Python types and the package agree),
and the whole-platform components from their class docstrings."""

from __future__ import annotations

from typing import Any

STACK_CONFIG = """The whole platforms also take a parsed stack config, as `pulumi up` on a stack file builds them:
`GkeGpuPlatform.from_config(name, gpuplane.parse_config({...}))` (and the same on `GkeAutopilotPlatform`,
`EksGpuPlatform`). Their typed args are that config's sections in snake_case (`gpuPools` -> `gpu_pools`,
`platform` -> `kind`), validated by the same rules (config.md). Plain values only where an arg decides which
resources exist or names them (kind, pools, region, cluster name); a GCP project, network and subnetwork,
an existing VPC, its subnets, admin ARNs and KMS key may be Outputs."""

PIECES = (
    ("gpuplane.gcp.cluster", "GkeGpuCluster"),
    ("gpuplane.aws.cluster", "EksGpuCluster"),
    ("gpuplane.aws.network", "EksVpc"),
    ("gpuplane.aws.autoscaler", "ClusterAutoscaler"),
    ("gpuplane.aws.karpenter", "Karpenter"),
)
"""The platforms' own pieces (Python; args from the config models)."""

FUNCTIONS = """Pure functions worth calling directly: `gpuplane.placement(pool_component.gpu_nodes[i], gpus=1)`
(or `placement(cfg, pool, gpus)`), `gpuplane.stack.capacity.summary(cfg)`, `gpuplane.stack.fleet.spread(...)`,
`gpuplane.plan.plan_stack(...)`, `gpuplane.plan.diff.diff(base, head)`."""

HEADER = """# Component reference

Generated from the classes by `python scripts/render_docs.py` (a test keeps it in sync). Import any of
them from Python (`from gpuplane import <Name>`; only the cloud SDK a component needs is loaded), or use
the typed components from TypeScript, Go, YAML, ... through the package in `provider/`
(`pulumi package add <path-or-git-url>/provider`). Property names below are the package's (camelCase);
Python args are the same in snake_case (`gpuPools` -> `gpu_pools`). A bad argument raises one
`ArgsError` (a `ConfigError`) naming every bad argument path before anything is registered.
"""


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _type(prop: dict[str, Any]) -> str:
    if prop.get("$ref", "").startswith("pulumi.json#/"):
        return str(prop["$ref"]).rsplit("/", 1)[-1].lower()  # Pulumi's own types (`Any`)
    if "$ref" in prop:
        return f"[{prop['$ref'].rsplit(':', 1)[-1]}](#{prop['$ref'].rsplit(':', 1)[-1].lower()})"
    if prop.get("type") == "array":
        return f"list of {_type(prop['items'])}"
    if prop.get("type") == "object" and "additionalProperties" in prop:
        return f"map of {_type(prop['additionalProperties'])}"
    return str(prop.get("type", "any"))


def _table(props: dict[str, Any], required: list[str], inputs: bool) -> list[str]:
    head = "| input | type | required | description |" if inputs else "| output | type | description |"
    rows = [head, "|---|---|---|---|" if inputs else "|---|---|---|"]
    for name, p in props.items():
        t = _type(p) + ("" if not inputs or p.get("plain") else " (Input)")
        mid = f" {'yes' if name in required else ''} |" if inputs else ""
        rows.append(f"| `{name}` | {t} |{mid} {_one_line(p.get('description'))} |")
    return rows


def reference() -> str:
    from .provider import package_schema

    doc = package_schema()
    out = [HEADER, "## Components that take Outputs", ""]
    for token, r in doc["resources"].items():
        name = token.rsplit(":", 1)[-1]
        out += [f"### {name}", "", f"`{token}`. {_one_line(r.get('description'))}", ""]
        out += _table(r.get("inputProperties", {}), r.get("requiredInputs", []), True) + [""]
        out += _table(r.get("properties", {}), [], False) + [""]
    out += ["## Functions", ""]
    for token, f in doc.get("functions", {}).items():
        out += [f"### {token.rsplit(':', 1)[-1]}", "", f"`{token}`. {_one_line(f.get('description'))}", ""]
        out += _table(f["inputs"]["properties"], f["inputs"].get("required", []), True) + [""]
        out += _table(f["outputs"]["properties"], [], False) + [""]
    out += ["## Types", ""]
    for token, t in doc["types"].items():
        name = token.rsplit(":", 1)[-1]
        out += [f"### {name}", "", _one_line(t.get("description")), ""]
        if "enum" in t:
            out += [
                "| value | description |",
                "|---|---|",
                *(f"| `{e['value']}` | {_one_line(e.get('description'))} |" for e in t["enum"]),
            ]
        else:
            out += _table(t.get("properties", {}), t.get("required", []), True)
        out.append("")
    out += ["## Whole platforms from a stack config (Python)", "", STACK_CONFIG, ""]
    import importlib

    out += ["## The platforms' pieces (Python)", "", "| component | module | what it is |", "|---|---|---|"]
    for module, cls_name in PIECES:
        cls = getattr(importlib.import_module(module), cls_name)
        out.append(f"| `{cls_name}` | `{module}` | {_one_line(cls.__doc__)} |")
    out += ["", FUNCTIONS]
    return "\n".join(out).rstrip() + "\n"
