"""Names that must fit a cloud's limits whatever cluster name the config accepts.

Pulumi autonames a resource `<logical name>-<7 hex>` and fails when that exceeds the cloud's limit
(pulumi/pulumi sdk/go/common/resource/resource_id.go `NewUniqueName`, used by the Terraform bridge's
`AutoName`). Logical names start with the cluster name (up to 40 characters), so a long cluster name
overflows an IAM role's 64. `fit_autoname` keeps autonaming where it fits (so nothing already deployed is
renamed) and otherwise gives a deterministic explicit name with a hash of the full logical name.
"""

from __future__ import annotations

import hashlib

from .plan.deploy.rules import AUTONAME_SUFFIX, GLOBAL_NAMES

ROLE = "aws:iam/role:Role"


def fit_autoname(logical: str, type_token: str) -> str | None:
    """None when Pulumi's autoname of `logical` fits `type_token`'s name limit, else an explicit name
    `<prefix>-<6 hex>` within the limit, unique per logical name."""
    limit = GLOBAL_NAMES[type_token].max_len
    if len(logical) + AUTONAME_SUFFIX <= limit:
        return None
    digest = hashlib.sha256(logical.encode()).hexdigest()[:6]
    return f"{logical[: limit - len(digest) - 1].rstrip('-')}-{digest}"
