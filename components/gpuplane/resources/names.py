"""Names that must fit a cloud's limits whatever cluster name the config accepts.

Pulumi autonames a resource `<logical name>-<7 hex>` and fails when that exceeds the cloud's limit
(pulumi/pulumi sdk/go/common/resource/resource_id.go `NewUniqueName`, used by the Terraform bridge's
`AutoName`). Logical names start with the cluster name (up to 40 characters), so a long cluster name
overflows an IAM role's 64. `fit_autoname` keeps autonaming where it fits (so nothing already deployed is
renamed) and otherwise gives a deterministic explicit name with a hash of the full logical name.
"""

from __future__ import annotations

import hashlib

from ..catalog.names import AUTONAME_SUFFIX, GLOBAL_NAMES

ROLE = "aws:iam/role:Role"


def fit_autoname(logical: str, type_token: str) -> str | None:
    """None when Pulumi's autoname of `logical` fits `type_token`'s name limit, else an explicit name
    `<prefix>-<6 hex>` within the limit, unique per logical name."""
    limit = GLOBAL_NAMES[type_token].max_len
    if len(logical) + AUTONAME_SUFFIX <= limit:
        return None
    return _shortened(logical, limit)


def _shortened(logical: str, limit: int) -> str:
    digest = hashlib.sha256(logical.encode()).hexdigest()[:6]
    return f"{logical[: limit - len(digest) - 1].rstrip('-')}-{digest}"


def fit_prefix(logical: str, type_token: str) -> str:
    """A name prefix `<logical>-` for a type whose provider completes prefixes (`nodeGroupNamePrefix`), so
    that a replacement gets a new physical name and can be created before the old one is deleted. Where
    `<logical>-` plus the provider's suffix would pass the cloud's limit, the logical name is shortened
    with 6 hex of its SHA-256 (unique per logical name)."""
    spec = GLOBAL_NAMES[type_token]
    limit = spec.max_len - spec.prefix_suffix - 1
    return (logical if len(logical) <= limit else _shortened(logical, limit)) + "-"
