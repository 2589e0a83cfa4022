#!/bin/bash
# Session 11, call 1: persistent workgroups (claim while ranking / by id) against the product, dev timing
# (u32, u32+u32, u64, f32 at 2^22/2^24/2^28); the 30 ms check in onesweep_clock; gpusort bench base vs new
# (persistent, claim) beside CUB, twice; GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
$top/new/gpusort devices | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
for p in "0 0 1 0 0" "0 0 0 1 1" "0 0 1 1 1" "0 0 0 1 0"; do set -- $p
  echo "u32 claim=$3 persistent=$4 prefetch=$5: $($D/shader_stats onesweep_pass 512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0 $3 $4 $5 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/shader_stats.txt
  echo "pairs claim=$3 persistent=$4 prefetch=$5: $($D/shader_stats onesweep_pass 512 1 0 0 1 32 32 16 64 0 16 0 1 1 0 0 0 $3 $4 $5 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/shader_stats.txt
done
echo "== t=$(el) timing"
B="ONESWEEP_PERSISTENT=132 ONESWEEP_CLAIM_BY_ID=0"; I="ONESWEEP_PERSISTENT=132 ONESWEEP_CLAIM_BY_ID=1"
for k in "u32 0" "u32 4" "u64 0" "f32 0"; do for l in 24 28; do
  for e in "ONESWEEP_PERSISTENT=0 ONESWEEP_CLAIM_BY_ID=1" "$B" "$I" "ONESWEEP_PERSISTENT=264 ONESWEEP_CLAIM_BY_ID=0" "$B ONESWEEP_PREFETCH=0"; do
    echo "$k $l | $e | $(env $e timeout 60 $D/onesweep_timing $k $l 2>&1 | tail -n 1)" | tee -a $O/timing.txt
  done; done; done
echo "== t=$(el) clock"
for e in "ONESWEEP_PERSISTENT=0" "$B" "$I" "$I ONESWEEP_PREFETCH=0"; do echo "$e" >> $O/clock.txt; env $e timeout 60 $D/onesweep_clock 28 512 20 2>&1 | head -n 3 >> $O/clock.txt; done
kill $mon
echo "== t=$(el) GPU tests"
left=$(( 590 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='*Onesweep*:AllKeyTypes/Onesweep.*:*IndirectCount*:PartitionSortPaths*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt *.csv && rm -f *.log *.json *.txt *.csv
