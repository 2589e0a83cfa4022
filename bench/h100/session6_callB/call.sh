#!/bin/bash
# Session 6, call B: bucketed medium path (segmented phases + segmented rows beside CUB).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/b/machine.txt; date -u | tee -a $O/b/machine.txt
echo "== t=$(el) segmented phases"
timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > /dev/null 2>&1
for cfg in "u32 0 medium" "u32 4 medium"; do
  SEGMENTED_PHASES=1 timeout 30 $top/segmented_dev/segmented_timing $cfg 24 2>&1 | tee -a $O/b/phases.log | grep -v "phase" 
done
grep -A12 "medium" $O/b/phases.log
echo "== t=$(el) segmented rows"
timeout 100 $b/gpusort bench --segmented --seed 777 --time-budget 60 --json $O/b/gs_seg.json 2>&1 | grep -E "^(cub|gpusort) " | awk '{print $1,$2,$3,$4,$5,$6,$7}'
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz b; rm -rf b
