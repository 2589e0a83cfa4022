#!/bin/bash
# Session 7, call 9 (after the review commit: segment_bucket's histogram reads as one function,
# segment_plan without the piece count): the segmented rows beside CUB twice (pass 2 reported).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
b=$top/bench; here=$b; source $b/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
for pass in 1 2; do
  mkdir -p $O/seg$pass
  OUT=$O/seg$pass SEED=2026 CUB_BUDGET=45 GPUSORT_BUDGET=50 timeout 150 bash $b/run_segmented_h100.sh > $O/seg$pass/run.log 2>&1
done
grep -hE "^(cub|gpusort) " $O/seg2/cub.log $O/seg2/gpusort.log | cut -c1-100
cd $O && tar czf all.tar.gz seg1 seg2 && rm -rf seg1 seg2
