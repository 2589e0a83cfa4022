#!/bin/bash
# Session 11, call 2: small_sort_timing (small_radix candidates) and GPU tests of SmallRadix / OnesweepPersistent; gpusort bench, base (main ddf0845) vs new (persistent, claim while ranking) vs byid
# (persistent, tiles by id), beside CUB, 2^18-2^28, both passes.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
timeout 120 $top/new/small_sort_timing 25 8 > $O/small.txt 2>&1; echo "small exit $? t=$(el)"; cat $O/small.txt | tail -n 40
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 28 --step 2"
timeout 150 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for pass in 1 2; do for v in base new byid; do
  timeout 90 $top/$v/gpusort bench $A --algorithms onesweep,automatic --json $O/gs_${v}_$pass.json > $O/gs_${v}_$pass.log 2>&1; echo "$v $pass exit $? t=$(el)"
done; done
left=$(( 590 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='*SmallRadix*:OnesweepPersistent*' > "$O/gtest.log" 2>&1; echo "gtest exit $? t=$(el)")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt && rm -f *.log *.json *.txt
