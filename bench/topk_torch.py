#!/usr/bin/env python3
"""torch.topk on the inputs of `gpusort bench --topk` (bench/topk.hpp's generator), timed with
CUDA events, and, with --gpusort, that command run on the same GPU right after, the two tables
joined with the speed-up.

    python3 bench/topk_torch.py --gpusort build/tools/gpusort/gpusort [--json out.json]

Each row: the same keys as gpusort's (murmur3's finalizer of i * 0x9E3779B1 + seed; f32 keys
(x >> 8) / 2^24, i32 keys x as signed), torch.topk(x, k, largest=True, sorted=True) over the last
dimension (rows: a 2-D tensor), warm-ups, then the median of the timed runs.
"""

import argparse
import json
import re
import subprocess
import sys

import torch

MASK = 0xFFFFFFFF


def _mul32(x, c):
    """(x * c) mod 2^32 for int64 tensors x < 2^32, without overflowing int64."""
    low = (x * (c & 0xFFFF)) & MASK
    high = ((x * (c >> 16)) & 0xFFFF) << 16
    return (low + high) & MASK


def keys(n, seed, dtype, device):
    i = torch.arange(n, dtype=torch.int64, device=device)
    x = (_mul32(i & MASK, 0x9E3779B1) + seed) & MASK
    x ^= x >> 16
    x = _mul32(x, 0x85EBCA6B)
    x ^= x >> 13
    x = _mul32(x, 0xC2B2AE35)
    x ^= x >> 16
    if dtype == "f32":
        return (x >> 8).to(torch.float32) * 2.0**-24
    return torch.where(x >= 2**31, x - 2**32, x).to(torch.int32)


def shapes(quick):
    if quick:
        return ([("f32", 0, 1 << 14, k) for k in (1, 32, 1024)] + [("i32", 0, 1 << 14, 100)]
                + [("f32", 64, 1 << 10, 8), ("f32", 4, 1 << 12, 64)])
    ks = (1, 32, 1024, 65536)
    return ([("f32", 0, 1 << log2, k) for log2 in (20, 24, 26, 28) for k in ks]
            + [("i32", 0, 1 << log2, k) for log2 in (24, 26, 28) for k in ks]
            + [("f32", 4096, 1 << 14, 64), ("f32", 64, 1 << 20, 1024), ("f32", 32768, 4096, 32)])


def name(key, rows, length, k):
    log2 = length.bit_length() - 1
    size = f"2^{log2}" if 1 << log2 == length else str(length)
    return f"{key} " + (f"{rows} rows x " if rows else "") + f"{size} k={k}"


def time_torch(x, k, largest, warmups, runs):
    for _ in range(warmups):
        torch.topk(x, k, largest=largest, sorted=True)
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.topk(x, k, largest=largest, sorted=True)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpusort", help="the gpusort binary: also run `gpusort bench --topk`")
    parser.add_argument("--quick", action="store_true", help="the small shapes")
    parser.add_argument("--smallest", action="store_true", help="the k smallest")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warmups", type=int, default=3)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--json", help="write the joined rows here")
    a = parser.parse_args()
    device = torch.device("cuda")
    largest = not a.smallest
    torch_ms = {}
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(device)}; "
          f"{'largest' if largest else 'smallest'}; median of {a.runs} runs")
    for key, rows, length, k in shapes(a.quick):
        x = keys(max(rows, 1) * length, a.seed, key, device)
        if rows:
            x = x.reshape(rows, length)
        ms = time_torch(x, min(k, length), largest, a.warmups, a.runs)
        torch_ms[name(key, rows, length, k)] = ms
        print(f"{name(key, rows, length, k):32s} torch.topk {ms:10.3f} ms", flush=True)
        del x
        torch.cuda.empty_cache()
    rows = [{"shape": s, "torch_ms": ms} for s, ms in torch_ms.items()]
    if a.gpusort:
        command = [a.gpusort, "bench", "--topk", "--seed", str(a.seed), "--warmups",
                   str(a.warmups), "--runs", str(a.runs)]
        if a.quick:
            command.append("--quick")
        if a.smallest:
            command.append("--smallest")
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        print(out, end="")
        gpusort_ms = {}
        for line in out.splitlines():
            m = re.match(r"^(\S+ (?:\d+ rows x )?\S+ k=\d+)\s+\d+\s+([\d.]+)\s", line)
            if m:
                gpusort_ms[m.group(1)] = float(m.group(2))
        print(f"\n{'shape':32s} {'torch ms':>10s} {'gpusort ms':>10s} {'speed-up':>9s}")
        for row in rows:
            g = gpusort_ms.get(row["shape"])
            row["gpusort_ms"] = g
            speedup = row["torch_ms"] / g if g else float("nan")
            print(f"{row['shape']:32s} {row['torch_ms']:10.3f} "
                  f"{g if g else float('nan'):10.3f} {speedup:8.2f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
