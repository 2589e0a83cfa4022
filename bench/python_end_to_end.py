#!/usr/bin/env python3
"""gpusort.sort against np.sort, end to end: a host float32 array in, a sorted host copy out
(gpusort: the copy, the NumPy-order host pass, transfers to and from the device, the GPU sort).
Both results are checked equal bit for bit before timing.

    PYTHONPATH=build/python python3 bench/python_end_to_end.py [--log2n 28] [--runs 5] [--device D]

Prints the median time of each, its throughput (GB/s of keys sorted, 4 bytes a key, and GKeys/s)
and the ratio np.sort time / gpusort.sort time. The README's Python benchmark line quotes it on
the H100 machine (run with a module built there for its Python: see README, Python)."""
import argparse
import statistics
import time

import numpy as np

import gpusort


def median_seconds(function, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--device", default=None, help="gpusort.Context device (index or name)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    n = 1 << args.log2n
    keys = np.random.default_rng(args.seed).random(n, dtype=np.float32)
    context = gpusort.Context(device=args.device)
    print(f"n = 2^{args.log2n} float32 ({keys.nbytes / 2**20:.0f} MiB), device: {context.device.name}, "
          f"NumPy {np.__version__}, median of {args.runs} runs")

    expected = np.sort(keys, kind="stable")  # also warms NumPy up
    result = gpusort.sort(keys, context=context)  # also compiles gpusort's pipelines
    if not np.array_equal(result.view(np.uint32), expected.view(np.uint32)):
        raise SystemExit("gpusort.sort differs from np.sort")
    del result, expected

    rows = [("np.sort (default kind)", median_seconds(lambda: np.sort(keys), args.runs)),
            ("np.sort(kind='stable')", median_seconds(lambda: np.sort(keys, kind="stable"), args.runs)),
            ("gpusort.sort", median_seconds(lambda: gpusort.sort(keys, context=context), args.runs)),
            ("gpusort.sort(total_order=True)",
             median_seconds(lambda: gpusort.sort(keys, total_order=True, context=context), args.runs))]
    for name, seconds in rows:
        print(f"{name:32s} {seconds * 1e3:10.1f} ms {keys.nbytes / seconds / 1e9:8.2f} GB/s "
              f"{n / seconds / 1e9:7.3f} GKeys/s")
    numpy_seconds, gpusort_seconds = rows[0][1], rows[2][1]
    print(f"gpusort.sort is {numpy_seconds / gpusort_seconds:.1f}x np.sort (default kind), "
          f"{rows[1][1] / gpusort_seconds:.1f}x np.sort(kind='stable')")


if __name__ == "__main__":
    main()
