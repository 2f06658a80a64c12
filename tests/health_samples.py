"""Check outputs in the formats `gpuplane validate` reads, written out from their sources (not produced by
gpuplane): `nvidia-smi -L` lines, a `dcgmi diag -r 1` table (NVIDIA/DCGM dcgmi/Diag.cpp; a DCGM 4.4.2 run), and
`all_reduce_perf` output (NVIDIA/nccl-tests src/util.cu; rows from aws-samples/awsome-distributed-training
micro-benchmarks/nccl-tests/README.md, a 2-node p5.48xlarge run on EKS)."""

from __future__ import annotations


def gpus(count: int) -> list[str]:
    """`nvidia-smi -L` on a node showing `count` H100s."""
    return [f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-f75045e8-4d87-49d1-2eb9-39ec2baddf9{i})" for i in range(count)]


def diag(result: str = "Pass") -> list[str]:
    """`dcgmi diag -r 1` with the deployment test's result `result` on GPU0."""
    return [
        "Successfully ran diagnostic for group.",
        "+---------------------------+------------------------------------------------+",
        "| Diagnostic                | Result                                         |",
        "+===========================+================================================+",
        "|-----  Metadata  ----------+------------------------------------------------|",
        "| DCGM Version              | 4.4.2                                          |",
        "| Driver Version Detected   | 580.95.05                                      |",
        "| GPU Device IDs Detected   | 2330                                           |",
        "|-----  Deployment  --------+------------------------------------------------|",
        f"| software                  | {result:<47}|",
        f"|                           | GPU0: {result:<41}|",
        "+---------------------------+------------------------------------------------+",
    ]


def nccl(busbw: float = 437.79, wrong: int = 0) -> list[str]:
    """`all_reduce_perf -b 8 -e 16G` (trimmed to three sizes) whose largest message reaches `busbw` GB/s."""
    return [
        "# nccl-tests version 2.18.3 nccl-headers=23004 nccl-library=23004",
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 1 iters: 100 agg iters: 1 "
        "validation: 1 graph: 0",
        "#",
        "#                                                              out-of-place                       in-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
        "           8             2     float     sum      -1    62.12    0.00    0.00      0    61.50    0.00    0.00"
        "      0",
        "   268435456      67108864     float     sum      -1   1401.2  191.57  359.20      0   1398.7  191.92  359.85"
        "      0",
        f"  2147483648     536870912     float     sum      -1   9197.5  233.49  {busbw:6.2f}  {wrong:5d}   9195.2  "
        f"233.54  {busbw:6.2f}  {wrong:5d}",
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 52.9753",
        "#",
        "# Collective test concluded: all_reduce_perf",
    ]


def prefixed(pod: str, container: str, lines: list[str]) -> list[str]:
    """Lines as `kubectl logs --prefix` prints them."""
    return [f"[pod/{pod}/{container}] {line}" for line in lines]
