"""Which pip extra brings which cloud SDK, and the one clear error when it is missing.

`pip install gpuplane[gcp]` brings pulumi-gcp only and `gpuplane[aws]` pulumi-aws and pulumi-eks only (see
`[project.optional-dependencies]` in pyproject.toml), so the cloud SDKs are imported lazily: `gpuplane.gcp` and
`gpuplane.aws` import theirs, nothing else in gpuplane does; `gpuplane[deployments]` brings pulumi-pulumiservice, which
only `gpuplane.fleet.deployments` imports.
"""

from __future__ import annotations

import importlib

EXTRA_OF = {"pulumi_gcp": "gcp", "pulumi_aws": "aws", "pulumi_eks": "aws", "pulumi_pulumiservice": "deployments"}
"""Cloud SDK module -> the gpuplane extra that installs its distribution."""


def hint(exc: ModuleNotFoundError) -> str | None:
    """`pip install 'gpuplane[aws]'`-style advice when `exc` is a cloud SDK an extra brings, else None."""
    top = (exc.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return f"{top} is not installed: pip install 'gpuplane[{extra}]' (or 'gpuplane[all]')"


def require(extra: str) -> None:
    """Import the SDKs of one extra, or raise ModuleNotFoundError saying which extra to install."""
    for module, of in EXTRA_OF.items():
        if of != extra:
            continue
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] != module:
                raise
            raise ModuleNotFoundError(f"gpuplane.{extra} needs {module}; {hint(exc)}", name=module) from None
