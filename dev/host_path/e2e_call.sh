#!/bin/bash
# One run for the host path (development): the end-to-end bench, the demo, the same sorts in
# `gpusort bench`, the user baselines with the CLI's --timings, and the whole test suite on the GPU
# with validation. On a machine with the NVIDIA driver and the Vulkan loader installed, from the
# repository root, after a build with the tests and the development tools:
#   dev/host_path/e2e_call.sh [BUILD_DIR]     (default: build; results in $OUT, default out/)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
out=${OUT:-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/machine.txt"
date -u +%Y-%m-%dT%H:%M:%SZ | tee -a "$out/machine.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu \
  --format=csv -lms 100 > "$out/gpu_monitor.csv" 2>&1 &
monitor=$!
g="$build/tools/gpusort/gpusort"
echo "== end to end"
timeout 200 "$g" bench --end-to-end --keys ${E2E_KEYS:-u32,f32,u64,u32+u32} --min-log2 ${E2E_MIN:-20} --step 2 \
  --csv "$out/end_to_end.csv" 2>&1 | tee "$out/end_to_end.log"
if [ -n "${E2E_SHADER_KEYS:-}" ]; then
  echo "== end to end, shader copies"
  GPUSORT_COPY_ENGINE=shader timeout 200 "$g" bench --end-to-end --keys $E2E_SHADER_KEYS --min-log2 ${E2E_MIN:-20} --step 2 \
    --csv "$out/end_to_end_shader.csv" 2>&1 | tee "$out/end_to_end_shader.log"
fi
echo "== demo"
timeout 120 "$g" demo --n 268435456 --type u32 --runs 5 --seed 1 2>&1 | tee "$out/demo.log"
[ "${DEMO_SMALL:-1}" = 1 ] && timeout 60 "$g" demo --n 16777216 --type f32 --runs 5 --seed 1 2>&1 | tee -a "$out/demo.log"
echo "== bench"
timeout 120 "$g" bench --algorithms automatic --keys u32,f32 --min-log2 24 --max-log2 28 --step 4 2>&1 | tail -n 5 | tee "$out/bench.log"
echo "== baselines"
CLI_EXTRA=--timings RUNS=${RUNS:-3} PYTHONUNBUFFERED=1 timeout 200 python3 "$here/baselines.py" "${TMPDIR:-/tmp}" "$g" 2>&1 | tee "$out/baselines.log"
if [ "${WRITE_PROBE:-1}" = 1 ]; then
  echo "== write probe"
  timeout 60 "$build/dev/write_probe" "${TMPDIR:-/tmp}" 30 2>&1 | tee "$out/write_probe.log"
fi
if [ -d "$build/python/gpusort" ]; then
  echo "== python"
  PYTHONPATH="$build/python" PYTHONUNBUFFERED=1 timeout 150 python3 "$here/../../bench/python_end_to_end.py" --log2n 28 --runs 3 2>&1 | tee "$out/python.log"
fi
echo "== tests on the GPU"
tests=$(cd "$build/tests" && pwd)/gpusort_tests
out=$(cd "$out" && pwd)
cd "${TMPDIR:-/tmp}" && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout ${TEST_TIMEOUT:-240} "$tests" > "$out/gtest.log" 2>&1
echo "gtest exit $?"; grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$out/gtest.log" | tail -n 20
kill $monitor 2>/dev/null
