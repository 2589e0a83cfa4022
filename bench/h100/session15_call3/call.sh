#!/bin/bash
# Session 15, call 3: 32-bit keys without values sorted as bare keys in the small-array tile
# sort (gpusort_k: small_sort_tile_i2_keys, no origins) against HEAD (gpusort), gpusort bench at
# 2^10-2^17 alternately twice beside CUB; registers of both tile shaders; GPU tests with
# validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
for s in small_sort_tile_i2 small_sort_tile_i2_keys; do
  $here/shader_stats $s 512 1 0 0 0 0 32 1024 5 10 0 0 2>&1 | tail -4
  $here/shader_stats $s 256 1 0 0 0 0 32 512 5 9 0 0 2>&1 | tail -4
done > $O/stats.log; cat $O/stats.log
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,f32,u32+u32 --min-log2 10 --max-log2 17 --step 1"
timeout 90 $here/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for p in 1 2; do
  for v in gpusort gpusort_k; do
    timeout 100 $here/$v bench $A --algorithms automatic --json $O/${v}_$p.json > $O/${v}_$p.log 2>&1; echo "$v $p exit $? t=$(el)"
  done
done
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 200 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*:Engine.*:SegmentedMedium*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json && rm -f *.json
