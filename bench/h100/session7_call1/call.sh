#!/bin/bash
# Session 7, call 1: the tile classes' keys per invocation x min tile sweep (segmented_timing, u32/u32+u32 medium, u32 small).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; source $here/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > /dev/null 2>&1
for pass in 1 2; do
for cfg in "7 1" "8 2" "9 3" "9 2" "10 3" "10 2" "11 3" "8 3"; do
  set -- $cfg
  for l in "u32 0 medium" "u32 4 medium" "u32 0 small"; do
    SEGMENTED_MIN_TILE=$1 SEGMENTED_ITEMS=$2 timeout 30 $top/segmented_dev/segmented_timing $l 24 2>&1 | tail -n 1 | tee -a $O/sweep$pass.log
  done
done
done
for cfg in "7 1" "9 3" "10 2"; do set -- $cfg
SEGMENTED_PHASES=1 SEGMENTED_MIN_TILE=$1 SEGMENTED_ITEMS=$2 timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > $O/phases_$1_$2.log 2>&1
done
