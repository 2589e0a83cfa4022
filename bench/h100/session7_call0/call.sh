#!/bin/bash
# Session 7, call 0: baseline phases of the segmented medium/small layouts at main 82d27be, CUB's segmented rows, device limits.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
$b/gpusort devices | tee -a $O/machine.txt
timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > /dev/null 2>&1
echo "== t=$(el) phases"
for pass in 1 2; do
for cfg in "u32 0 medium" "u32 4 medium" "u32 0 small"; do
  SEGMENTED_PHASES=1 timeout 30 $top/segmented_dev/segmented_timing $cfg 24 2>&1 | tee -a $O/phases$pass.log | grep -v phase
done
done
echo "== t=$(el) cub"
timeout 100 $b/cub_baseline --segmented --seed 2026 --time-budget 60 --csv $O/cub.csv 2>&1 | tee $O/cub.log | grep -E "^ *(cub|\()" | awk '{print $1,$2,$3,$4,$5,$6,$7}'
echo "== t=$(el) done"
