#!/usr/bin/env python3
"""bench/compare.py on a small made-up run: only steady rows reach the table, the flagged ones are
listed under it, and a machine without gnuplot gets the table and a message, not a traceback;
--plot FILE.svg draws the plot with Python alone. The CUDA face's rows (`gpusort bench --algorithms
...,cuda`, JSON or CSV; cub_baseline --gpusort's) get their column and ratios beside the Vulkan
algorithms' and CUB's; cub_baseline --gpusort's section (--cuda-face) takes the place of the
former one.

    compare_test.py PATH/TO/compare.py
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def row(impl, algorithm, config, n, ms, steady=True, unsteady=None):
    r = {"implementation": impl, "algorithm": algorithm, "config": config, "key_bytes": 4,
         "value_bytes": 4 if "+" in config else 0, "n": n, "ms_median": ms,
         "gkeys_per_s": n / (ms * 1e6), "steady": steady}
    if unsteady:
        r["unsteady"] = unsteady
    return r


def doc(impl, rows):
    return {"schema": "gpusort-bench-1", "implementation": impl, "device": "Test GPU",
            "driver": "test driver", "date": "2026-01-01T00:00:00Z", "results": rows}


def run(compare, args, env):
    result = subprocess.run([sys.executable, compare] + args, capture_output=True, text=True, env=env)
    out = result.stdout + result.stderr
    if result.returncode != 0 or "Traceback" in out:
        sys.exit(f"compare.py {' '.join(args)} failed ({result.returncode}):\n{out}")
    return out


def expect(condition, what, text):
    if not condition:
        sys.exit(f"FAILED: {what}\n---\n{text}")


CSV_HEADER = ("implementation,algorithm,config,key_bytes,value_bytes,n,ms_median,ms_min,ms_max,"
              "gkeys_per_s,gb_per_s,scratch_bytes,warmups,runs,sets,verified,skipped,ms_q1,ms_q3,"
              "spread,steady,unsteady,spin_up_state,spin_up_ms,sm_clock_mhz,kernels,face")


def csv_line(impl, algorithm, config, n, ms, face="", kernels="", steady=True, unsteady="",
             skipped=""):
    """One row as bench_common.hpp's write_csv writes it."""
    key_bytes = 8 if config.startswith("u64") else 4
    value_bytes = 4 if "+" in config else 0
    head = f"{impl},{algorithm},{config},{key_bytes},{value_bytes},{n},"
    if skipped:
        return head + f',,,,,,,,,,"{skipped}",,,,,,,,,"{kernels}",{face}'
    rate = n / (ms * 1e6)
    return head + (f'{ms:g},{ms:g},{ms:g},{rate:.6g},{2 * rate * (key_bytes + value_bytes):.6g},'
                   f'4096,3,11,14,"every run: sorted + pair multiset hash",,{ms:g},{ms:g},0,'
                   f'{"true" if steady else "false"},"{unsteady}",steady,250,1980,"{kernels}",{face}')


def cuda_face_rows(compare, tmp, env):
    """The CUDA face's column and ratios, from gpusort bench's JSON, its CSV, and cub_baseline."""
    run_dir = os.path.join(tmp, "cuda_run")
    os.mkdir(run_dir)
    face = lambda r, f: dict(r, face=f)
    gpusort = [face(row("gpusort", "automatic", "u32", 1 << 20, 0.100), "vulkan"),
               face(row("gpusort", "cuda", "u32", 1 << 20, 0.080), "cuda"),
               face(row("gpusort", "automatic", "u64+u32", 1 << 20, 0.400), "vulkan"),
               face(row("gpusort", "cuda", "u64+u32", 1 << 20, 0.500, False, "spread 9.0% > 5.0%"),
                    "cuda"),
               {"implementation": "gpusort", "algorithm": "cuda", "face": "cuda", "config": "u32",
                "key_bytes": 4, "value_bytes": 0, "n": 1 << 22, "skipped": "over the time budget"}]
    cub = [row("cub", "DeviceRadixSort", "u32", 1 << 20, 0.125),
           row("cub", "DeviceRadixSort", "u64+u32", 1 << 20, 0.625)]
    for name, rows in (("gpusort", gpusort), ("cub", cub)):
        with open(os.path.join(run_dir, f"{name}.json"), "w") as f:
            json.dump(doc(name, rows), f)
    table = os.path.join(tmp, "cuda_table.md")
    out = run(compare, [run_dir, "--table", table, "--plot", os.path.join(tmp, "cuda.svg")], env)
    text = open(table).read()
    expected = "\n".join([
        "gpusort on Test GPU (test driver), 2026-01-01T00:00:00Z; CUB: test driver, "
        "2026-01-01T00:00:00Z. GKeys/s = n / median time.",
        "",
        "cuda: gpusort's CUDA face (gpusort::cuda::sort_raw on device memory, CUDA events around "
        "each call); the other gpusort columns: the Vulkan face (GPU timestamps). Ratios of GKeys/s.",
        "",
        "| keys | n | automatic | cuda | CUB | best/CUB | automatic/CUB | cuda/CUB | cuda/automatic |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        "| u32 | 2^20 | 10.486 | 13.107 | 8.389 | **1.25** | 1.25 | 1.56 | 1.25 |",
        "| u64+u32 | 2^20 | 2.621 | – | 1.678 | **1.56** | 1.56 | – | – |",
        "",
        "Left out, not steady (1 rows; docs/design/benchmark-protocol.md):",
        "",
        "- gpusort cuda u64+u32 2^20: spread 9.0% > 5.0%",
        ""])
    expect(text == expected, "the CUDA face's column and ratios (JSON)", text + "\n---\n" + out)
    svg = open(os.path.join(tmp, "cuda.svg")).read()
    expect(">cuda</text>" in svg and "CUDA face" in svg, "the CUDA face's line in the plot", svg)

    # The same rows as CSV (what `gpusort bench --csv` writes), alone: no CUB columns; a CSV names
    # no device.
    lines = [CSV_HEADER,
             csv_line("gpusort", "automatic", "u32", 1 << 20, 0.100, "vulkan", "spirv"),
             csv_line("gpusort", "cuda", "u32", 1 << 20, 0.080, "cuda"),
             csv_line("gpusort", "automatic", "u64+u32", 1 << 20, 0.400, "vulkan", "cuda (nvx)"),
             csv_line("gpusort", "cuda", "u64+u32", 1 << 20, 0.500, "cuda", steady=False,
                      unsteady="spread 9.0% > 5.0%"),
             csv_line("gpusort", "cuda", "u32", 1 << 22, 0, "cuda",
                      skipped="the CUDA driver (libcuda.so.1) is not installed")]
    csv_path = os.path.join(tmp, "out.csv")
    with open(csv_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    run(compare, [csv_path, "--table", table, "--plot", os.path.join(tmp, "csv.svg")], env)
    text = open(table).read()
    expected = "\n".join([
        "gpusort on out.csv (a CSV: device and date not recorded). GKeys/s = n / median time.",
        "",
        "cuda: gpusort's CUDA face (gpusort::cuda::sort_raw on device memory, CUDA events around "
        "each call); the other gpusort columns: the Vulkan face (GPU timestamps). Ratios of GKeys/s.",
        "",
        "| keys | n | automatic | automatic/cuda | cuda | cuda/automatic |",
        "|---|---|---:|---:|---:|---:|",
        "| u32 | 2^20 | 10.486 | – | 13.107 | 1.25 |",
        "| u64+u32 | 2^20 | – | 2.621 | – | – |",
        "",
        "Left out, not steady (1 rows; docs/design/benchmark-protocol.md):",
        "",
        "- gpusort cuda u64+u32 2^20: spread 9.0% > 5.0%",
        ""])
    expect(text == expected, "the CUDA face's column from a CSV, no CUB", text)

    # ... and with CUB's CSV beside it.
    cub_csv = os.path.join(tmp, "cub.csv")
    with open(cub_csv, "w") as f:
        f.write("\n".join([CSV_HEADER, csv_line("cub", "DeviceRadixSort", "u32", 1 << 20, 0.125),
                           csv_line("cub", "DeviceRadixSort", "u64+u32", 1 << 20, 0.625)]) + "\n")
    run(compare, [csv_path, "--cub", cub_csv, "--table", table, "--plot",
                  os.path.join(tmp, "csv.svg")], env)
    text = open(table).read()
    expect(text.splitlines()[0] == "gpusort on out.csv (a CSV: device and date not recorded); CUB: "
           "cub.csv (a CSV: device and date not recorded). GKeys/s = n / median time." and
           "| u32 | 2^20 | 10.486 | – | 13.107 | 8.389 | **1.25** | 1.25 | 1.56 | 1.25 |" in text and
           "| u64+u32 | 2^20 | – | 2.621 | – | 1.678 | **1.56** | 1.56 | – | – |" in text,
           "the CUDA face's column from CSVs beside CUB", text)

    # cub_baseline --gpusort as CUB's file: its gpusort rows are the CUDA face's column where
    # gpusort's file has none, and CUB's column stays CUB's.
    with open(os.path.join(run_dir, "gpusort.json"), "w") as f:
        json.dump(doc("gpusort", [r for r in gpusort if r["face"] == "vulkan"]), f)
    with open(os.path.join(run_dir, "cub.json"), "w") as f:
        json.dump(doc("cub", [cub[0], row("gpusort", "cuda", "u32", 1 << 20, 0.0625)]), f)
    run(compare, [run_dir, "--table", table, "--plot", os.path.join(tmp, "cuda.svg")], env)
    text = open(table).read()
    expect("| u32 | 2^20 | 10.486 | 16.777 | 8.389 | **1.25** | 1.25 | 2.00 | 1.60 |" in text and
           "| u64+u32 | 2^20 | 2.621 | – | – | – | – | – | – |" in text,
           "cub_baseline --gpusort's rows as the CUDA face's column", text)


def cuda_face_section(compare, tmp, env):
    """--cuda-face on cub_baseline --gpusort's JSON: its section replaces the former one and leaves
    the sections around it, "The CUDA face in `gpusort bench`" after it included."""
    face_json = os.path.join(tmp, "face.json")
    face_doc = doc("cub", [row("cub", "DeviceRadixSort", "u32", 1 << 20, 0.125),
                           row("gpusort", "cuda", "u32", 1 << 20, 0.100),
                           row("cub", "DeviceRadixSort", "u32+u32", 1 << 22, 0.500),
                           row("gpusort", "cuda", "u32+u32", 1 << 22, 0.625, False)])
    face_doc["command"] = "cub_baseline --gpusort --keys u32 --json face.json"
    with open(face_json, "w") as f:
        json.dump(face_doc, f)
    table = os.path.join(tmp, "face_table.md")
    before = "# Results\n\nThe Vulkan faces.\n\n"
    after = "## The CUDA face in `gpusort bench`\n\nKept.\n"
    with open(table, "w") as f:
        f.write(before + "## The CUDA face\n\nFormer rows.\n\n" + after)
    out = run(compare, [face_json, "--cuda-face", "--table", table], env)
    expected = before + "\n".join([
        "## The CUDA face",
        "",
        "`cub_baseline --gpusort --keys u32` on Test GPU (test driver), 2026-01-01T00:00:00Z: CUB's "
        "DeviceRadixSort and gpusort's CUDA face on the same device arrays, median ms; bold: CUB "
        "time / gpusort time.",
        "",
        "| keys | n | CUB ms | gpusort ms | CUB / gpusort |",
        "|---|---|---:|---:|---:|",
        "| u32 | 2^20 | 0.1250 | 0.1000 | **1.25** |",
        "| u32+u32 | 2^22 | 0.5000 | 0.6250 | **0.80** (not steady) |",
        ""]) + "\n" + after
    text = open(table).read()
    expect(text == expected, "the CUDA face's section in place, the next one kept", text + "\n---\n" + out)


def cuda_face_segmented(compare, tmp, env):
    """`gpusort bench --segmented --algorithms cuda`: the CUDA face's argsort and u32+u32 rows as
    columns of their own and in the argsort / sort_by_key list, gpusort's Vulkan rows as before."""
    run_dir = os.path.join(tmp, "cuda_segmented")
    os.mkdir(run_dir)
    argsort = lambda impl, algorithm, ms, face=None: dict(
        row(impl, algorithm, "u32 argsort", 1 << 24, ms), **({"face": face} if face else {}))
    gpusort = [dict(row("gpusort", "segmented", "u32 seg 2^16x256", 1 << 24, 0.50)),
               argsort("gpusort", "argsort", 1.10), argsort("gpusort", "cuda", 0.88, "cuda"),
               dict(row("gpusort", "automatic", "u32+u32", 1 << 24, 1.00), face="vulkan"),
               dict(row("gpusort", "cuda", "u32+u32", 1 << 24, 0.80), face="cuda")]
    cub = [row("cub", "DeviceSegmentedSort", "u32 seg 2^16x256", 1 << 24, 1.00),
           argsort("cub", "SortPairs+iota", 1.32), row("cub", "DeviceRadixSort", "u32+u32", 1 << 24, 1.20)]
    for name, rows in (("gpusort", gpusort), ("cub", cub)):
        with open(os.path.join(run_dir, f"{name}.json"), "w") as f:
            json.dump(doc(name, rows), f)
    table = os.path.join(tmp, "cuda_seg.md")
    run(compare, [run_dir, "--segmented", "--table", table], env)
    text = open(table).read()
    expected = "\n".join([
        "gpusort on Test GPU (test driver), 2026-01-01T00:00:00Z; CUB: test driver. Median ms.",
        "",
        "| keys | n | gpusort | gpusort ms | CUB | CUB ms | CUB ms / gpusort ms | cuda ms | "
        "CUB ms / cuda ms |",
        "|---|---|---|---:|---|---:|---:|---:|---:|",
        "| u32 argsort | 2^24 | argsort | 1.1000 | SortPairs+iota | 1.3200 | **1.20** | 0.8800 | 1.50 |",
        "| u32 seg 2^16x256 | 2^24 | segmented | 0.5000 | DeviceSegmentedSort | 1.0000 | **2.00** | – | – |",
        "| u32+u32 | 2^24 | automatic | 1.0000 | DeviceRadixSort | 1.2000 | **1.20** | 0.8000 | 1.50 |",
        "",
        "Argsort / sort_by_key u32+u32 (time ratio):",
        "",
        "- gpusort n = 2^24: 1.100",
        "- cuda n = 2^24: 1.100",
        "- cub n = 2^24: 1.100",
        "",
        "Every measured row was steady.",
        ""])
    expect(text == expected, "the CUDA face's segmented-mode rows", text)


def main():
    compare = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = os.path.join(tmp, "run")
        os.mkdir(run_dir)
        gpusort = [row("gpusort", "automatic", "u32", 1024, 0.0244, False, "spread 41.0% > 5.0%"),
                   row("gpusort", "onesweep", "u32", 1024, 0.0090),
                   row("gpusort", "automatic", "u32", 4096, 0.0130),
                   row("gpusort", "automatic", "u32+u32", 1 << 24, 4.12, False,
                       "spin-up unsettled after 2000 ms"),
                   {"implementation": "gpusort", "algorithm": "odd_even", "config": "u32",
                    "key_bytes": 4, "value_bytes": 0, "n": 1 << 20, "skipped": "rejected"}]
        cub = [row("cub", "DeviceRadixSort", "u32", 1024, 0.0160),
               row("cub", "DeviceRadixSort", "u32", 4096, 0.0170),
               row("cub", "DeviceRadixSort", "u32+u32", 1 << 24, 0.56)]
        for name, rows in (("gpusort", gpusort), ("cub", cub)):
            with open(os.path.join(run_dir, f"{name}.json"), "w") as f:
                json.dump(doc(name, rows), f)

        # No gnuplot on PATH (an empty folder): the table, and the plot skipped with a message.
        env = dict(os.environ, PATH=os.path.join(tmp, "empty"))
        table = os.path.join(tmp, "table.md")
        out = run(compare, [run_dir, "--table", table, "--plot", os.path.join(tmp, "p.png")], env)
        expect("gnuplot not installed: table written" in out and "plot skipped" in out,
               "the message for a machine without gnuplot", out)
        expect(not os.path.exists(os.path.join(tmp, "p.png")), "no PNG without gnuplot", out)
        text = open(table).read()
        lines = text.splitlines()
        u32_1024 = [l for l in lines if l.startswith("| u32 | 2^10 |")]
        expect(len(u32_1024) == 1, "one u32 2^10 row", text)
        # automatic's flagged 0.042 GKeys/s is out; onesweep's 0.114 and CUB's 0.064 stay, and
        # the best ratio is onesweep's.
        cells = [c.strip() for c in u32_1024[0].strip("|").split("|")]
        expect(cells[2] == "–" and cells[3] == "0.114" and cells[4] == "0.064" and
               cells[5] == "**1.78**", "the flagged row left out of u32 2^10", text)
        expect("0.042" not in text, "the flagged value nowhere in the table", text)
        expect("| u32 | 2^12 | 0.315 |" in text, "a steady row kept", text)
        expect("Left out, not steady (2 rows" in text, "the count of flagged rows", text)
        expect("- gpusort automatic u32 2^10: spread 41.0% > 5.0%" in text, "flagged row 1", text)
        expect("- gpusort automatic u32+u32 2^24: spin-up unsettled after 2000 ms" in text,
               "flagged row 2", text)

        # The SVG plot, drawn without gnuplot.
        svg = os.path.join(tmp, "plot.svg")
        run(compare, [run_dir, "--table", table, "--plot", svg], env)
        tree = ET.parse(svg)
        lines_drawn = tree.getroot().findall(".//{http://www.w3.org/2000/svg}polyline")
        expect(len(lines_drawn) >= 3, "lines in the SVG plot", open(svg).read())

        # The segmented table leaves flagged rows out the same way.
        seg_table = os.path.join(tmp, "seg.md")
        run(compare, [run_dir, "--segmented", "--table", seg_table], env)
        text = open(seg_table).read()
        expect("| u32+u32 | 2^24 | – | – | DeviceRadixSort | 0.5600 | – |" in text,
               "the flagged segmented-mode row left out", text)
        expect("spin-up unsettled after 2000 ms" in text, "listed under the segmented table", text)

        # Files written before rows were flagged: every measured row counts, and it says so.
        for name in ("gpusort", "cub"):
            path = os.path.join(run_dir, f"{name}.json")
            d = json.load(open(path))
            for r in d["results"]:
                r.pop("steady", None), r.pop("unsteady", None)
            json.dump(d, open(path, "w"))
        run(compare, [run_dir, "--table", table, "--plot", os.path.join(tmp, "p.png")], env)
        text = open(table).read()
        expect("0.042" in text and "Steadiness not recorded" in text, "older files", text)

        cuda_face_rows(compare, tmp, env)
        cuda_face_section(compare, tmp, env)
        cuda_face_segmented(compare, tmp, env)
    print("compare.py: ok")


if __name__ == "__main__":
    main()
