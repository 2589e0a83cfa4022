#!/bin/bash
# Session 11, call 5 (the results): gpusort bench, main ddf0845 (base) against main 665e941 (new: persistent
# workgroups for 32-bit keys alone from 2^24), alternately twice, beside CUB, after 30 s of warm-up sorts.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
for r in 1 2 3; do timeout 30 $D/onesweep_timing u32 0 28 2>&1 | tail -n 1 | tee -a $O/warmup.txt; done
echo "warm-up done t=$(el)"
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 28 --step 2"
timeout 100 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for pass in 1 2; do for v in base new; do
  timeout 125 $top/$v/gpusort bench $A --algorithms onesweep,automatic --json $O/gs_${v}_$pass.json > $O/gs_${v}_$pass.log 2>&1; echo "$v $pass exit $? t=$(el)"
done; done
kill $mon
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt *.csv && rm -f *.log *.json *.txt *.csv
