#!/bin/bash
# Session 14, call 8: the review's refactor of tile_merge (one other_precedes helper) against the
# code call 7 measured (1fbce51), gpusort bench at 2^12-2^17, alternately twice.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,u32+u32,u64,f32,u32-skew99,u32-equal --min-log2 12 --max-log2 17 --step 1"
for p in 1 2; do
  timeout 90 $top/base/gpusort bench $A --algorithms automatic --json $O/gs_base_$p.json > $O/gs_base_$p.log 2>&1; echo "base $p exit $?"
  timeout 90 $top/new/gpusort bench $A --algorithms automatic --json $O/gs_new_$p.json > $O/gs_new_$p.log 2>&1; echo "new $p exit $?"
done
cd $O && tar czf all.tar.gz *.log *.json && rm -f *.log *.json
