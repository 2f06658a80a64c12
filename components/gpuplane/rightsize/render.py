"""The rightsizing report as a text table (the default) or JSON with camelCase keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..monitoring.cost import HOURS_PER_MONTH
from .observe import Workload
from .recommend import Advice, Choice, PoolAdvice
from .report import Report, window_end
from .rules import WORKLOAD_RULE, confidence_rule, verdict


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits) + 0.0


def coverage(samples: int, expected: int, first: float, last: float) -> dict[str, Any]:
    gaps = max(0.0, 1 - samples / expected) if expected else 1.0
    hours = max(0.0, last - first) / 3600
    return {
        "samples": samples,
        "expectedSamples": expected,
        "gaps": round(gaps, 4),
        "observedHours": round(hours, 2),
        "verdict": verdict(hours, gaps),
    }


def overall(workloads: Sequence[Workload]) -> dict[str, Any]:
    """Coverage of every held GPU together (the stack's verdict)."""
    if not workloads:
        return coverage(0, 0, 0.0, 0.0)
    return coverage(
        sum(w.samples for w in workloads),
        sum(w.expected_samples for w in workloads),
        min(w.first for w in workloads),
        max(w.last for w in workloads),
    )


def _choice(c: Choice) -> dict[str, Any]:
    return {
        "shape": c.label,
        "kind": c.shape.kind,
        "gpu": c.shape.gpu,
        "detail": c.shape.detail,
        "spot": c.spot,
        "usdPerHour": _round(c.usd_per_hour, 4),
    }


def workload_json(a: Advice) -> dict[str, Any]:
    w = a.workload
    return {
        "cluster": w.cluster,
        "namespace": w.namespace,
        "workload": w.name,
        "pool": w.pool,
        "poolFrom": w.pool_from or None,
        "gpu": w.gpu,
        "pods": w.pods,
        "gpusPerPod": w.gpus_per_pod,
        "peakMemoryGib": _round(w.memory_peak_gib),
        "memoryGib": _round(w.memory_total_gib),
        "peakUtilPercent": _round(w.util_peak, 1),
        "p95UtilPercent": _round(w.util_p95, 1),
        "gpuHours": _round(w.gpu_hours),
        "action": a.action,
        "current": _choice(a.current),
        "target": _choice(a.target),
        "usdPerMonthSaved": a.usd_per_month_saved,
        "reason": a.reason,
        "confidence": coverage(w.samples, w.expected_samples, w.first, w.last),
    }


def pool_json(p: PoolAdvice) -> dict[str, Any]:
    use = p.use
    return {
        "cluster": p.cluster,
        "region": p.region,
        "pool": p.pool.name,
        "gpu": p.pool.gpu,
        "minNodes": p.floor,
        "reservedNodes": p.reserved,
        "maxNodes": p.pool.maxNodes,
        "peakNodes": None if use is None else use.peak_nodes,
        "peakBusyNodes": None if use is None else use.peak_busy_nodes,
        "peakGpus": None if use is None else use.peak_gpus,
        "recommendedFloor": p.recommended_floor,
        "usdPerMonthSaved": p.usd_per_month_saved,
        "advice": list(p.advice),
    }


def unpriced(r: Report) -> list[str]:
    """Changes whose saving the price table cannot say."""
    out = [
        f"{a.workload.namespace}/{a.workload.name}"
        for a in r.workloads
        if _changes(a) and a.usd_per_month_saved is None
    ]
    return out + [
        f"pool {p.pool.name}" for p in r.pools if p.recommended_floor is not None and p.usd_per_month_saved is None
    ]


def _changes(a: Advice) -> bool:
    return a.action not in ("keep", "nothing-smaller", "unknown")


def total(r: Report) -> float:
    saved = [a.usd_per_month_saved for a in r.workloads] + [p.usd_per_month_saved for p in r.pools]
    return round(sum(s for s in saved if s), 2) + 0.0


def to_json(r: Report) -> dict[str, Any]:
    s = r.settings
    return {
        "stack": r.stack,
        "prometheus": r.url,
        "integration": r.integration,
        "window": s.window.text,
        "observedHours": round(r.observed_hours, 2),
        "step": s.window.step,
        "end": window_end(s.at),
        "scrapeIntervalSeconds": s.interval,
        "margin": s.margin,
        "hoursPerMonth": HOURS_PER_MONTH,
        "confidence": overall([a.workload for a in r.workloads]),
        "workloads": [workload_json(a) for a in r.workloads],
        "pools": [pool_json(p) for p in r.pools],
        "totals": {"usdPerMonthSaved": total(r), "unpriced": unpriced(r)},
        "rules": {
            "confidence": confidence_rule(),
            "workloadName": WORKLOAD_RULE,
            "prices": r.prices,
        },
        "notes": list(r.notes),
        "queries": dict(r.queries),
    }


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _money(value: float | None) -> str:
    return "unpriced" if value is None else f"{value:,.2f}"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _percent(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.0f}%"


def to_text(r: Report) -> str:
    s, doc = r.settings, to_json(r)
    lines = [
        f"Rightsizing {r.stack} from {r.url} ({r.integration} labels): {s.window.text} to {window_end(s.at)} "
        f"({doc['observedHours']:g} h of GPU series held), step {s.window.step}, scrape interval {s.interval:g}s, "
        f"margin {s.margin:.0%}",
        "",
        "Workloads",
    ]
    rows = [
        [
            "namespace",
            "workload",
            "pool",
            "pods",
            "GiB peak",
            "util peak",
            "p95",
            "now",
            "recommend",
            "$/month saved",
            "confidence",
        ]
    ]
    for a, w in zip(r.workloads, doc["workloads"], strict=True):
        c = w["confidence"]
        rows.append(
            [
                w["namespace"],
                w["workload"],
                f"{w['pool'] or '-'}" + ("*" if w["poolFrom"] == "gpu model" else ""),
                str(w["pods"]),
                _num(w["peakMemoryGib"]),
                _percent(w["peakUtilPercent"]),
                _percent(w["p95UtilPercent"]),
                a.current.label,
                a.action if a.action in ("keep", "nothing-smaller", "unknown") else a.target.label,
                _money(a.usd_per_month_saved) if _changes(a) else "-",
                f"{c['verdict']} ({c['samples']} samples, {c['gaps']:.0%} gaps, {c['observedHours']:g} h)",
            ]
        )
    lines += _table(rows) if r.workloads else ["  (none)"]
    lines += [f"  {a.workload.namespace}/{a.workload.name}: {a.reason}" for a in r.workloads]
    if any(a.workload.pool_from == "gpu model" for a in r.workloads):
        lines.append("  * pool found by the GPU's model name (its node matched no pool in kube_node_labels)")
    lines += ["", "Pools"]
    rows = [
        [
            "cluster",
            "pool",
            "gpu",
            "floor",
            "reserved",
            "max",
            "peak nodes",
            "busy",
            "GPUs held",
            "floor to",
            "$/month saved",
        ]
    ]
    for p in doc["pools"]:
        rows.append(
            [
                p["cluster"],
                p["pool"],
                p["gpu"],
                str(p["minNodes"]),
                str(p["reservedNodes"]),
                str(p["maxNodes"]),
                *(
                    "-" if p[k] is None else str(p[k])
                    for k in ("peakNodes", "peakBusyNodes", "peakGpus", "recommendedFloor")
                ),
                "-" if p["recommendedFloor"] is None else _money(p["usdPerMonthSaved"]),
            ]
        )
    lines += _table(rows)
    lines += [f"  {p['pool']} ({p['cluster']}): {a}" for p in doc["pools"] for a in p["advice"]]
    c = doc["confidence"]
    lines += [
        "",
        f"Saved per month: ${total(r):,.2f} ({HOURS_PER_MONTH} h a month, scaled from {doc['observedHours']:g} h "
        f"observed; prices: {r.prices})"
        + (f"; unpriced: {', '.join(doc['totals']['unpriced'])}" if doc["totals"]["unpriced"] else ""),
        f"Confidence: {c['verdict']}: {c['samples']} of {c['expectedSamples']} expected samples ({c['gaps']:.0%} gaps) "
        f"over {c['observedHours']:g} h; {confidence_rule()}",
        *(f"Note: {n}" for n in r.notes),
    ]
    return "\n".join(lines)


__all__ = ["pool_json", "to_json", "to_text", "workload_json"]
