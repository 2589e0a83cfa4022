#!/bin/bash
# Session 6, call E: the benchmark-vs-tool gap: timestamps after every barrier on/off.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/e
timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > /dev/null 2>&1
for cfg in "u32 0 small" "u32 4 small" "u32 0 medium" "u32 4 medium"; do
  for ph in 0 1; do
    if [ $ph = 1 ]; then export SEGMENTED_PHASES=1; else unset SEGMENTED_PHASES; fi
    timeout 30 $top/segmented_dev/segmented_timing $cfg 24 > $O/e/run.log 2>&1; cat $O/e/run.log >> $O/e/all.log
    echo "phases=$ph $(grep median $O/e/run.log)"
  done
done
timeout 100 $b/gpusort bench --segmented --layouts small,medium --seed 777 --time-budget 60 --json $O/e/gs_seg.json 2>&1 | grep -E "^gpusort " | awk '{print $1,$2,$3,$4,$5,$6,$7}'
cd $O && tar czf all.tar.gz e; rm -rf e
