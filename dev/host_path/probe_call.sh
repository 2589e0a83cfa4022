#!/bin/bash
# One run for the host path (development): the probe, the demo, a bench row, the user baselines
# (PyTorch, NumPy, the CLI), and the whole test suite on the GPU. On a machine with the NVIDIA
# driver and the Vulkan loader installed, from the repository root, after a build with the tests
# and the development tools:
#   dev/host_path/probe_call.sh [BUILD_DIR]     (default: build; results in $OUT, default out/)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
out=${OUT:-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max --format=csv | tee "$out/machine.txt"
nproc | tee -a "$out/machine.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > "$out/gpu_monitor.csv" 2>&1 &
monitor=$!
work=${TMPDIR:-/tmp}/hostpath; mkdir -p "$work"
if [ "${SKIP_PROBE:-0}" = 0 ]; then
  head -c 1073741824 /dev/urandom > $work/random.bin
  timeout 200 "$build/dev/host_probe" 30 $work/random.bin 2>&1 | tee "$out/probe.log"
  rm -f $work/random.bin
fi
echo "== demo"
timeout 120 "$build/tools/gpusort/gpusort" demo --n 268435456 --type u32 --runs 3 --seed 1 2>&1 | tee "$out/demo.log"
timeout 60 "$build/tools/gpusort/gpusort" demo --n 16777216 --type f32 --runs 3 --seed 1 2>&1 | tee -a "$out/demo.log"
[ -n "${DEMO_EXTRA:-}" ] && timeout 120 "$build/tools/gpusort/gpusort" demo $DEMO_EXTRA 2>&1 | tee -a "$out/demo.log"
echo "== bench"
timeout 120 "$build/tools/gpusort/gpusort" bench --algorithms onesweep --keys u32,f32 --min-log2 24 --max-log2 28 --step 4 2>&1 | tail -n 8 | tee "$out/bench.log"
echo "== baselines"
PYTHONUNBUFFERED=1 timeout 240 python3 "$here/baselines.py" $work "$build/tools/gpusort/gpusort" 2>&1 | tee "$out/baselines.log"
rm -rf $work
echo "== tests on the GPU"
GPUSORT_DEVICE=NVIDIA timeout ${TEST_TIMEOUT:-150} "$build/tests/gpusort_tests" --gtest_brief=1 > "$out/gtest.log" 2>&1
echo "gtest exit $?"; grep -E "FAILED|PASSED|tests ran" "$out/gtest.log" | tail -n 20
kill $monitor 2>/dev/null
