#!/bin/bash
# Session 15, call 4: 64-bit keys without values as bare keys too (small_sort_tile_i2_keys64) and
# values loaded with the keys into shared memory (gpusort_v, main after 1d591b6) against HEAD of
# session 14 (gpusort), gpusort bench at 2^10-2^17 alternately twice beside CUB; registers; GPU
# tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
{
  $here/shader_stats small_sort_tile_i2 512 2 0 0 0 0 64 1024 5 10 0 0
  $here/shader_stats small_sort_tile_i2_keys64 512 2 0 0 0 0 64 1024 5 10 0 0
  $here/shader_stats small_sort_tile_i2 512 1 0 0 1 0 32 1024 5 10 0 0
  $here/shader_stats small_sort_tile_i2 512 2 0 0 1 0 64 1024 5 10 0 0
} 2>&1 | grep -i register > $O/stats.txt; cat $O/stats.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,u32+u32,u64,u64+u32,f32 --min-log2 10 --max-log2 17 --step 1"
timeout 90 $here/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for p in 1 2; do
  for v in gpusort gpusort_v; do
    timeout 100 $here/$v bench $A --algorithms automatic --json $O/${v}_$p.json > $O/${v}_$p.log 2>&1; echo "$v $p exit $? t=$(el)"
  done
done
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 200 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*:Engine.*:SegmentedMedium*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt && rm -f *.json
