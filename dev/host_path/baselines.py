"""What a user would compare the host path with, on the device machine (development tool).

  python3 baselines.py DIR GPUSORT_CLI
Writes DIR/f32_28.npy and DIR/f32_24.npy (random float32, 2^28 and 2^24), then prints, each the
median of a few runs after a warm-up:
  - PyTorch: pageable host array -> GPU -> torch.sort -> host, and pinned 1 GiB copies each way;
  - NumPy on one core: np.load -> np.sort -> np.save (and each stage);
  - the gpusort CLI: `gpusort sort IN OUT` (file to file, page cache warm), wall time.
"""
import os
import subprocess
import sys
import time

import numpy as np

out_dir, cli = sys.argv[1], sys.argv[2]
runs = int(os.environ.get("RUNS", "3"))


def median_ms(f, n=runs, warm=1):
    for _ in range(warm):
        f()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2]


rng = np.random.default_rng(1)
arrays = {}
for log2 in [int(x) for x in os.environ.get("SIZES", "28,24").split(",")]:
    a = rng.uniform(-1e6, 1e6, size=1 << log2).astype(np.float32)
    path = os.path.join(out_dir, f"f32_{log2}.npy")
    np.save(path, a)
    arrays[log2] = (a, path)

try:
    import torch

    dev = torch.device("cuda")
    torch.zeros(1, device=dev)
    for log2, (a, _) in arrays.items():
        def torch_sort():
            x = torch.from_numpy(a).to(dev)
            s = torch.sort(x).values
            return s.cpu()
        ms = median_ms(torch_sort)
        print(f"torch pageable host->GPU->sort->host 2^{log2} f32: {ms:.1f} ms")
    big = torch.from_numpy(arrays[28][0]).pin_memory()
    gpu = big.to(dev)
    back = torch.empty_like(big).pin_memory()
    def h2d():
        gpu.copy_(big, non_blocking=True)
        torch.cuda.synchronize()
    def d2h():
        back.copy_(gpu, non_blocking=True)
        torch.cuda.synchronize()
    for name, f in (("H2D", h2d), ("D2H", d2h)):
        ms = median_ms(f, n=5)
        print(f"torch pinned 1 GiB {name}: {ms:.2f} ms ({(1 << 30) / ms / 1e6:.1f} GB/s)")
    x = gpu.clone()
    def gpu_sort():
        torch.sort(x)
        torch.cuda.synchronize()
    print(f"torch.sort on the GPU alone 2^28 f32: {median_ms(gpu_sort):.2f} ms")
except Exception as e:  # noqa: BLE001 - a missing torch must not stop the rest
    print(f"torch: {e}")

for log2, (a, path) in arrays.items():
    out = os.path.join(out_dir, f"np_out_{log2}.npy")
    gout = os.path.join(out_dir, f"gpusort_out_{log2}.npy")
    stages = {}

    def fresh_output(path):
        # Untimed: replacing an existing 1 GiB output frees its page cache first (~0.45 s on the
        # H100 machine), the same cost for any tool; every timed run writes a new file.
        if os.path.exists(path):
            os.unlink(path)

    def numpy_job():
        fresh_output(out)
        t = time.perf_counter()
        x = np.load(path)
        t1 = time.perf_counter()
        s = np.sort(x)
        t2 = time.perf_counter()
        np.save(out, s)
        t3 = time.perf_counter()
        stages.update(load=(t1 - t) * 1e3, sort=(t2 - t1) * 1e3, save=(t3 - t2) * 1e3)
    def timed(job, n, output):
        for _ in range(1):
            job()
        times = []
        for _ in range(n):
            fresh_output(output)
            t = time.perf_counter()
            job()
            times.append((time.perf_counter() - t) * 1e3)
        return sorted(times)[len(times) // 2], times

    ms, times = timed(lambda: (np.save(out, np.sort(np.load(path)))), n=runs, output=out)
    numpy_job()
    print(f"numpy load->sort->save 2^{log2} f32: {ms:.1f} ms (runs " +
          ", ".join(f"{t:.0f}" for t in times) + "; one run's stages: " +
          ", ".join(f"{k} {v:.0f}" for k, v in stages.items()) + ")")
    def cli_job():
        subprocess.run([cli, "sort", path, gout], check=True)
    ms, times = timed(cli_job, n=runs, output=gout)
    print(f"  gpusort CLI runs: " + ", ".join(f"{t:.0f}" for t in times))
    same = np.array_equal(np.load(gout), np.load(out))
    print(f"gpusort CLI sort 2^{log2} f32 .npy file to file: {ms:.1f} ms (equals numpy: {same})")
    extra = os.environ.get("CLI_EXTRA")
    if extra:
        fresh_output(gout)
        r = subprocess.run([cli, "sort", path, gout] + extra.split(), capture_output=True,
                           text=True)
        print(r.stdout + r.stderr)
