"""gpusort against PyTorch (and CuPy, where installed) on the same CUDA tensors and GPU.

    PYTHONPATH=build/python python3 python/tests/bench_torch.py [--json results.json]
        [--dtypes f32,i32,i64] [--min-log2 20] [--max-log2 28] [--samples 9] [--sample-keys 2^24]

Per dtype and size (random keys: float32 normal, int32 and int64 uniform over their whole range),
each call is timed with CUDA events on the current stream: a sample is `repeat` calls between
two events (repeat = max(1, --sample-keys / n), 16 at 2^20 by default, so that the host's launch
overhead overlaps the GPU's work as it does in a loop of calls; --sample-keys 0: one call per
sample), its time divided by repeat; the median of
--samples samples after two warm-up samples is reported. The pairs compared (ratio = PyTorch's
time / gpusort's):

  sort+indices  torch.sort(x, stable=True)           gpusort.sort(x, return_indices=True)
  values        torch.sort(x, stable=True).values    gpusort.sort(x)
  argsort       torch.argsort(x, stable=True)        gpusort.argsort(x)
  cupy          cupy.sort(x) (keys only)             gpusort.sort(x)

Each gpusort result is checked against PyTorch's (both stable: equal values and indices).
Prints a table, and writes every median with the device, versions and command as JSON.

    PYTHONPATH=build/python python3 python/tests/bench_torch.py --topk [--json topk.json]
        [--dtypes f32,i32] [--topk-log2 20,24,26,28] [--topk-k 1,32,1024,65536] [--samples 9]
        [--topk-rows 4096x16384:64,64x1048576:1024,32768x4096:32]

--topk times gpusort.topk(x, k, largest=True) (the CUDA face's top-k, keys sorted) against
torch.topk(x, k, largest=True, sorted=True) on the same tensors instead (f32 normal, i32 uniform),
the same way (CUDA events, median); each gpusort result is checked: its keys equal torch.topk's,
and x[indices] gives them.
"""

import argparse
import datetime
import json
import statistics
import sys
import time

import gpusort
import torch

try:
    import cupy
except ImportError:
    cupy = None

TORCH_DTYPES = {"f32": torch.float32, "i32": torch.int32, "i64": torch.int64}


def make(dtype, n, generator):
    if dtype == torch.float32:
        return torch.randn(n, device="cuda", generator=generator)
    # Uniform over the whole range: random bytes seen as the integers.
    size = torch.iinfo(dtype).bits // 8
    return torch.randint(0, 256, (n * size,), device="cuda", dtype=torch.uint8,
                         generator=generator).view(dtype)


def time_call(call, n, samples, sample_keys):
    """Median milliseconds per call, from CUDA events around `repeat` calls per sample."""
    repeat = max(1, sample_keys // n)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for sample in range(samples + 2):
        start.record()
        for _ in range(repeat):
            call()
        end.record()
        end.synchronize()
        if sample >= 2:
            times.append(start.elapsed_time(end) / repeat)
    return statistics.median(times)


def check(name, dtype, n, x):
    values, indices = torch.sort(x, stable=True)
    g_values, g_indices = gpusort.sort(x, return_indices=True)
    g_sorted = gpusort.sort(x)
    g_order = gpusort.argsort(x)
    torch.cuda.synchronize()
    checks = [("sort values", torch.equal(g_values, values)),
              ("sort indices", torch.equal(g_indices, indices)),
              ("sort", torch.equal(g_sorted, values)), ("argsort", torch.equal(g_order, indices))]
    problems = [what for what, ok in checks if not ok]
    if problems:
        sys.exit(f"{name} {dtype} 2^{n.bit_length() - 1}: gpusort's {', '.join(problems)} "
                 "differ from torch.sort's")


def check_topk(name, log2, k, x):
    values, _ = torch.topk(x, k, largest=True, sorted=True)
    g_values, g_indices = gpusort.topk(x, k, largest=True, return_indices=True)
    torch.cuda.synchronize()
    if not torch.equal(g_values, values) or not torch.equal(x[g_indices], g_values):
        sys.exit(f"topk {name} 2^{log2} k={k}: gpusort's result differs from torch.topk's")


def spin_up(generator, seconds=0.3):
    """Both libraries busy for a while first, so that neither times a cold GPU or process."""
    x = make(torch.float32, 1 << 22, generator)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        torch.topk(x, 32)
        gpusort.topk(x, 32)
        torch.cuda.synchronize()


def main_topk(args):
    """gpusort.topk against torch.topk at the given shapes."""
    generator = torch.Generator(device="cuda").manual_seed(0)
    spin_up(generator)
    rows = []
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, CUDA "
          f"{torch.version.cuda}; ms per call (median of {args.samples}); the k largest; "
          "ratio = torch.topk / gpusort.topk")
    header = f"{'dtype':>5} {'n':>5} {'k':>6} | {'torch.topk':>10} {'gpusort':>10} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for name in args.dtypes.split(","):
        dtype = TORCH_DTYPES[name]
        for log2 in (int(v) for v in filter(None, args.topk_log2.split(","))):
            n = 1 << log2
            x = make(dtype, n, generator)
            for k in (int(v) for v in args.topk_k.split(",")):
                if k > n:
                    continue
                check_topk(name, log2, k, x)
                t = {
                    "torch_topk": time_call(lambda: torch.topk(x, k, largest=True, sorted=True),
                                            n, args.samples, args.sample_keys),
                    "gpusort_topk": time_call(lambda: gpusort.topk(x, k, largest=True), n,
                                              args.samples, args.sample_keys),
                }
                ratio = t["torch_topk"] / t["gpusort_topk"]
                rows.append(dict(dtype=name, log2=log2, k=k, ms=t, ratio=ratio))
                print(f"{name:>5} {'2^' + str(log2):>5} {k:>6} | {t['torch_topk']:10.4f} "
                      f"{t['gpusort_topk']:10.4f} {ratio:6.2f}", flush=True)
            x = None
            torch.cuda.empty_cache()
    # Rows (2-D f32 tensors): each row's top-k, as torch.topk along the last dimension.
    for shape in filter(None, args.topk_rows.split(",")):
        size, k = shape.split(":")
        count, length, k = *(int(v) for v in size.split("x")), int(k)
        x = make(torch.float32, count * length, generator).reshape(count, length)
        values, _ = torch.topk(x, k, dim=-1, largest=True, sorted=True)
        g_values, g_indices = gpusort.topk(x, k, largest=True, return_indices=True)
        if not torch.equal(g_values, values) or not torch.equal(x.gather(1, g_indices), g_values):
            sys.exit(f"topk rows {size} k={k}: gpusort's result differs from torch.topk's")
        t = {
            "torch_topk": time_call(lambda: torch.topk(x, k, dim=-1, largest=True, sorted=True),
                                    count * length, args.samples, args.sample_keys),
            "gpusort_topk": time_call(lambda: gpusort.topk(x, k, largest=True), count * length,
                                      args.samples, args.sample_keys),
        }
        ratio = t["torch_topk"] / t["gpusort_topk"]
        rows.append(dict(dtype="f32", rows=count, length=length, k=k, ms=t, ratio=ratio))
        print(f"  f32 {size:>12} {k:>6} | {t['torch_topk']:10.4f} {t['gpusort_topk']:10.4f} "
              f"{ratio:6.2f}", flush=True)
        x = values = g_values = g_indices = None
        torch.cuda.empty_cache()
    if rows:
        print(f"lowest ratio: {min(r['ratio'] for r in rows):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           cuda=torch.version.cuda, python=sys.version.split()[0],
                           date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
                           command=" ".join(sys.argv), samples=args.samples,
                           sample_keys=args.sample_keys, rows=rows), f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topk", action="store_true",
                        help="time gpusort.topk against torch.topk instead of the sorts")
    parser.add_argument("--topk-log2", default="20,24,26,28")
    parser.add_argument("--topk-k", default="1,32,1024,65536")
    parser.add_argument("--topk-rows", default="4096x16384:64,64x1048576:1024,32768x4096:32",
                        help="ROWSxLENGTH:K,... (2-D f32 tensors, each row's top-k; '' for none)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--dtypes", default=None, help="default f32,i32,i64 (--topk: f32,i32)")
    parser.add_argument("--min-log2", type=int, default=20)
    parser.add_argument("--max-log2", type=int, default=28)
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument("--sample-keys", type=int, default=1 << 24,
                        help="calls per sample: max(1, this / n)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_torch: torch.cuda has no CUDA device")
    if args.dtypes is None:
        args.dtypes = "f32,i32" if args.topk else "f32,i32,i64"
    if args.topk:
        return main_topk(args)
    generator = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    header = (f"{'dtype':>5} {'n':>5} | {'torch.sort':>10} {'gs sort+i':>10} {'ratio':>6} | "
              f"{'.values':>8} {'gs sort':>8} {'ratio':>6} | {'argsort':>8} {'gs argsort':>10} "
              f"{'ratio':>6}" + (f" | {'cupy.sort':>9} {'ratio':>6}" if cupy else ""))
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, CUDA "
          f"{torch.version.cuda}; ms per call (median of {args.samples}); ratio = other / gpusort")
    print(header)
    print("-" * len(header))
    for name in args.dtypes.split(","):
        dtype = TORCH_DTYPES[name]
        for log2 in range(args.min_log2, args.max_log2 + 1):
            n = 1 << log2
            x = make(dtype, n, generator)
            check(name, dtype, n, x)
            def timed(call):
                return time_call(call, n, args.samples, args.sample_keys)

            t = {
                "torch_sort": timed(lambda: torch.sort(x, stable=True)),
                "gpusort_sort_indices": timed(lambda: gpusort.sort(x, return_indices=True)),
                "torch_sort_values": timed(lambda: torch.sort(x, stable=True).values),
                "gpusort_sort": timed(lambda: gpusort.sort(x)),
                "torch_argsort": timed(lambda: torch.argsort(x, stable=True)),
                "gpusort_argsort": timed(lambda: gpusort.argsort(x)),
            }
            if cupy is not None:
                c = cupy.from_dlpack(x)
                t["cupy_sort"] = timed(lambda: cupy.sort(c))
            ratios = {
                "sort_indices": t["torch_sort"] / t["gpusort_sort_indices"],
                "values": t["torch_sort_values"] / t["gpusort_sort"],
                "argsort": t["torch_argsort"] / t["gpusort_argsort"],
            }
            if cupy is not None:
                ratios["cupy"] = t["cupy_sort"] / t["gpusort_sort"]
            rows.append(dict(dtype=name, log2=log2, ms=t, ratios=ratios))
            line = (f"{name:>5} {'2^' + str(log2):>5} | {t['torch_sort']:10.4f} "
                    f"{t['gpusort_sort_indices']:10.4f} {ratios['sort_indices']:6.2f} | "
                    f"{t['torch_sort_values']:8.4f} {t['gpusort_sort']:8.4f} "
                    f"{ratios['values']:6.2f} | {t['torch_argsort']:8.4f} "
                    f"{t['gpusort_argsort']:10.4f} {ratios['argsort']:6.2f}")
            if cupy is not None:
                line += f" | {t['cupy_sort']:9.4f} {ratios['cupy']:6.2f}"
            print(line, flush=True)
            x = c = None
            torch.cuda.empty_cache()
    worst = {k: min(r["ratios"][k] for r in rows) for k in rows[0]["ratios"]} if rows else {}
    print("lowest ratios: " + ", ".join(f"{k} {v:.2f}" for k, v in worst.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           cuda=torch.version.cuda, cupy=cupy.__version__ if cupy else None,
                           python=sys.version.split()[0],
                           date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
                           command=" ".join(sys.argv), samples=args.samples,
                           sample_keys=args.sample_keys, rows=rows,
                           lowest_ratios=worst), f, indent=1)


if __name__ == "__main__":
    main()
