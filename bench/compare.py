#!/usr/bin/env python3
"""Turns the JSON of one H100 run (bench/run_h100.sh: gpusort.json + cub.json) into the
comparison table (markdown) and the throughput plot (PNG, drawn by gnuplot). Runs on the
development machine, not on the bare device machine.

    bench/compare.py RUN_DIR [--table bench/results_table.md] [--plot bench/throughput.png]

Table rows: key configuration x n; columns: GKeys/s of every gpusort algorithm, of CUB, and the
ratios gpusort/CUB for the best gpusort algorithm of the row and for `automatic`.

    bench/compare.py RUN_DIR --segmented [--table bench/segmented_table.md]

Issue #13's rows (bench/run_segmented_h100.sh): per segmented configuration and n, gpusort's and
CUB's median ms (CUB's winning algorithm named) and the ratio CUB time / gpusort time; then
argsort against sort_by_key u32+u32 for both (the issue asks gpusort's within 10 %)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CONFIG_ORDER = ["u32", "u64", "f32", "u32+u32", "u64+u32", "u32-skew99", "u32+u32-skew99"]
ALGORITHM_ORDER = ["automatic", "onesweep", "radix_reduce_scan", "bitonic", "odd_even", "partition"]


def load(path):
    with open(path) as f:
        return json.load(f)


def measured(doc):
    """{(config, n): {name: gkeys_per_s}} over the rows that were measured (not skipped)."""
    table = {}
    for r in doc["results"]:
        if "skipped" in r:
            continue
        name = "CUB" if doc["implementation"] == "cub" else r["algorithm"]
        table.setdefault((r["config"], r["n"]), {})[name] = r["gkeys_per_s"]
    return table


def log2(n):
    return n.bit_length() - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="folder holding gpusort.json and cub.json")
    ap.add_argument("--table", default="bench/results_table.md")
    ap.add_argument("--plot", default="bench/throughput.png")
    ap.add_argument("--segmented", action="store_true", help="the segmented / argsort rows")
    args = ap.parse_args()
    if args.segmented:
        return segmented(args)

    gpusort = load(os.path.join(args.run_dir, "gpusort.json"))
    cub = load(os.path.join(args.run_dir, "cub.json"))
    rows = measured(gpusort)
    for key, values in measured(cub).items():
        rows.setdefault(key, {}).update(values)
    algorithms = [a for a in ALGORITHM_ORDER if any(a in v for v in rows.values())]
    configs = [c for c in CONFIG_ORDER if any(k[0] == c for k in rows)]

    # ---- table ----
    head = ["keys", "n"] + [f"{a}" for a in algorithms] + ["CUB", "best/CUB", "automatic/CUB"]
    lines = [
        f"gpusort on {gpusort['device']} ({gpusort['driver']}), {gpusort['date']}; "
        f"CUB: {cub['driver']}, {cub['date']}. GKeys/s = n / median time.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|",
    ]
    for c in configs:
        for n in sorted(n for (cc, n) in rows if cc == c):
            v = rows[(c, n)]
            cells = [c, f"2^{log2(n)}"]
            cells += [f"{v[a]:.3f}" if a in v else "–" for a in algorithms]
            base = v.get("CUB")
            cells.append(f"{base:.3f}" if base else "–")
            best = max((v[a] for a in algorithms if a in v), default=None)
            cells.append(f"**{best / base:.2f}**" if best and base else "–")
            auto = v.get("automatic")
            cells.append(f"{auto / base:.2f}" if auto and base else "–")
            lines.append("| " + " | ".join(cells) + " |")
    with open(args.table, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # ---- plot: one panel per key configuration, one line per implementation ----
    names = algorithms + ["CUB"]
    with tempfile.TemporaryDirectory() as tmp:
        script = [
            "set terminal pngcairo size 1500,900 font ',10'" if has_cairo() else "set terminal png size 1500,900",
            f"set output '{os.path.abspath(args.plot)}'",
            f"set multiplot layout 2,3 title 'Sort throughput, {gpusort['device']}: gpusort (Vulkan) vs CUB DeviceRadixSort'",
            "set termoption noenhanced",
            "set logscale y 10",
            "set xlabel 'log2(n)'",
            "set ylabel 'GKeys/s (median)'",
            "set grid",
            "set key top left",
            "set xtics 2",
        ]
        for c in configs:
            plots = []
            for name in names:
                points = sorted((log2(n), v[name]) for (cc, n), v in rows.items() if cc == c and name in v)
                if not points:
                    continue
                data = os.path.join(tmp, f"{c}_{name}.dat".replace("+", "_"))
                with open(data, "w") as f:
                    f.writelines(f"{x} {y}\n" for x, y in points)
                style = "lw 3 dt 2" if name == "CUB" else "lw 2"
                plots.append(f"'{data}' using 1:2 with linespoints {style} title '{name}'")
            script.append(f"set title '{c}'")
            script.append("plot " + ", ".join(plots))
        # Sixth panel: how far gpusort's best algorithm of each row is from CUB.
        plots = []
        for c in configs:
            points = sorted((log2(n), max(v[a] for a in algorithms if a in v) / v["CUB"])
                            for (cc, n), v in rows.items()
                            if cc == c and "CUB" in v and any(a in v for a in algorithms))
            if not points:
                continue
            data = os.path.join(tmp, f"ratio_{c}.dat".replace("+", "_"))
            with open(data, "w") as f:
                f.writelines(f"{x} {y}\n" for x, y in points)
            plots.append(f"'{data}' using 1:2 with linespoints lw 2 title '{c}'")
        if plots:
            script += ["set title 'best gpusort / CUB'", "set ylabel 'ratio'", "unset logscale y",
                       "set yrange [0:*]", "plot " + ", ".join(plots) + ", 1 with lines lc 'black' dt 3 notitle"]
        script.append("unset multiplot")
        result = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True)
        if result.returncode != 0:
            sys.exit("gnuplot failed")
    print(f"wrote {args.table} and {args.plot}")


def segmented(args):
    docs = {name: load(os.path.join(args.run_dir, f"{name}.json")) for name in ("gpusort", "cub")}
    rows = {}  # (config, n) -> {"gpusort": row, "cub": row}
    for name, doc in docs.items():
        for r in doc["results"]:
            if "skipped" not in r:
                rows.setdefault((r["config"], r["n"]), {})[name] = r
    table = "bench/segmented_table.md" if args.table == "bench/results_table.md" else args.table
    lines = [f"gpusort on {docs['gpusort']['device']} ({docs['gpusort']['driver']}), "
             f"{docs['gpusort']['date']}; CUB: {docs['cub']['driver']}. Median ms.", "",
             "| keys | n | gpusort | gpusort ms | CUB | CUB ms | CUB ms / gpusort ms |",
             "|---|---|---|---:|---|---:|---:|"]
    for (config, n), v in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        g, c = v.get("gpusort"), v.get("cub")
        cells = [config, f"2^{log2(n)}",
                 g["algorithm"] if g else "–", f"{g['ms_median']:.4f}" if g else "–",
                 c["algorithm"] if c else "–", f"{c['ms_median']:.4f}" if c else "–",
                 f"**{c['ms_median'] / g['ms_median']:.2f}**" if g and c else "–"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Argsort / sort_by_key u32+u32 (time ratio; issue #13: gpusort's <= 1.10):", ""]
    for name in ("gpusort", "cub"):
        for (config, n), v in sorted(rows.items()):
            if config != "u32 argsort" or name not in v or name not in rows.get(("u32+u32", n), {}):
                continue
            ratio = v[name]["ms_median"] / rows[("u32+u32", n)][name]["ms_median"]
            lines.append(f"- {name} n = 2^{log2(n)}: {ratio:.3f}")
    with open(table, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def has_cairo():
    out = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (out.stdout + out.stderr)


if __name__ == "__main__":
    main()
