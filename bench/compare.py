#!/usr/bin/env python3
"""Turns the JSON of one H100 run (bench/run_h100.sh: gpusort.json + cub.json) into the
comparison table (markdown) and the throughput plot. Runs on the development machine, not on the
bare device machine; needs Python 3 alone.

    bench/compare.py RUN_DIR [--table bench/results_table.md] [--plot bench/throughput.png]
    bench/compare.py GPUSORT_FILE [--cub CUB_FILE] [--table ...] [--plot ...]

RUN_DIR holds gpusort.json (else gpusort.csv) and cub.json (else cub.csv); or the first argument is
the JSON or CSV that `gpusort bench` wrote, with CUB's from cub_baseline (--cub, optional: without
CUB the table has gpusort's columns alone). A CSV names no device or date: the table says so.

Table rows: key configuration x n; columns: GKeys/s of every gpusort algorithm, of CUB, and the
ratios gpusort/CUB for the best gpusort algorithm of the row and for `automatic`. Only steady rows
are taken: a row the benchmark flagged (its runs spread more than the protocol allows, or its
spin-up did not settle: docs/design/benchmark-protocol.md) is left out of the table and listed under it.

The CUDA face's rows (`gpusort bench --algorithms ...,cuda`: face "cuda"; or the gpusort rows of
`cub_baseline --gpusort` given as CUB's file, where gpusort's file has none) add a column `cuda`
after the Vulkan algorithms' (whose best/CUB and automatic/CUB stay theirs) and the ratios cuda/CUB
and cuda/automatic (of GKeys/s: above 1, the CUDA face is faster).

The plot: a PNG drawn by gnuplot where gnuplot is installed (without it the table is written and
the plot skipped, with a message), or an SVG drawn by this script alone when --plot ends in .svg.

    bench/compare.py RUN_DIR --segmented [--table bench/segmented_table.md]

The segmented rows (bench/run_segmented_h100.sh): per segmented configuration and n, gpusort's and
CUB's median ms (CUB's winning algorithm named) and the ratio CUB time / gpusort time; then
argsort against sort_by_key u32+u32 for both (the issue asks gpusort's within 10 %).

    bench/compare.py CUDA_FACE_JSON --cuda-face [--table bench/results_table.md]

The CUDA face's rows (`cub_baseline --gpusort --json CUDA_FACE_JSON`: CUB and gpusort's CUDA face
on the same device arrays, row after row): per key configuration and n both medians and CUB time /
gpusort time, written as the section "The CUDA face" of the table file (replacing an earlier one),
the rest of the file kept."""
import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

CONFIG_ORDER = ["u32", "u64", "f32", "u32+u32", "u64+u32", "u32-skew99", "u32+u32-skew99"]
# Algorithms in the order the benchmark wrote them (the library's registry order), automatic first.
ALGORITHM_ORDER = []


CUDA_FACE = "cuda"  # the CUDA face's column: the rows' algorithm and face


def load(path):
    if path.endswith(".csv"):
        return load_csv(path)
    with open(path) as f:
        return json.load(f)


def load_csv(path):
    """A CSV of bench_common.hpp's write_csv as the JSON's document: its rows, typed as there; the
    run's device, driver and date are not in a CSV."""
    numbers = ("ms_median", "ms_min", "ms_max", "gkeys_per_s", "gb_per_s", "ms_q1", "ms_q3",
               "spread", "spin_up_ms")
    counts = ("key_bytes", "value_bytes", "n", "scratch_bytes", "warmups", "runs", "sets",
              "sm_clock_mhz")
    results = []
    with open(path, newline="") as f:
        for line in csv.DictReader(f):
            r = {k: v for k, v in line.items() if k is not None and v not in ("", None)}
            for k in numbers:
                if k in r:
                    r[k] = float(r[k])
            for k in counts:
                if k in r:
                    r[k] = int(r[k])
            if "steady" in r:
                r["steady"] = r["steady"] == "true"
            results.append(r)
    implementation = results[0]["implementation"] if results else "gpusort"
    return {"implementation": implementation, "device": None, "driver": None, "date": None,
            "source": os.path.basename(path), "results": results}


def described(doc):
    """"NVIDIA H200 (driver), date" of a JSON; what a CSV could not say."""
    if doc.get("device") is None:
        return f"{doc.get('source', 'a CSV')} (a CSV: device and date not recorded)"
    return f"{doc['device']} ({doc['driver']}), {doc['date']}"


def implementation(doc, row):
    return row.get("implementation", doc["implementation"])


def is_cuda_face(doc, row):
    """A row of gpusort's CUDA face: face "cuda" (`gpusort bench`), or cub_baseline --gpusort's
    gpusort rows (algorithm "cuda", written before rows named their face)."""
    return implementation(doc, row) == "gpusort" and \
        (row.get("face") == CUDA_FACE or (row["algorithm"] == CUDA_FACE and "face" not in row
                                          and not row.get("kernels")))


def steady(row):
    """Whether a measured row may be published: rows written before the benchmark flagged
    unsteady ones carry no "steady" field and count as steady."""
    return row.get("steady", True)


def flagged(doc):
    """The measured rows the benchmark flagged as not steady: lines for the list under a table."""
    return [f"{implementation(doc, r)} {r['algorithm']} {r['config']} 2^{log2(r['n'])}: "
            f"{r.get('unsteady', 'not steady')}"
            for r in doc["results"] if "skipped" not in r and not steady(r)]


def flagged_lines(docs):
    lines = [line for doc in docs for line in flagged(doc)]
    if not lines:
        recorded = all("steady" in r for doc in docs for r in doc["results"] if "skipped" not in r)
        return ["", "Every measured row was steady." if recorded else
                "(Steadiness not recorded in these files: written before rows were flagged.)"]
    return ["", f"Left out, not steady ({len(lines)} rows; docs/design/benchmark-protocol.md):", ""] + \
        [f"- {line}" for line in lines]


def measured(doc):
    """{(config, n): {name: gkeys_per_s}} over the rows that were measured (not skipped) and
    steady."""
    table = {}
    for r in doc["results"]:
        if "skipped" in r or not steady(r):
            continue
        name = "CUB" if implementation(doc, r) == "cub" else r["algorithm"]
        if is_cuda_face(doc, r):
            name = CUDA_FACE
        # Onesweep's passes as CUDA kernels (`gpusort bench --kernels ...`): a column of their own.
        elif name != "CUB" and r.get("kernels", "").startswith("cuda"):
            name += "/cuda"
        if name not in ("CUB", CUDA_FACE) and name not in ALGORITHM_ORDER:
            ALGORITHM_ORDER.append(name)
            ALGORITHM_ORDER.sort(key=lambda a: a != "automatic")
        table.setdefault((r["config"], r["n"]), {})[name] = r["gkeys_per_s"]
    return table


def log2(n):
    return n.bit_length() - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="folder holding gpusort.json and cub.json (or .csv), or "
                    "the JSON or CSV of `gpusort bench`")
    ap.add_argument("--cub", help="with a gpusort file: cub_baseline's JSON or CSV")
    ap.add_argument("--table", default="bench/results_table.md")
    ap.add_argument("--plot", default="bench/throughput.png",
                    help="PNG through gnuplot, or SVG (no tool needed) when it ends in .svg")
    ap.add_argument("--segmented", action="store_true", help="the segmented / argsort rows")
    ap.add_argument("--cuda-face", action="store_true",
                    help="run_dir is the JSON of cub_baseline --gpusort: the CUDA face's section")
    args = ap.parse_args()
    if args.segmented:
        return segmented(args)
    if args.cuda_face:
        return cuda_face(args)

    gpusort, cub = inputs(args)
    rows = measured(gpusort)
    # CUB's rows; gpusort rows in CUB's file (cub_baseline --gpusort: the CUDA face) only where
    # gpusort's own file has none.
    for key, values in (measured(cub) if cub else {}).items():
        row = rows.setdefault(key, {})
        row.update({name: x for name, x in values.items() if name == "CUB" or name not in row})
    algorithms = [a for a in ALGORITHM_ORDER if any(a in v for v in rows.values())]
    cuda = [CUDA_FACE] if any(CUDA_FACE in v for v in rows.values()) else []
    configs = [c for c in CONFIG_ORDER if any(k[0] == c for k in rows)]

    # ---- table ----
    head = ["keys", "n"] + [f"{a}" for a in algorithms] + cuda
    if cub:
        head += ["CUB", "best/CUB", "automatic/CUB"] + [f"{a}/CUB" for a in cuda]
    head += [f"{a}/automatic" for a in cuda]
    lines = [
        f"gpusort on {described(gpusort)}"
        + (f"; CUB: {cub['driver']}, {cub['date']}" if cub and cub.get("device") is not None else
           f"; CUB: {described(cub)}" if cub else "")
        + ". GKeys/s = n / median time.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|",
    ]
    if cuda:
        lines[1:1] = ["", "cuda: gpusort's CUDA face (gpusort::cuda::sort_raw on device memory, "
                      "CUDA events around each call); the other gpusort columns: the Vulkan face "
                      "(GPU timestamps). Ratios of GKeys/s."]
    for c in configs:
        for n in sorted(n for (cc, n) in rows if cc == c):
            v = rows[(c, n)]
            cells = [c, f"2^{log2(n)}"]
            cells += [f"{v[a]:.3f}" if a in v else "–" for a in algorithms + cuda]
            # automatic took one path per row: SPIR-V ("automatic") or the CUDA pass ("automatic/cuda").
            auto = v.get("automatic", v.get("automatic/cuda"))
            if cub:
                base = v.get("CUB")
                cells.append(f"{base:.3f}" if base else "–")
                best = max((v[a] for a in algorithms if a in v), default=None)
                cells.append(f"**{best / base:.2f}**" if best and base else "–")
                cells.append(f"{auto / base:.2f}" if auto and base else "–")
                cells += [f"{v[a] / base:.2f}" if a in v and base else "–" for a in cuda]
            cells += [f"{v[a] / auto:.2f}" if a in v and auto else "–" for a in cuda]
            lines.append("| " + " | ".join(cells) + " |")
    lines += flagged_lines([gpusort] + ([cub] if cub else []))
    with open(args.table, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # ---- plot: one panel per key configuration, one line per implementation ----
    names = algorithms + cuda + (["CUB"] if cub else [])
    device = gpusort["device"] if gpusort.get("device") is not None else gpusort.get("source")
    title = f"Sort throughput, {device}: gpusort (Vulkan) vs CUB DeviceRadixSort"
    if cuda:
        title = f"Sort throughput, {device}: gpusort (Vulkan, CUDA face) vs CUB DeviceRadixSort"
    if args.plot.endswith(".svg"):
        write_svg(args.plot, title, configs, names, algorithms, rows)
        print(f"wrote {args.table} and {args.plot}")
        return
    if shutil.which("gnuplot") is None:
        print(f"gnuplot not installed: table written ({args.table}), plot skipped "
              f"(--plot FILE.svg draws it without gnuplot)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        script = [
            "set terminal pngcairo size 1500,900 font ',10'" if has_cairo() else "set terminal png size 1500,900",
            f"set output '{os.path.abspath(args.plot)}'",
            f"set multiplot layout 2,3 title '{title}'",
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


def inputs(args):
    """gpusort's document and CUB's (None where there is none)."""
    def found(folder, name):
        for ext in (".json", ".csv"):
            path = os.path.join(folder, name + ext)
            if os.path.exists(path):
                return path
        return None

    if os.path.isdir(args.run_dir):
        gpusort_path = found(args.run_dir, "gpusort")
        if gpusort_path is None:
            sys.exit(f"compare.py: no gpusort.json or gpusort.csv in {args.run_dir}")
        cub_path = args.cub or found(args.run_dir, "cub")
    else:
        gpusort_path, cub_path = args.run_dir, args.cub
    return load(gpusort_path), load(cub_path) if cub_path else None


CUDA_FACE_HEADING = "## The CUDA face"


def cuda_face(args):
    doc = load(args.run_dir)
    rows = {}  # (config, n) -> {"cub": row, "gpusort": row}
    for r in doc["results"]:
        if "skipped" not in r:
            rows.setdefault((r["config"], r["n"]), {})[r.get("implementation", "cub")] = r
    # The command as run, without where it wrote its files.
    words = doc.get("command", "cub_baseline --gpusort").split()
    command = " ".join(w for i, w in enumerate(words)
                       if w not in ("--json", "--csv") and words[i - 1] not in ("--json", "--csv"))
    lines = [CUDA_FACE_HEADING, "",
             f"`{command}` on {doc['device']} ({doc['driver']}), "
             f"{doc['date']}: CUB's DeviceRadixSort and gpusort's CUDA face on the same device arrays, "
             "median ms; bold: CUB time / gpusort time.", "",
             "| keys | n | CUB ms | gpusort ms | CUB / gpusort |", "|---|---|---:|---:|---:|"]
    configs = [c for c in CONFIG_ORDER if any(k[0] == c for k in rows)]
    for c in configs:
        for n in sorted(n for (cc, n) in rows if cc == c):
            v = rows[(c, n)]
            cub, ours = v.get("cub"), v.get("gpusort")
            if not cub or not ours:
                continue
            mark = "" if steady(cub) and steady(ours) else " (not steady)"
            lines.append(f"| {c} | 2^{log2(n)} | {cub['ms_median']:.4f} | {ours['ms_median']:.4f} | "
                         f"**{cub['ms_median'] / ours['ms_median']:.2f}**{mark} |")
    # The section replaces its former text (up to the next section), or goes at the end.
    before, after = "", ""
    if os.path.exists(args.table):
        with open(args.table) as f:
            before = f.read()
        start = before.find(CUDA_FACE_HEADING + "\n")
        if start >= 0:
            end = before.find("\n## ", start + len(CUDA_FACE_HEADING))
            after = "\n" + before[end + 1:] if end >= 0 else ""
            before = before[:start]
        before = before.rstrip() + "\n\n"
    with open(args.table, "w") as f:
        f.write(before + "\n".join(lines) + "\n" + after)
    print("\n".join(lines))


def segmented(args):
    docs = {name: load(os.path.join(args.run_dir, f"{name}.json")) for name in ("gpusort", "cub")}
    rows = {}  # (config, n) -> {"gpusort": row, "cub": row, "cuda": the CUDA face's row}
    for name, doc in docs.items():
        for r in doc["results"]:
            if "skipped" not in r and steady(r):
                key = CUDA_FACE if name == "gpusort" and is_cuda_face(doc, r) else name
                rows.setdefault((r["config"], r["n"]), {})[key] = r
    cuda = any(CUDA_FACE in v for v in rows.values())
    table = "bench/segmented_table.md" if args.table == "bench/results_table.md" else args.table
    lines = [f"gpusort on {docs['gpusort']['device']} ({docs['gpusort']['driver']}), "
             f"{docs['gpusort']['date']}; CUB: {docs['cub']['driver']}. Median ms.", "",
             "| keys | n | gpusort | gpusort ms | CUB | CUB ms | CUB ms / gpusort ms |"
             + (" cuda ms | CUB ms / cuda ms |" if cuda else ""),
             "|---|---|---|---:|---|---:|---:|" + ("---:|---:|" if cuda else "")]
    for (config, n), v in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        g, c = v.get("gpusort"), v.get("cub")
        cells = [config, f"2^{log2(n)}",
                 g["algorithm"] if g else "–", f"{g['ms_median']:.4f}" if g else "–",
                 c["algorithm"] if c else "–", f"{c['ms_median']:.4f}" if c else "–",
                 f"**{c['ms_median'] / g['ms_median']:.2f}**" if g and c else "–"]
        if cuda:  # the CUDA face's row of the same configuration (argsort, u32+u32)
            f = v.get(CUDA_FACE)
            cells += [f"{f['ms_median']:.4f}" if f else "–",
                      f"{c['ms_median'] / f['ms_median']:.2f}" if f and c else "–"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Argsort / sort_by_key u32+u32 (time ratio):", ""]
    for name in ("gpusort", CUDA_FACE, "cub"):
        for (config, n), v in sorted(rows.items()):
            if config != "u32 argsort" or name not in v or name not in rows.get(("u32+u32", n), {}):
                continue
            ratio = v[name]["ms_median"] / rows[("u32+u32", n)][name]["ms_median"]
            lines.append(f"- {name} n = 2^{log2(n)}: {ratio:.3f}")
    lines += flagged_lines(docs.values())
    with open(table, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---- the SVG plot, drawn without any tool ----

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def svg_panel(x0, y0, w, h, title, series, log_y, ylabel, reference=None):
    """One panel: series = [(name, [(x, y), ...], colour, dashed)], x = log2(n)."""
    points = [p for _, pts, _, _ in series for p in pts if p[1] > 0]
    if not points:
        return []
    xs = [p[0] for p in points]
    ys = [p[1] for p in points] + ([reference] if reference else [])
    xmin, xmax = min(xs), max(xs)
    if xmin == xmax:
        xmin, xmax = xmin - 1, xmax + 1
    f = math.log10 if log_y else (lambda v: v)
    if log_y:
        ymin, ymax = math.floor(f(min(ys))), math.ceil(f(max(ys)))
    else:
        ymin, ymax = 0.0, max(ys) * 1.1
    if ymin == ymax:
        ymax = ymin + 1
    left, right, top, bottom = x0 + 55, x0 + w - 10, y0 + 25, y0 + h - 35

    def px(x):
        return left + (x - xmin) / (xmax - xmin) * (right - left)

    def py(y):
        return bottom - (f(y) - ymin) / (ymax - ymin) * (bottom - top)

    out = [f'<text x="{(left + right) / 2:.1f}" y="{y0 + 15}" text-anchor="middle" '
           f'font-weight="bold">{title}</text>',
           f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
           f'fill="none" stroke="#888"/>']
    for x in range(int(xmin), int(xmax) + 1):
        if x % 2 == 0:
            out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{bottom}" stroke="#eee"/>')
            out.append(f'<text x="{px(x):.1f}" y="{bottom + 14}" text-anchor="middle">{x}</text>')
    ticks = [10 ** e for e in range(int(ymin), int(ymax) + 1)] if log_y else \
        [ymax * i / 5 for i in range(6)]
    for t in ticks:
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{right}" y2="{py(t):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 4}" y="{py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    out.append(f'<text x="{(left + right) / 2:.1f}" y="{bottom + 28}" text-anchor="middle">log2(n)</text>')
    out.append(f'<text transform="translate({x0 + 12},{(top + bottom) / 2:.1f}) rotate(-90)" '
               f'text-anchor="middle">{ylabel}</text>')
    if reference:
        out.append(f'<line x1="{left}" y1="{py(reference):.1f}" x2="{right}" y2="{py(reference):.1f}" '
                   f'stroke="black" stroke-dasharray="2,3"/>')
    for i, (name, pts, colour, dashed) in enumerate(series):
        pts = [p for p in pts if p[1] > 0]
        if not pts:
            continue
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="{3 if dashed else 2}"{dash}/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{colour}"/>' for x, y in pts]
        out.append(f'<text x="{left + 6}" y="{top + 14 + 13 * i}" fill="{colour}">{name}</text>')
    return out


def write_svg(path, title, configs, names, algorithms, rows):
    """The gnuplot plot's panels (one per key configuration, then best gpusort / CUB) as SVG."""
    w, h, columns = 500, 320, 3
    panels = []
    for c in configs:
        series = []
        for i, name in enumerate(names):
            pts = sorted((log2(n), v[name]) for (cc, n), v in rows.items() if cc == c and name in v)
            series.append((name, pts, COLOURS[i % len(COLOURS)], name == "CUB"))
        panels.append((c, series, True, "GKeys/s (median)", None))
    ratio = []
    for i, c in enumerate(configs):
        pts = sorted((log2(n), max(v[a] for a in algorithms if a in v) / v["CUB"])
                     for (cc, n), v in rows.items()
                     if cc == c and "CUB" in v and any(a in v for a in algorithms))
        ratio.append((c, pts, COLOURS[i % len(COLOURS)], False))
    if any(pts for _, pts, _, _ in ratio):
        panels.append(("best gpusort / CUB", ratio, False, "ratio", 1.0))
    height = 40 + h * math.ceil(max(len(panels), 1) / columns)
    body = []
    for k, (name, series, log_y, ylabel, reference) in enumerate(panels):
        body += svg_panel((k % columns) * w, 40 + (k // columns) * h, w, h, name, series, log_y,
                          ylabel, reference)
    escape = title.replace("&", "&amp;").replace("<", "&lt;")
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{columns * w}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{columns * w / 2}" y="24" text-anchor="middle" font-size="15">{escape}</text>']
    with open(path, "w") as f:
        f.write("\n".join(svg + body + ["</svg>"]) + "\n")


def has_cairo():
    out = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (out.stdout + out.stderr)


if __name__ == "__main__":
    main()
