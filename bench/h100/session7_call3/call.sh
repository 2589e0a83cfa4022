#!/bin/bash
# Session 7, call 3: Onesweep tile shapes at the frame sizes 2^18-2^22 (issue #12): at 2^18 the default
# 512x20 tile gives 26 tiles for 132 SMs. onesweep_timing per shape, cub_timing beside it.
set -u
here=$(cd "$(dirname "$0")" && pwd)/onesweep_dev
source "$here/device_setup.sh" >/dev/null 2>&1
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
"$here/onesweep_timing" u32 0 20 > /dev/null 2>&1
for cfg in "u32 0" "u32 4" "u64 0"; do
  for log2 in 18 20 22; do
    echo "== $cfg 2^$log2: cub $("$here/cub_timing" $cfg $log2 2>&1 | tail -n 1)"
    for shape in "512 20" "512 16" "512 8" "384 8" "256 16" "256 8" "256 4" "128 8" "128 4"; do
      echo "$shape | $("$here/onesweep_timing" $cfg $log2 $shape 2>&1 | tail -n 1)"
    done
  done
done 2>&1 | tee $O/shapes.txt
