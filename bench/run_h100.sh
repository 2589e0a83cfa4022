#!/bin/bash
# The whole H100 measurement in one invocation: CUB baseline, then `gpusort bench`, both over
# n = 2^10..2^28 and all five key configurations; logs, JSON and CSV go to $RESULTS_DIR (default: out/
# in the current directory). On a machine with the NVIDIA driver and the Vulkan loader installed,
# from a build configured with -DGPUSORT_BUILD_BENCH=ON (cub_baseline needs nvcc):
#   bench/run_h100.sh [BUILD_DIR] [OPTIONS...]     (BUILD_DIR default: build)
# Afterwards: bench/compare.py OUT_DIR (docs/PERFORMANCE.md). Every row is spun
# up until steady and reports its spread and SM clock; rows flagged NOT STEADY are listed at the
# end of each log and left out of compare.py's table (docs/design/benchmark-protocol.md).
# Options go to both programs (e.g. --max-log2 24); GPUSORT_ALGORITHMS picks gpusort's algorithms
# (default: every one the build has). Time: both programs run the smallest n first and skip rows
# predicted to end past their budget (CUB_BUDGET, default 80 s: CUB needs ~55 s in full;
# GPUSORT_BUDGET, default 170 s: ~50 s per radix algorithm in full), so the whole call stays near
# 4 minutes and a cut falls on the largest sizes; skipped rows are listed with the reason.
set -uo pipefail
build=build
if [ $# -gt 0 ] && [ -d "$1" ]; then build=$1; shift; fi
gpusort_bin=$build/tools/gpusort/gpusort
cub_bin=$build/bench/cub_baseline
out=${RESULTS_DIR:-out}
mkdir -p "$out"

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nproc
} > "$out/machine.txt" 2>&1

# Clocks, power and throttle reasons every 250 ms (read-only), to explain odd rows afterwards.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
  --format=csv -lms 250 > "$out/gpu_monitor.csv" 2>&1 &
monitor=$!

seed=${SEED:-$(date +%s)}
status=0
start=$(date +%s)
cub_budget=${CUB_BUDGET:-80}
gpusort_budget=${GPUSORT_BUDGET:-170}
# The timeouts only guard against a hang: a budget is checked between rows.
timeout $((cub_budget + 90)) "$cub_bin" --seed "$seed" --time-budget "$cub_budget" \
  --json "$out/cub.json" \
  --csv "$out/cub.csv" "$@" 2>&1 | tee "$out/cub.log" | tail -n 3 || status=1
middle=$(date +%s)
algorithms=()
[ -n "${GPUSORT_ALGORITHMS:-}" ] && algorithms=(--algorithms "$GPUSORT_ALGORITHMS")
timeout $((gpusort_budget + 90)) "$gpusort_bin" bench --seed "$seed" --time-budget "$gpusort_budget" \
  "${algorithms[@]}" \
  --json "$out/gpusort.json" --csv "$out/gpusort.csv" "$@" 2>&1 | tee "$out/gpusort.log" || status=1
# The skewed rows (one bucket holding 99 % of the keys) at 2^20 and 2^22, both programs,
# the same seed; own files so the main tables stay as they were.
skew=(--seed "$seed" --keys u32-skew99,u32+u32-skew99 --min-log2 20 --max-log2 22 --step 2)
timeout 120 "$cub_bin" "${skew[@]}" --json "$out/cub_skew.json" --csv "$out/cub_skew.csv" \
  2>&1 | tee "$out/cub_skew.log" | tail -n 3 || status=1
timeout 180 "$gpusort_bin" bench "${skew[@]}" "${algorithms[@]}" --json "$out/gpusort_skew.json" \
  --csv "$out/gpusort_skew.csv" 2>&1 | tee "$out/gpusort_skew.log" || status=1
end=$(date +%s)
kill "$monitor" 2>/dev/null
echo "cub: $((middle - start)) s, gpusort: $((end - middle)) s (status $status)" | tee -a "$out/machine.txt"
exit $status
