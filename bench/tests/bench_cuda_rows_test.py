#!/usr/bin/env python3
"""`gpusort bench --algorithms automatic,cuda` where the CUDA face cannot run (CI: lavapipe, no
NVIDIA driver): one line on stderr says why, the Vulkan rows are those of `--algorithms automatic`
with the same seed, and the JSON / CSV carry the CUDA face's rows as skipped with that reason, every
row naming its face; `--algorithms cuda` alone runs no Vulkan row; `--segmented` adds the CUDA face's
argsort and u32+u32 rows, skipped the same way.

    bench_cuda_rows_test.py PATH/TO/gpusort
"""
import csv
import ctypes
import json
import os
import subprocess
import sys
import tempfile

CONFIGS = ["u32", "u64+u32"]
SIZES = [1 << 10, 1 << 12, 1 << 14]  # --quick
PREFIX = "gpusort bench: the cuda rows are skipped: "


def expect(condition, what, text):
    if not condition:
        sys.exit(f"FAILED: {what}\n---\n{text}")


def bench(gpusort, tmp, name, algorithms):
    csv_path, json_path = os.path.join(tmp, f"{name}.csv"), os.path.join(tmp, f"{name}.json")
    result = subprocess.run([gpusort, "bench", "--quick", "--seed", "7", "--keys", ",".join(CONFIGS),
                             "--algorithms", algorithms, "--csv", csv_path, "--json", json_path],
                            capture_output=True, text=True)
    expect(result.returncode == 0, f"gpusort bench --algorithms {algorithms} exits 0",
           result.stdout + result.stderr)
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(json_path) as f:
        doc = json.load(f)
    return result, rows, doc


def skip_line_expected(stderr):
    """The one line: its reason exactly where the driver is absent (CI), else any one reason (a
    driver without a device, or lavapipe's UUID that no CUDA device has)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return stderr == PREFIX + "the CUDA driver (libcuda.so.1) is not installed\n"
    lines = stderr.splitlines()
    return len(lines) == 1 and lines[0].startswith(PREFIX) and len(lines[0]) > len(PREFIX)


def identity(row):
    """What a row is and how it was checked, not its times."""
    return {k: row[k] for k in ("implementation", "algorithm", "config", "key_bytes", "value_bytes",
                                "n", "warmups", "runs", "verified", "skipped", "kernels", "face")}


def main():
    gpusort = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        plain, plain_rows, _ = bench(gpusort, tmp, "plain", "automatic")
        expect(plain.stderr == "", "no line on stderr without the cuda rows", plain.stderr)
        expect(len(plain_rows) == len(CONFIGS) * len(SIZES) and
               all(r["face"] == "vulkan" and r["skipped"] == "" for r in plain_rows),
               "the Vulkan rows, measured, named by their face", str(plain_rows))

        both, rows, doc = bench(gpusort, tmp, "both", "automatic,cuda")
        expect(skip_line_expected(both.stderr), "one line on stderr saying why", both.stderr)
        why = both.stderr[len(PREFIX):].rstrip("\n")
        # Per n and configuration: the Vulkan row, then the CUDA face's, skipped with the reason.
        expected = []
        for n in SIZES:
            for config in CONFIGS:
                expected += [("automatic", "vulkan", config, n), ("cuda", "cuda", config, n)]
        got = [(r["algorithm"], r["face"], r["config"], int(r["n"])) for r in rows]
        expect(got == expected, "the rows in order", "\n".join(map(str, got)))
        vulkan = [r for r in rows if r["face"] == "vulkan"]
        expect([identity(r) for r in vulkan] == [identity(r) for r in plain_rows],
               "the Vulkan rows as without the cuda rows", "\n".join(map(str, vulkan)))
        cuda = [r for r in rows if r["face"] == "cuda"]
        expect(all(r["implementation"] == "gpusort" and r["skipped"] == why and r["ms_median"] == ""
                   for r in cuda), "the cuda rows skipped with the reason", "\n".join(map(str, cuda)))
        results = doc["results"]
        expect([(r["algorithm"], r["face"], r["config"], r["n"]) for r in results] == expected and
               all(r.get("skipped") == why for r in results if r["face"] == "cuda") and
               all("skipped" not in r for r in results if r["face"] == "vulkan"),
               "the JSON's rows as the CSV's", json.dumps(results, indent=1))
        # The printed table: the Vulkan rows alone (the reason is the stderr line's).
        table = [t for t in (l.split() for l in both.stdout.splitlines())
                 if len(t) > 3 and t[0] == "gpusort" and t[3].isdigit()]
        expect([(t[1], t[2], int(t[3])) for t in table] ==
               [(a, c, n) for a, f, c, n in expected if f == "vulkan"] and
               all("skipped" not in l for l in both.stdout.splitlines()),
               "the table's rows", both.stdout)

        alone, rows, _ = bench(gpusort, tmp, "alone", "cuda")
        expect(alone.stderr == both.stderr, "the same line for --algorithms cuda", alone.stderr)
        expect([(r["algorithm"], r["face"], r["config"], int(r["n"]), r["skipped"]) for r in rows] ==
               [(a, f, c, n, why) for a, f, c, n in expected if f == "cuda"],
               "--algorithms cuda: the cuda rows alone", "\n".join(map(str, rows)))

        # --segmented: the CUDA face's argsort and u32+u32 rows after the Vulkan ones, skipped.
        json_path = os.path.join(tmp, "segmented.json")
        seg = subprocess.run([gpusort, "bench", "--segmented", "--quick", "--seed", "7", "--keys",
                              "u32", "--layouts", "small", "--algorithms", "cuda", "--json",
                              json_path], capture_output=True, text=True)
        expect(seg.returncode == 0 and seg.stderr == both.stderr,
               "--segmented: exits 0, the same line on stderr", seg.stdout + seg.stderr)
        with open(json_path) as f:
            got = [(r["algorithm"], r.get("face", ""), r["config"], r.get("skipped", ""))
                   for r in json.load(f)["results"]]
        expect(got == [("segmented", "", "u32 seg 64x256", ""), ("argsort", "", "u32 argsort", ""),
                       ("cuda", "cuda", "u32 argsort", why),
                       ("automatic", "vulkan", "u32+u32", ""), ("cuda", "cuda", "u32+u32", why)],
               "--segmented: the rows in order", "\n".join(map(str, got)))
    print("bench cuda rows: ok")


if __name__ == "__main__":
    main()
