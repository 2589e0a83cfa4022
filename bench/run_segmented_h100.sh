#!/bin/bash
# The segmented rows in one invocation: `cub_baseline --segmented`, then `gpusort bench
# --segmented`, same seed, n = 2^24 (segmented sort of u32 and u32+u32 over the layouts
# 2^16x256, 2^10x2^14, 16x2^20 and powerlaw; argsort of u32 keys; sort_by_key u32+u32).
# Logs, JSON and CSV go to $RESULTS_DIR, default out/ (cub.json / gpusort.json: bench/compare.py
# RUN_DIR --segmented). On a machine with the NVIDIA driver and the Vulkan loader installed:
#   bench/run_segmented_h100.sh [BUILD_DIR] [OPTIONS...]     (BUILD_DIR default: build)
# Options go to both programs (e.g. --max-log2 26 --min-log2 22). Each program takes ~30-60 s;
# the budgets (CUB_BUDGET, GPUSORT_BUDGET, default 90 s each) skip rows predicted past them.
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
} > "$out/machine.txt" 2>&1

seed=${SEED:-$(date +%s)}
status=0
cub_budget=${CUB_BUDGET:-90}
gpusort_budget=${GPUSORT_BUDGET:-90}
timeout $((cub_budget + 60)) "$cub_bin" --segmented --seed "$seed" \
  --time-budget "$cub_budget" --json "$out/cub.json" --csv "$out/cub.csv" "$@" 2>&1 |
  tee "$out/cub.log" || status=1
timeout $((gpusort_budget + 60)) "$gpusort_bin" bench --segmented --seed "$seed" \
  --time-budget "$gpusort_budget" --json "$out/gpusort.json" --csv "$out/gpusort.csv" "$@" 2>&1 |
  tee "$out/gpusort.log" || status=1
exit $status
