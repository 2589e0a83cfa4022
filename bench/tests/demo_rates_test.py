#!/usr/bin/env python3
"""`gpusort demo`'s transfer rates are the bytes moved over each transfer's own time (they were
once divided by the whole call, sort included), and `gpusort demo --first-call` reports one
call's stages in a line scripts read (bench/first_call.sh).

    demo_rates_test.py PATH/TO/gpusort
"""
import re
import subprocess
import sys

N = 100000


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def expect(condition, what, text):
    if not condition:
        sys.exit(f"FAILED: {what}\n---\n{text}")


def close(rate, bytes_, ms):
    # Rates print with 2 decimals and times with 3: allow for that rounding.
    expected = bytes_ / (ms * 1e6)
    return abs(rate - expected) <= 0.006 + expected * (0.0005 / ms + 1e-3)


def main():
    gpusort = sys.argv[1]
    out = run([gpusort, "demo", "--n", str(N), "--runs", "1", "--type", "u32"])
    m = re.search(r"of which \(median run\): upload ([0-9.]+) ms \(([0-9.]+) GB/s\), sort ([0-9.]+) "
                  r"ms \(GPU\), download ([0-9.]+) ms \(([0-9.]+) GB/s\)", out)
    expect(m, "the stages line with a rate per transfer", out)
    up_ms, up_rate, sort_ms, down_ms, down_rate = map(float, m.groups())
    bytes_ = 4 * N
    expect(close(up_rate, bytes_, up_ms), f"upload rate = {bytes_} B / upload time", out)
    expect(close(down_rate, bytes_, down_ms), f"download rate = {bytes_} B / download time", out)
    expect("verified: all 2 results equal std::sort" in out, "verified", out)

    out = run([gpusort, "demo", "--n", str(N), "--first-call", "--type", "f32"])
    m = re.search(r"^first_call device_ms=([0-9.]+) call_ms=([0-9.]+) setup_ms=([0-9.]+) "
                  r"upload_ms=([0-9.]+) sort_gpu_ms=([0-9.]+) download_ms=([0-9.]+) "
                  r"sm_mhz_before=(-?\d+) sm_mhz_after=(-?\d+)$", out, re.M)
    expect(m, "the first_call line", out)
    device, call, setup, up, sort, down = map(float, m.groups()[:6])
    expect(device > 0 and sort > 0 and call >= up + sort + down - 0.01 and call >= setup,
           "the first call's stages fit in its wall time", out)
    expect("verified: the result is sorted and a permutation of the 100000 keys" in out,
           "first call verified", out)
    print("demo rates: ok")


if __name__ == "__main__":
    main()
