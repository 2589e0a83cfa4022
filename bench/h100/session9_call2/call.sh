#!/bin/bash
# Session 9, call 2: main with item-by-item ranking and the plan folded into the histogram (new) against
# main b981241 (base), beside CUB, 2^18-2^28; tile shapes of the new ranking; GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
D=$top/onesweep_dev
for s in "512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0" "512 1 0 0 1 32 32 16 64 0 16 0 1 1 0 0 0" "512 2 0 0 0 32 32 16 64 0 16 0 1 0 0 0 0" "384 1 0 0 0 32 32 8 64 0 16 0 0 1 1 0 0"; do
  echo "$s: $($D/shader_stats onesweep_pass $s 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/shader_stats.txt
done
echo "== t=$(el) shapes"
for s in "512 20" "640 16" "768 12" "1024 10"; do ONESWEEP_COUNTERS_IN_EXCHANGE=1 timeout 60 $D/onesweep_timing u32 0 24 $s 2>&1 | tail -n 1 | tee -a $O/shapes.txt; done
for s in "512 16" "640 12" "768 10" "384 20"; do timeout 60 $D/onesweep_timing u32 4 24 $s 2>&1 | tail -n 1 | tee -a $O/shapes.txt; timeout 60 $D/onesweep_timing u64 0 24 $s 2>&1 | tail -n 1 | tee -a $O/shapes.txt; done
echo "== t=$(el) bench"
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 28 --step 2"
timeout 150 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $?"
for v in base new; do
  timeout 120 $top/$v/gpusort bench $A --algorithms onesweep,automatic --json $O/gs_$v.json > $O/gs_$v.log 2>&1; echo "$v exit $?"
done
grep -E "^cub " $O/cub.log | cut -c1-90
for v in base new; do echo $v; grep -E "^gpusort" $O/gs_$v.log | cut -c1-90; done
kill $mon
echo "== t=$(el) GPU tests"
left=$(( 585 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='*Onesweep*:AllKeyTypes/Onesweep.*:*IndirectCount*:PartitionSortPaths*:Engine.*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt *.csv && rm -f *.log *.json *.txt *.csv
