#!/bin/bash
# Session 6, call C: segment_bucket shape sweep (scatter phase = phase 3).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/c
timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > /dev/null 2>&1
for shape in "256 8" "512 8" "256 4" "512 4" "128 8" "128 16" "512 2" "256 16" "256 8"; do
  for cfg in "u32 0 medium" "u32 4 medium"; do
    SEGMENTED_BUCKET="$shape" SEGMENTED_PHASES=1 timeout 30 $top/segmented_dev/segmented_timing $cfg 24 > $O/c/run.log 2>&1
    cat $O/c/run.log >> $O/c/all.log
    echo "$(grep median $O/c/run.log | cut -d: -f1-3 | cut -c1-60) scatter $(grep 'phase  3' $O/c/run.log)"
  done
done
cd $O && tar czf all.tar.gz c; rm -rf c
