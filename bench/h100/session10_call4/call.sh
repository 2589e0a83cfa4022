#!/bin/bash
# Session 10, call 4: main with tiles by id, keys requested before the plan word, digit starts folded into
# the counters (new) against main 0366d31 (base), beside CUB, 2^18-2^28 (bench protocol, seed 2026); the
# SM-clock profile of new; GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
echo "new: $($D/shader_stats onesweep_pass 512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0 1 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee $O/shader_stats.txt
echo "== t=$(el) bench"
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 28 --step 2"
timeout 150 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $?"
for pass in 1 2; do for v in base new; do
  timeout 120 $top/$v/gpusort bench $A --algorithms onesweep,automatic --json $O/gs_${v}_$pass.json > $O/gs_${v}_$pass.log 2>&1; echo "$v $pass exit $?"
done; done
grep -E "^cub " $O/cub.log | cut -c1-90
for v in base new; do echo $v; grep -E "^gpusort" $O/gs_${v}_2.log | cut -c1-90; done
echo "== t=$(el) clock"
for l in 24 28; do timeout 60 $D/onesweep_clock $l 512 20 2>&1 | head -n 3 | tee -a $O/clock.txt | cut -c1-700; done
kill $mon
echo "== t=$(el) GPU tests"
left=$(( 570 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='*Onesweep*:AllKeyTypes/Onesweep.*:*IndirectCount*:PartitionSortPaths*:Engine.*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt *.csv && rm -f *.log *.json *.txt *.csv
