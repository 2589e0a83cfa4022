#!/bin/bash
# Session 12, call 8: the histogram's grid spread to one workgroup per SM at small n alone (new, main 4b6d6d7's
# revert of the plan part) against main 942b462 (base): gpusort bench beside CUB; histogram registers; GPU tests.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
for v in od od_allplan; do for k in "1 0" "2 0"; do
  echo "$v histogram keywords ${k% *}: $($top/$v/shader_stats onesweep_histogram 256 ${k% *} 0 0 0 8 0 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/stats.txt; done; done
end=$(( $(date +%s) + 30 )); while [ $(date +%s) -lt $end ]; do timeout 20 $D/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 22 --step 1"
B="--seed 2026 --keys u32,u64 --min-log2 24 --max-log2 28 --step 4"
timeout 60 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
timeout 60 $top/new/cub_baseline $B --json $O/cub_big.json > $O/cub_big.log 2>&1; echo "cub big exit $? t=$(el)"
for p in 1 2; do for v in base new; do
  timeout 80 $top/$v/gpusort bench $A --algorithms onesweep,automatic --json $O/gs_${v}_$p.json > $O/gs_${v}_$p.log 2>&1; echo "$v $p exit $? t=$(el)"
  timeout 80 $top/$v/gpusort bench $B --algorithms automatic --json $O/gsbig_${v}_$p.json > $O/gsbig_${v}_$p.log 2>&1; echo "$v $p big exit $? t=$(el)"
done; done
echo "== t=$(el) GPU tests"
left=$(( 560 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='OutOfCore.*:Onesweep*:AllKeyTypes/Onesweep.*:*IndirectCount*:PartitionSort*:*Automatic*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt && rm -f *.log *.json *.txt
