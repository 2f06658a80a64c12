"""Read the post-deploy checks' output and judge it per pool (`gpuplane validate STACK --from LOGFILE`).

The log is what `kubectl logs --prefix` prints for the checks' pods (docs/health.md gives the commands):
each line starts `[pod/<pod>/<container>] `, and a pod's name starts with its Job's (`gpu-smoke-<pool>`,
`gpu-diag-<pool>`, `gpu-nccl-<pool>`). Formats read, each from its source:

- `nvidia-smi -L`: one `GPU <i>: <name> (UUID: GPU-...)` line per GPU (MIG devices are indented `MIG` lines).
- `dcgmi diag`: a table of `| <test> | <Pass|Fail|Warn|Skip> |` rows, per-GPU rows `| | GPU<i>: <result> |`
  (NVIDIA/DCGM dcgmi/Diag.cpp).
- `all_reduce_perf`: rows `size count type redop root time algbw busbw #wrong` (out-of-place, then in-place),
  `# Out of bounds values : <n> OK|FAILED` and `# Avg bus bandwidth : <x>` (NVIDIA/nccl-tests src/util.cu).
  The verdict uses the largest message's out-of-place busbw, as the check's own gate does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .validation import DIAG_PREFIX, NCCL_PREFIX, SMOKE_PREFIX, Check

PREFIX = re.compile(r"^\[pod/(?P<pod>[a-z0-9.-]+)/(?P<container>[a-z0-9-]+)\] ?(?P<text>.*)$")
GPU_LINE = re.compile(r"^GPU \d+: .+ \(UUID: GPU-[0-9a-fA-F-]+\)\s*$")
DIAG_ROW = re.compile(r"^\|\s*(?P<test>[^|]*?)\s*\|\s*(?:(?P<entity>GPU\d+): )?(?P<result>Pass|Fail|Warn|Skip)\b")
NCCL_ROW = re.compile(
    r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\w+)\s+(?P<redop>\w+)\s+(?P<root>-?\d+)\s+"
    r"(?P<time>[\d.]+)\s+(?P<algbw>[\d.]+)\s+(?P<busbw>[\d.]+)\s+(?P<wrong>\d+|N/A)\b"
)
OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<n>\d+)\s+(?P<verdict>OK|FAILED)")
KINDS = {SMOKE_PREFIX: "gpus", DIAG_PREFIX: "diag", NCCL_PREFIX: "nccl"}


@dataclass(frozen=True)
class Verdict:
    pool: str
    check: str
    result: str
    """`pass`, `fail`, `skipped` or `missing` (no output for a check that should have run)."""
    detail: str

    @property
    def ok(self) -> bool:
        return self.result in ("pass", "skipped")

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "check": self.check, "result": self.result, "detail": self.detail}


def split_log(lines: Iterable[str], pools: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """(pool, check kind) -> its pods' output lines, from a `kubectl logs --prefix` log. Lines without a
    prefix, or of pods that are not a check's, are ignored."""
    names = sorted(pools, key=len, reverse=True)  # `a-b` before `a`: pool names may share a prefix
    out: dict[tuple[str, str], list[str]] = {}
    for line in lines:
        m = PREFIX.match(line.rstrip("\n"))
        if m is None:
            continue
        pod = m["pod"]
        for prefix, kind in KINDS.items():
            if not pod.startswith(prefix):
                continue
            rest = pod[len(prefix) :]
            pool = next((p for p in names if rest.startswith(p + "-")), None)
            if pool is not None:
                out.setdefault((pool, kind), []).append(m["text"])
            break
    return out


def gpus_verdict(check: Check, lines: list[str]) -> Verdict:
    found = sum(1 for t in lines if GPU_LINE.match(t))
    if check.expect is None:
        ok = found >= 1
        return Verdict(check.pool, "gpus", "pass" if ok else "fail", f"{found} GPU(s) visible to a shared slice")
    ok = found == check.expect
    return Verdict(check.pool, "gpus", "pass" if ok else "fail", f"{found} of {check.expect} GPUs visible")


def diag_verdict(check: Check, lines: list[str]) -> Verdict:
    """Fail on any `Fail` row; a per-GPU row (`| | GPU<i>: Fail |`) belongs to the test row above it."""
    rows: list[tuple[str, str, str]] = []  # (test, entity, result)
    test = ""
    for m in (DIAG_ROW.match(t) for t in lines):
        if m is None:
            continue
        test = m["test"] or test
        rows.append((test, m["entity"] or "", m["result"]))
    if not rows:
        return Verdict(check.pool, "diag", "fail", "no dcgmi diag results in the output")
    failed = sorted({f"{t} ({e})" if e else t for t, e, r in rows if r == "Fail"})
    warned = sorted({t for t, e, r in rows if r == "Warn" and not e})
    passed = sum(1 for t, e, r in rows if r == "Pass" and not e)
    if failed:
        return Verdict(check.pool, "diag", "fail", f"failed: {', '.join(failed)}")
    note = f"; warnings: {', '.join(warned)}" if warned else ""
    return Verdict(check.pool, "diag", "pass", f"{passed} test(s) passed{note}")


def nccl_verdict(check: Check, lines: list[str]) -> Verdict:
    rows = [m for m in (NCCL_ROW.match(t) for t in lines) if m is not None]
    if not rows:
        return Verdict(check.pool, "nccl", "fail", "no all_reduce_perf results in the output")
    last = max(rows, key=lambda r: int(r["size"]))
    busbw = float(last["busbw"])
    wrong = sum(int(r["wrong"]) for r in rows if r["wrong"] != "N/A")
    bounds = [m for m in (OUT_OF_BOUNDS.match(t) for t in lines) if m is not None]
    problems = []
    if wrong:
        problems.append(f"{wrong} wrong value(s)")
    if any(b["verdict"] != "OK" for b in bounds):
        problems.append("out-of-bounds values")
    at = f"{busbw:g} GB/s bus bandwidth at {int(last['size'])} B"
    if check.floor is not None and busbw < check.floor:
        problems.append(f"{at} < {check.floor:g} GB/s")
    if problems:
        return Verdict(check.pool, "nccl", "fail", "; ".join(problems))
    floor = f" >= {check.floor:g} GB/s" if check.floor is not None else " (no floor: not judged)"
    return Verdict(check.pool, "nccl", "pass", at + floor)


JUDGES = {"gpus": gpus_verdict, "diag": diag_verdict, "nccl": nccl_verdict}


def judge(checks: list[Check], outputs: Mapping[tuple[str, str], list[str]]) -> list[Verdict]:
    """A verdict per check: skipped ones say why, run ones without output are `missing`."""
    out = []
    for c in checks:
        if c.job is None:
            out.append(Verdict(c.pool, c.kind, "skipped", c.skipped))
        elif (c.pool, c.kind) not in outputs:
            out.append(Verdict(c.pool, c.kind, "missing", f"no output of {c.job}'s pods in the log"))
        else:
            out.append(JUDGES[c.kind](c, outputs[(c.pool, c.kind)]))
    return out


def table(verdicts: list[Verdict]) -> str:
    width = max([len(v.pool) for v in verdicts] + [4])
    lines = [f"{'pool':<{width}}  {'check':<5}  {'result':<7}  detail"]
    lines += [f"{v.pool:<{width}}  {v.check:<5}  {v.result:<7}  {v.detail}" for v in verdicts]
    failed = sum(1 for v in verdicts if not v.ok)
    lines.append(f"{len(verdicts) - failed} of {len(verdicts)} checks passed or skipped; {failed} failed or missing")
    return "\n".join(lines)


__all__ = ["Verdict", "diag_verdict", "gpus_verdict", "judge", "nccl_verdict", "split_log", "table"]
