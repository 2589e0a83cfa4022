#!/bin/bash
# Session 7, call 5: (a) the GPU tests with validation (the layer carried in .gl), (b) issue #14:
# 2^32 u64 keys (32 GiB) from host memory to host memory out of core with an 8 GiB device budget,
# beside a 16-thread GNU parallel sort of the same array.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
b=$top/bench; here=$b; source $b/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
free -g | tee -a $O/machine.txt; nproc | tee -a $O/machine.txt
echo "== t=$(el) GPU tests"
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 330 "$top/tests/gpusort_tests" --gtest_filter='*Segment*:*Onesweep*:*Indirect*:*Engine*:*Partition*:*Argsort*:*SmallSort*-Cli*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) 2^32 u64 out of core"
/usr/bin/time -v timeout 220 $b/gpusort bench --end-to-end --keys u64 --min-log2 32 --max-log2 32 --device-memory-limit 8G --cpu-baseline --warmups 0 --runs 1 --seed 14 > $O/ooc.log 2> $O/ooc_time.log; echo "exit $?"
cat $O/ooc.log | tail -n 4; grep -E "Maximum resident|Elapsed" $O/ooc_time.log
echo "== t=$(el) done"
