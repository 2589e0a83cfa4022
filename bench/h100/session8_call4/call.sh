#!/bin/bash
# Session 8, call 4 (the final code: tile counts in 32 bits in the pass): narrow vs base Onesweep (no cost below 2^31), 2^32 u32
# keys in core beside CUB (64-bit num_items), 2^32 u32 end to end in core, 2^32 u64 keys out of core with
# an 8 GiB device budget beside a 16-thread GNU parallel sort; then GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
free -g >> $O/machine.txt; nproc >> $O/machine.txt; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag >> $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active --format=csv -lms 250 > $O/gpu_monitor.csv 2>&1 &
mon=$!
for v in base new; do
  for spec in "512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0" "512 1 0 0 1 32 32 16 64 0 16 0 1 1 0 0 0" "512 2 0 0 0 32 32 16 64 0 16 0 1 0 0 0 0" "512 2 0 0 0 32 32 16 64 0 16 0 1 0 0 0 1"; do
    echo "$v $spec: $($top/${v}_dev/shader_stats onesweep_pass $spec 2>&1 | grep -oiE 'register[^=]*=[0-9]+' | head -1)" | tee -a $O/shader_stats.txt
  done
done
echo "== t=$(el) A/B"
for pass in 1 2; do
  for v in base new; do
    timeout 100 $top/$v/gpusort bench --seed 2026 --algorithms onesweep --keys u32,u32+u32,u64 --min-log2 20 --max-log2 28 --step 4 > $O/ab_${v}_$pass.log 2>&1
    echo "$v pass $pass"; grep -E "^gpusort" $O/ab_${v}_$pass.log | cut -c1-80
  done
done
echo "== t=$(el) 2^32 u32 in core, kernel"
timeout 150 $top/new/cub_baseline --seed 2026 --keys u32 --min-log2 32 --max-log2 32 --warmups 1 --runs 3 --json $O/cub32.json > $O/cub32.log 2>&1; echo "cub exit $?"; grep -E "^cub " $O/cub32.log | cut -c1-100
timeout 150 $top/new/gpusort bench --seed 2026 --algorithms onesweep --keys u32 --min-log2 32 --max-log2 32 --warmups 1 --runs 3 --json $O/gs32.json > $O/gs32.log 2>&1; echo "gpusort exit $?"; grep -E "^gpusort " $O/gs32.log | cut -c1-100
echo "== t=$(el) 2^32 u64 out of core, 8 GiB"
/usr/bin/time -v timeout 240 $top/new/gpusort bench --end-to-end --keys u64 --min-log2 32 --max-log2 32 --device-memory-limit 8G --cpu-baseline --warmups 0 --runs 1 --seed 14 > $O/ooc.log 2> $O/ooc_time.log; echo "exit $?"
tail -n 3 $O/ooc.log; grep -E "Maximum resident|Elapsed" $O/ooc_time.log
kill $mon
echo "== t=$(el) GPU tests"
left=$(( 590 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='BeyondOneAllocation*:OutOfCore*:Onesweep*:AllKeyTypes/Onesweep.*:Engine.*:PartitionSortPaths*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
echo "== t=$(el) done"
tail -n 2 $O/machine.txt
cd $O && tar czf all.tar.gz *.log *.json *.txt *.csv && rm -f *.log *.json *.txt *.csv
