"""The deploy simulator: walk an offline plan in dependency order, as `pulumi up` would, and report
what would fail on a real first deploy. The rules are tables in `rules` and `scheduling`, each with
its upstream source; this module only applies them.

What it cannot know: cloud quotas and capacity (a GPU type sold out in a zone), IAM propagation
delays, and anything a chart's templates do that `scheduling.CHART_PODS` does not describe.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from ...config.model import StackConfig
from ..mocks_engine import helm_release_name, kubernetes_name
from ..runner import Plan, PlannedResource
from . import autoscaling, claims, multikueue, readback, rules, scheduling, volumes
from .clusters import cluster_of, nodes_for, pod_nodes
from .clusters import clusters as clusters  # re-exported: the simulator's API
from .clusters import nodes_of as nodes_of
from .graph import DeployGraph, at_path, provider_urn, switch


@dataclass(frozen=True)
class Violation:
    """One thing a real `pulumi up` would trip over."""

    rule: str
    urn: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.urn}\n    {self.message}\n    fix: {self.fix}"


class DeployCheckError(Exception):
    """The plan would not deploy; `violations` says why."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        super().__init__(f"{len(violations)} deploy check(s) failed:\n" + "\n".join(str(v) for v in violations))


def check_cluster_scoped(g: DeployGraph) -> Iterator[Violation]:
    for r in g.plan.resources:
        spec = rules.CLUSTER_SCOPED.get(r.type)
        c = cluster_of(g.plan, r)
        if spec is None or c is None or g.waits_for(r.urn, c.urn):
            continue
        yield Violation(
            "cluster-scoped-waits-for-cluster",
            r.urn,
            f"{r.type} names cluster {r.inputs.get(spec.cluster_input)!r} but does not depend on {c.urn}: the engine "
            f"may create it first ({spec.source})",
            "pass the cluster resource's output (e.g. its name or ID Output), not a config string",
        )


def _group(type_: str) -> str:
    """`kubernetes:monitoring.coreos.com/v1:ServiceMonitor` -> `monitoring.coreos.com`."""
    return type_.split(":", 2)[1].rsplit("/", 1)[0]


def crd_installers(g: DeployGraph) -> dict[str, list[str]]:
    """API group -> URNs of what installs its CRDs in this plan (charts, CRD objects, the platform)."""
    out: dict[str, list[str]] = {}
    for r in g.plan.resources:
        groups: tuple[str, ...] = ()
        if r.type == "kubernetes:helm.sh/v3:Release":
            spec = rules.CHART_CRDS.get(scheduling.chart_key(str(r.inputs.get("chart", ""))))
            if spec is not None:
                on = spec.enabled is None or switch(r.inputs.get("values") or {}, *spec.enabled)
                skipped = spec.unless_skip_crds and bool(r.inputs.get("skipCrds"))
                groups = spec.groups if on and not skipped else ()
        elif r.type == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition":
            groups = (str(at_path(r.inputs, "spec.group")),)
        for p in rules.PLATFORM_CRDS.get(r.type, ()):
            if at_path(r.inputs, p.when[0]) == p.when[1]:
                groups += p.groups
        for grp in groups:
            out.setdefault(grp, []).append(r.urn)
    return out


def _needs(g: DeployGraph) -> Iterator[tuple[PlannedResource, str, str]]:
    """(resource, API group, why) for every custom resource and every chart value that needs a CRD."""
    for r in g.plan.resources:
        if r.type == "kubernetes:helm.sh/v3:Release":
            values = r.inputs.get("values") or {}
            for need in rules.CHART_NEEDS.get(scheduling.chart_key(str(r.inputs.get("chart", ""))), ()):
                if switch(values, need.path, need.default) is True:
                    yield r, need.group, f"values `{need.path}` is on ({need.source})"
        elif r.custom and r.type.startswith("kubernetes:") and _group(r.type) not in rules.BUILTIN_GROUPS:
            yield r, _group(r.type), f"{r.type.rsplit(':', 1)[-1]} is a custom resource"


def check_crds(g: DeployGraph, existing: Collection[str] = ()) -> Iterator[Violation]:
    installers = crd_installers(g)
    for r, group, why in _needs(g):
        if group in existing:
            continue
        mine = [u for u in installers.get(group, []) if u != r.urn]
        if any(g.waits_for(r.urn, u) for u in mine):
            continue
        if mine:
            msg = f"{why}; its CRD ({group}) comes from {', '.join(mine)}, which it does not wait for"
            fix = "add the CRD installer to depends_on"
        else:
            msg = f"{why}; nothing in this stack installs the {group} CRDs, so the API server rejects it"
            fix = f"install the {group} CRDs in the stack, or state that the cluster already has them"
        yield Violation("custom-resource-waits-for-crd", r.urn, msg, fix)


def check_scheduling(g: DeployGraph) -> Iterator[Violation]:
    cache: dict[str, list[scheduling.NodeShape] | None] = {}
    for pod in scheduling.pod_templates(g.plan):
        shapes = pod_nodes(g, pod, cache)
        if shapes is None or pod.optional or any(scheduling.fits(pod.spec, s) for s in shapes):
            continue
        sel = {k: pod.spec.get(k) for k in ("nodeSelector", "tolerations", "affinity") if pod.spec.get(k)}
        yield Violation(
            "workload-schedulable",
            pod.urn,
            f"{pod.name} would stay Pending: no node of the cluster matches {sel} "
            f"(nodes: {', '.join(s.source.rsplit('::', 1)[-1] for s in shapes) or 'none'})",
            "select labels and tolerate taints that a node pool, node group or NodePool of the stack has",
        )


def check_daemonsets(g: DeployGraph) -> Iterator[Violation]:
    """A DaemonSet must run on every node it selects: a node it selects but whose taint it does not
    tolerate gets no pod (a GPU node without its exporter has no metrics)."""
    cache: dict[str, list[scheduling.NodeShape] | None] = {}
    for pod in scheduling.pod_templates(g.plan):
        if not pod.daemonset:
            continue
        for shape in pod_nodes(g, pod, cache) or []:
            if shape.wildcard or not scheduling.selects(pod.spec, shape):
                continue
            missing = scheduling.untolerated(pod.spec, shape)
            if missing:
                taints = ", ".join(f"{k}={v}:{e}" for k, v, e in missing)
                yield Violation(
                    "daemonset-covers-its-nodes",
                    pod.urn,
                    f"{pod.name} selects {shape.source.rsplit('::', 1)[-1]} but does not tolerate its taints "
                    f"{taints}: those nodes get no pod",
                    "tolerate every taint of the nodes the DaemonSet selects (or stop selecting them)",
                )


def _scope(g: DeployGraph, r: PlannedResource, keys: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for k in keys:
        if k == "region":
            refs = [r.provider, *(p for _, p in r.providers)]
            prov = next((g.by_urn.get(provider_urn(p) or "") for p in refs if p), None)
            out.append(str((prov.inputs if prov else {}).get("region", "")))
        elif k == "cluster":
            c = cluster_of(g.plan, r)
            out.append(c.urn if c else str(r.inputs.get("cluster", r.inputs.get("clusterName", ""))))
        else:
            out.append(str(r.inputs.get(k, "")))
    return tuple(out)


def check_names(g: DeployGraph) -> Iterator[Violation]:
    seen: dict[tuple[str, tuple[str, ...], str], str] = {}
    for r in g.plan.resources:
        spec = rules.GLOBAL_NAMES.get(r.type)
        if spec is None:
            continue
        given = r.inputs.get(spec.input)
        prefix = r.inputs.get(spec.prefix_input) if spec.prefix_input else None
        if given is None and prefix is None and not spec.autoname:
            continue
        if given is not None:
            name, what = str(given), f"{spec.input} {given!r}"
        elif prefix is not None:
            name = str(prefix) + "0" * spec.prefix_suffix
            what = f"{spec.prefix_input} {prefix!r} + {spec.prefix_suffix} characters"
        else:
            name = r.name + "-" + "0" * (rules.AUTONAME_SUFFIX - 1)
            what = f"autoname {r.name!r}-<7 hex>"
        if not (spec.min_len <= len(name) <= spec.max_len) or not re.match(spec.pattern, name):
            yield Violation(
                "global-name-valid",
                r.urn,
                f"{what} is not a valid name: {spec.min_len}-{spec.max_len} characters matching {spec.pattern} "
                f"({spec.source})",
                "shorten the cluster or pool name, or derive this name with a hash suffix",
            )
        if given is None:
            continue
        key = (r.type, _scope(g, r, spec.scope), name)
        if key in seen:
            yield Violation(
                "global-name-unique",
                r.urn,
                f"{what} is also used by {seen[key]} in the same scope {dict(zip(spec.scope, key[1], strict=True))} "
                f"({spec.source})",
                "make the name unique (include the region or a hash of the full cluster name)",
            )
        else:
            seen[key] = r.urn


def check_kubernetes_names(g: DeployGraph) -> Iterator[Violation]:
    """Two objects of one kind with one name and namespace in one cluster are one object: the second
    create fails with AlreadyExists (Helm: `cannot re-use a name that is still in use`)."""
    seen: dict[tuple[str, ...], str] = {}
    for r in g.plan.resources:
        if not (r.custom and r.type.startswith("kubernetes:")):
            continue
        if r.type == "kubernetes:helm.sh/v3:Release":
            ns, name = str(r.inputs.get("namespace", "default")), helm_release_name(r.inputs, r.name)
        else:
            meta = r.inputs.get("metadata") or {}
            ns = "" if r.type.rsplit(":", 1)[-1] in rules.CLUSTER_SCOPED_KINDS else str(meta.get("namespace", ""))
            name = kubernetes_name(meta, r.name)
        key = (provider_urn(r.provider) or "", r.type, ns, name)
        if key in seen:
            yield Violation(
                "kubernetes-name-unique",
                r.urn,
                f"{r.type} {ns + '/' if ns else ''}{name} is also created by {seen[key]} on the same cluster",
                "give one of them another name",
            )
        else:
            seen[key] = r.urn


def _other_sources(rule: Mapping[str, object]) -> bool:
    """A security group rule that also admits sources other than its own group (EC2 IpPermission: CIDR
    ranges, prefix lists and other groups besides `self`)."""
    return any(rule.get(k) for k in ("cidrBlocks", "ipv6CidrBlocks", "prefixListIds", "securityGroups"))


def _security_group_kinds(g: DeployGraph) -> dict[str, str]:
    """Security group ID -> kind (`rules.NODE_SECURITY_GROUPS`), for the groups this plan can tell apart:
    each EKS cluster's own and pulumi-eks's, and the plan's groups whose rules only name themselves."""
    from ..mocks_aws import ec2_id, eks_cluster_security_group, pulumi_eks_cluster_security_group

    kinds: dict[str, str] = {}
    for c in g.plan.by_type("eks:index:Cluster"):
        name = str(c.inputs.get("name", c.name))
        kinds[eks_cluster_security_group(name)] = "eks-cluster"
        kinds[pulumi_eks_cluster_security_group(name)] = "pulumi-eks-cluster"
    targeted = {
        str(r.inputs.get("securityGroupId")) for r in g.plan.by_type("aws:ec2/securityGroupRule:SecurityGroupRule")
    }
    for sg in g.plan.by_type("aws:ec2/securityGroup:SecurityGroup"):
        sg_id = ec2_id(sg.type, sg.name)
        rules_ = [*(sg.inputs.get("ingress") or []), *(sg.inputs.get("egress") or [])]
        if sg_id not in targeted and rules_ and all(r.get("self") and not _other_sources(r) for r in rules_):
            kinds[sg_id] = "self-only"
    return kinds


def _named_security_groups(lt: PlannedResource) -> list[str]:
    nics = lt.inputs.get("networkInterfaces") or []
    return [*(lt.inputs.get("vpcSecurityGroupIds") or []), *(s for n in nics for s in n.get("securityGroups") or [])]


def check_node_security_groups(g: DeployGraph) -> Iterator[Violation]:
    """A node launch template that names security groups must name one that reaches the control plane."""
    kinds = _security_group_kinds(g)
    for lt in g.plan.by_type("aws:ec2/launchTemplate:LaunchTemplate"):
        named = sorted(set(_named_security_groups(lt)))
        if not named or any(s not in kinds for s in named):
            continue  # EKS adds its own group, or a group of yours this plan cannot read
        if any(rules.NODE_SECURITY_GROUPS[kinds[s]].reaches_control_plane for s in named):
            continue
        why = "; ".join(f"{s} ({kinds[s]}: {rules.NODE_SECURITY_GROUPS[kinds[s]].source})" for s in named)
        yield Violation(
            "nodes-reach-control-plane",
            lt.urn,
            f"the launch template names security groups {', '.join(named)}, so EKS adds no cluster security group, "
            f"and none of them lets kubelet and the control plane reach each other: {why}",
            "add the cluster security group EKS created (eksCluster.vpcConfig.clusterSecurityGroupId)",
        )


JOB_AWAIT_SECONDS = 600
"""How long pulumi-kubernetes waits for a Job to complete unless `customTimeouts` say otherwise
(pulumi/pulumi-kubernetes provider/pkg/await/job.go `DefaultJobTimeoutMins = 10`); the annotation
`pulumi.com/skipAwait: "true"` turns the wait off."""


_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)"


def go_duration(text: str) -> float | None:
    """Seconds of a Go duration (`65m`, `1h5m`, `500ms`, `.5h`, `-1.5h`, `0`), as Pulumi's customTimeouts take
    them (Go time.ParseDuration: an optional sign, then numbers each with a unit, or a lone 0); None if not one."""
    m = re.fullmatch(rf"([-+]?)((?:{_GO_PART})+|0)", text)
    if m is None:
        return None
    seconds = sum(float(n) * _GO_UNITS[u] for n, u in re.findall(_GO_PART, m.group(2)))
    return -seconds if m.group(1) == "-" else seconds


def check_job_awaits(g: DeployGraph) -> Iterator[Violation]:
    """A Job pulumi waits for must be allowed to run to its own deadline: otherwise `pulumi up` fails while the
    Job (a GPU pool scaling up from zero, then a check) is still running as intended."""
    for r in g.plan.resources:
        if r.type != "kubernetes:batch/v1:Job":
            continue
        annotations = (r.inputs.get("metadata") or {}).get("annotations") or {}
        deadline = (r.inputs.get("spec") or {}).get("activeDeadlineSeconds")
        if annotations.get("pulumi.com/skipAwait") == "true" or not isinstance(deadline, int | float):
            continue
        given = r.custom_timeouts.get("create")
        wait = go_duration(given) if given else JOB_AWAIT_SECONDS
        if wait is not None and wait < deadline:
            yield Violation(
                "job-awaited-to-its-deadline",
                r.urn,
                f"pulumi up waits {wait:g} s for {r.name} (customTimeouts.create {given or 'unset: 10m'}), but the Job "
                f"may run {deadline} s (activeDeadlineSeconds): the update fails while it still runs",
                "give the Job customTimeouts (create and update) beyond its activeDeadlineSeconds, or skipAwait",
            )


def check_second_up(g: DeployGraph, rerun: bool = True) -> Iterator[Violation]:
    """After create and a refresh, the same program's next `up` must change nothing (`readback.READ_BACK`).
    `rerun`: run a program that read live state again against what the first `up` left; without, fields it
    read live are taken to be sent back as stored (`ReadBack.followed_by`)."""
    for d in readback.second_up(g.plan, None if rerun else g.plan):
        yield Violation(
            "second-up-no-op",
            d.urn,
            f"{d.message()}: {', '.join(d.paths)}",
            d.rule.fix,
        )


def check_kubernetes_providers(g: DeployGraph) -> Iterator[Violation]:
    """A Kubernetes resource without an explicit provider goes to the default provider, which reads the
    ambient kubeconfig (`KUBECONFIG`, `~/.kube/config`: pulumi-kubernetes provider docs), whatever cluster
    the machine running `pulumi up` points at."""
    for r in g.plan.resources:
        if r.custom and r.type.startswith("kubernetes:") and not r.provider:
            yield Violation(
                "kubernetes-explicit-provider",
                r.urn,
                f"{r.type} has no provider: it would go to whatever cluster the ambient kubeconfig points at",
                "pass `opts=ResourceOptions(provider=...)` (a platform's `k8s_provider`, or "
                "gpuplane.kubernetes_provider for your own cluster) to it or to its component",
            )


def check(plan: Plan, existing_crds: Collection[str] = (), rerun: bool = True) -> list[Violation]:
    """Every rule over the plan; `existing_crds` lists API groups the user states the cluster already has.
    `rerun=False` skips running the program a second time for `second-up-no-op` (plain `gpuplane plan`)."""
    g = DeployGraph(plan)
    return [
        *check_cluster_scoped(g),
        *check_crds(g, existing_crds),
        *check_scheduling(g),
        *check_daemonsets(g),
        *check_names(g),
        *check_kubernetes_names(g),
        *check_node_security_groups(g),
        *check_kubernetes_providers(g),
        *check_job_awaits(g),
        *(Violation(*v) for v in claims.check_claims(g, nodes_for)),
        *(Violation(*v) for v in autoscaling.check_scale_targets(g)),
        *(Violation(*v) for v in autoscaling.check_scaler_queries(g)),
        *(Violation(*v) for v in volumes.check_claims_bind(g)),
        *(Violation(*v) for v in volumes.check_volume_drivers(g)),
        *(Violation(*v) for v in volumes.check_pod_identities(g)),
        *(Violation(*v) for v in multikueue.check_multikueue_secrets(g)),
        *check_second_up(g, rerun),
    ]


def stated_crds(cfg: StackConfig) -> frozenset[str]:
    """API groups the stack's config states the cluster already has (so nothing installs them):
    `monitoring.prometheusOperatorCrds: existing` states the prometheus-operator CRDs; a fleet's central stack with
    `fleet.multikueue` states Kueue's (the manager region's stack installs them)."""
    stated = set()
    if cfg.monitoring.prometheusOperatorCrds == "existing":
        stated.add("monitoring.coreos.com")
    if cfg.fleet is not None and cfg.fleet.multikueue is not None and cfg.fleetStack == "central":
        # the central stack's MultiKueue objects go to the manager region's cluster, whose own stack installs Kueue
        # (`gpuplane fleet up` runs the region stacks first)
        stated.add("kueue.x-k8s.io")
    return frozenset(stated)


RULES = {
    "cluster-scoped-waits-for-cluster": "cloud resources inside a cluster depend on the cluster resource",
    "custom-resource-waits-for-crd": "custom resources (and charts that create them) wait for their CRD",
    "workload-schedulable": "every pod template gpuplane configures fits a node the cluster will have",
    "daemonset-covers-its-nodes": "a DaemonSet tolerates every node it selects (GPU agents reach every GPU node)",
    "global-name-valid": "account/project-wide names are valid, autonames included",
    "global-name-unique": "account/project-wide names are unique in their scope",
    "kubernetes-name-unique": "no two Kubernetes objects or releases share kind, namespace and name",
    "nodes-reach-control-plane": "node launch templates that name security groups include one that reaches the "
    "EKS control plane",
    "kubernetes-explicit-provider": "every Kubernetes resource names its provider (none uses the ambient kubeconfig)",
    "second-up-no-op": "after create and a refresh, a second `up` changes nothing (read-back rules)",
    "claim-device-class-exists": "a GPU claim's DeviceClass is created by the NVIDIA DRA driver on its cluster",
    "claim-lands-on-dra-pool": "a pod that claims GPUs lands only on nodes where the DRA driver's kubelet plugin runs",
    "job-awaited-to-its-deadline": "pulumi up waits for a Job (customTimeouts) at least as long as it may run",
    "scale-target-exists": "a KEDA ScaledObject's Deployment is in the plan, or annotated as existing outside it",
    "scaler-query-scraped": "a ScaledObject's Prometheus query names series the cluster's integration scrapes, by "
    "labels that integration writes",
    "claim-binds": "a PersistentVolumeClaim's StorageClass exists, or its static volume is in the plan, reserved for "
    "it and created first",
    "volume-driver-installed": "a PersistentVolume's CSI driver is installed on its cluster",
    "pod-identity-unique": "one EKS Pod Identity association per cluster, namespace and service account",
    "pod-identity-agent": "a cluster with Pod Identity associations runs the EKS Pod Identity agent",
    "multikueue-secret-first": "a MultiKueueCluster's kubeconfig Secret is in Kueue's namespace of its cluster and "
    "created first",
}
"""Rule name -> what it checks (README and `gpuplane plan --check` list them)."""
