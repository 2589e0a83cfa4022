#!/bin/bash
# Session 6, call I: the small classes' packing (log2 min tile) for the second level's pieces and the small layout.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/i
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > /dev/null 2>&1
for m in 7 8 9 10 7; do
  for cfg in "u32 0 medium" "u32 4 medium" "u32 0 small" "u32 4 small"; do
    SEGMENTED_MIN_TILE=$m timeout 30 $top/segmented_dev/segmented_timing $cfg 24 2>&1 | tee -a $O/i/all.log | grep median
  done
done
cd $O && tar czf all.tar.gz i; rm -rf i
