#!/bin/bash
# Session 6, call J: partition (now with the bucketed medium path inside) vs Onesweep vs CUB at 2^18-2^22, two passes.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/j
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/j/machine.txt; date -u | tee -a $O/j/machine.txt
s=12345
for pass in 1 2; do
echo "== pass $pass"
timeout 50 $b/cub_baseline --seed $s --keys u32,u32+u32,u32-skew99 --min-log2 18 --max-log2 22 --step 2 --time-budget 30 --csv $O/j/cub$pass.csv 2>&1 | tee $O/j/cub$pass.log | grep -E "^cub" | awk '{print $1,$3,$4,$5}'
timeout 80 $b/gpusort bench --seed $s --algorithms partition,onesweep --keys u32,u32+u32,u32-skew99 --min-log2 18 --max-log2 22 --step 2 --time-budget 50 --csv $O/j/gs$pass.csv 2>&1 | tee $O/j/gs$pass.log | grep -E "^gpusort" | awk '{print $1,$2,$3,$4,$5}'
done
cd $O && tar czf all.tar.gz j; rm -rf j
