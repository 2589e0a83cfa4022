#!/bin/bash
# Session 7, call 2: the segmented rows beside CUB twice (pass 2 reported) at 0d2e2e5, phases of the medium layout.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
for pass in 1 2; do
  echo "== pass $pass"
  mkdir -p $O/pass$pass
  OUT=$O/pass$pass SEED=2026 CUB_BUDGET=45 GPUSORT_BUDGET=50 timeout 150 bash $b/run_segmented_h100.sh 2>&1 | grep -E "^(cub|gpusort) " | awk '{print $1,$2,$3,$4,$5,$6,$7}'
done
for l in "u32 0 medium" "u32 4 medium"; do
SEGMENTED_PHASES=1 timeout 30 $top/segmented_dev/segmented_timing $l 24 >> $O/phases.log 2>&1
done
grep median $O/phases.log
cd $O && tar czf all.tar.gz pass1 pass2 phases.log machine.txt && rm -rf pass1 pass2
