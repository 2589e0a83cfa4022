#!/bin/bash
# Session 6, call A: segmented phase profile (#13), partition vs onesweep vs CUB (#12), small-n first row (#12).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/a
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/a/machine.txt; date -u | tee -a $O/a/machine.txt
echo "== t=$(el) segmented phases"
for cfg in "u32 0 medium" "u32 4 medium" "u32 0 powerlaw" "u32 4 powerlaw" "u32 0 small" "u32 0 large"; do
  SEGMENTED_PHASES=1 timeout 30 $top/segmented_dev/segmented_timing $cfg 24 2>&1 | tee -a $O/a/phases.log
done
echo "== t=$(el) cub segmented"
timeout 60 $b/cub_baseline --segmented --seed 7 --time-budget 40 2>&1 | tee $O/a/cub_seg.log | grep -E "^cub" | awk '{print $1,$2,$3,$4,$5,$6}'
echo "== t=$(el) partition vs onesweep vs cub"
s=12345
timeout 50 $b/cub_baseline --seed $s --keys u32,u32+u32,u64,u32-skew99 --min-log2 18 --max-log2 22 --step 2 --time-budget 30 --csv $O/a/cub_mid.csv 2>&1 | tee $O/a/cub_mid.log | grep -E "^cub" | awk '{print $1,$3,$4,$5}'
timeout 80 $b/gpusort bench --seed $s --algorithms partition,onesweep --keys u32,u32+u32,u64,u32-skew99 --min-log2 18 --max-log2 22 --step 2 --time-budget 50 --csv $O/a/gs_mid.csv 2>&1 | tee $O/a/gs_mid.log | grep -E "^gpusort" | awk '{print $1,$2,$3,$4,$5}'
echo "== t=$(el) small n"
timeout 40 $b/cub_baseline --seed $s --keys u32,f32,u32+u32 --max-log2 16 --time-budget 20 --csv $O/a/cub_small.csv 2>&1 | tee $O/a/cub_small.log | grep -E "^cub" | awk '{print $1,$3,$4,$5}'
for i in 1 2; do
timeout 40 $b/gpusort bench --seed $s --algorithms automatic --keys u32,f32,u32+u32 --max-log2 16 --time-budget 20 --json $O/a/gs_small$i.json 2>&1 | tee $O/a/gs_small$i.log | grep -E "^gpusort" | awk '{print $1,$2,$3,$4,$5}'
done
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz a; rm -rf a
