"""A fleet run as a stack per region plus a central stack (`gpuplane:fleetStack`, docs/fleets.md).

Every part carries the fleet's own config (`gpuplane:fleet` unchanged), so each computes the same spread; a region's
part builds that region's platform as an ordinary stack, the central part what is fleet-wide: the fleet scrape job and
rules, and the regions' kubeconfigs (secret), read from the region stacks through `pulumi.StackReference`s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pulumi

from ..config.model import StackConfig
from ..monitoring.scrape import fleet_scrape_yaml
from ..monitoring.wiring import fleet_rules
from .fleet import region_configs

CENTRAL = "central"
READS = ("clusterName", "kubeconfig", "scrapeConfig", "prometheusRules", "multikueueKubeconfig")
"""The region stacks' outputs the central part reads."""
DEFAULT_ORGANIZATION = "organization"
"""What the engine calls the organization of a self-managed backend's stacks (and gpuplane's offline plans)."""


def part_name(fleet_stack: str, part: str) -> str:
    """The Pulumi stack name of one part of the fleet stack `fleet_stack`: `<fleet_stack>-<region>` or
    `<fleet_stack>-central`."""
    return f"{fleet_stack}-{part}"


def fleet_stack_of(stack: str, part: str) -> str:
    """The fleet stack a part's stack name was made from."""
    return stack.removesuffix(f"-{part}")


def reference(organization: str | None, project: str, stack: str) -> str:
    """A `pulumi.StackReference` name: `<organization>/<project>/<stack>`."""
    return f"{organization or DEFAULT_ORGANIZATION}/{project}/{stack}"


def region_part(cfg: StackConfig, builder: Callable[..., dict[str, object]]) -> dict[str, object]:
    """A region's part: its platform, at the top of the stack, with that region's share."""
    ((_, rcfg),) = region_configs(cfg)
    return builder(rcfg)


def central_part(cfg: StackConfig) -> dict[str, object]:
    """The central part: the regions' stack outputs it needs, read through stack references, as the fleet's outputs
    (`regions`, `clusters`, `kubeconfigs` (secret), `scrapeConfig` with a job per cluster, `prometheusRules`)."""
    assert cfg.fleet is not None
    base = fleet_stack_of(pulumi.get_stack(), CENTRAL)
    regions = [r.region for r in cfg.fleet.regions]
    refs = {
        r: pulumi.StackReference(
            f"{cfg.cluster.name}-{r}-stack",
            reference(pulumi.get_organization(), pulumi.get_project(), part_name(base, r)),
        )
        for r in regions
    }
    configs = [c for _, c in region_configs(cfg)]
    # require_output: a region stack that was never updated has no outputs yet, and the update says which is missing
    scrape = pulumi.Output.all(*(refs[r].require_output("scrapeConfig") for r in regions)).apply(
        lambda texts: fleet_scrape_yaml(
            {f"{cfg.cluster.name}-{r}": str(t) for r, t in zip(regions, texts, strict=True)}
        )
    )
    rules = refs[regions[0]].require_output("prometheusRules").apply(lambda text: fleet_rules(str(text), configs))
    stacks = {r: part_name(base, r) for r in regions}
    if cfg.fleet.deployments is not None:  # Pulumi Cloud runs the region stacks (imported only then: an extra)
        from ..fleet.deployments import deployment_resources

        deployment_resources(
            f"{cfg.cluster.name}-deployments", cfg, pulumi.get_project(), stacks, pulumi.ResourceOptions()
        )
    queues = {}
    if cfg.fleet.multikueue is not None:  # the manager's MultiKueue, reaching each worker through its stack's output
        from .multikueue import manager, manager_region, worker_regions

        head = str(manager_region(cfg))
        workers = {r: refs[r].require_output("multikueueKubeconfig") for r in worker_regions(cfg)}
        region_cfgs = dict(region_configs(cfg))
        queues = {
            "multikueue": manager(cfg.cluster.name, cfg, region_cfgs, refs[head].require_output("kubeconfig"), workers)
        }
    return {
        **queues,
        "platform": cfg.platform,
        "regions": regions,
        "stacks": stacks,
        "clusters": {r: refs[r].require_output("clusterName") for r in regions},
        "kubeconfigs": pulumi.Output.secret({r: refs[r].require_output("kubeconfig") for r in regions}),
        "scrapeConfig": scrape,
        "prometheusRules": rules,
    }


def references_for_central(
    project: str,
    fleet_stack: str,
    outputs: Mapping[str, Mapping[str, Any]],
    secret: Sequence[str] = ("kubeconfig", "multikueueKubeconfig"),
) -> dict[str, dict[str, Any]]:
    """`gpuplane:stackReferences` for an offline plan of the central part: region -> the plan's stack outputs the
    central part reads (`READS`: the rest would only weigh on the plan), keyed by the reference name the program
    makes; `secret` outputs marked as the region stacks keep them."""
    return {
        reference(None, project, part_name(fleet_stack, region)): {
            k: ({"secure": v} if k in secret else v) for k, v in outs.items() if k in READS
        }
        for region, outs in outputs.items()
    }
