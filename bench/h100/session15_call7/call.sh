#!/bin/bash
# Session 15, call 7 (final numbers): automatic at main 978dfbc (bare-key tiles for keys without
# values, 32- and 64-bit; values loaded with the keys into shared memory; up to 2048 bare keys in
# one dispatch) against session 14's main 2f66db2 (base), gpusort bench at 2^10-2^20 beside CUB,
# alternately twice; skewed, low-bit, few-distinct and all-equal keys (u32 and u64) beside
# Onesweep at 2^12-2^18; skewed keys at 2^20 and 2^22 beside CUB; GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,u32+u32,u64,u64+u32,f32 --min-log2 10 --max-log2 20 --step 1"
S="--seed 2026 --keys u32-skew99,u32+u32-skew99,u32-low16,u32-few16,u32-equal,u64-low16,u64-few16,u64-equal --min-log2 12 --max-log2 18 --step 1"
S3="--seed 2026 --keys u32-skew99,u32+u32-skew99,u64-skew99 --min-log2 20 --max-log2 22 --step 2"
timeout 100 $here/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
timeout 60 $here/cub_baseline $S3 --json $O/cub_s3.json > $O/cub_s3.log 2>&1; echo "cub s3 exit $? t=$(el)"
for p in 1 2; do
  timeout 100 $here/gpusort bench $A --algorithms automatic --json $O/gpusort_$p.json > $O/gpusort_$p.log 2>&1; echo "base $p exit $? t=$(el)"
  timeout 100 $here/gpusort_v bench $A --algorithms automatic --json $O/gpusort_v_$p.json > $O/gpusort_v_$p.log 2>&1; echo "new $p exit $? t=$(el)"
  timeout 100 $here/gpusort_v bench $S --algorithms automatic,onesweep --json $O/s_$p.json > $O/s_$p.log 2>&1; echo "new s $p exit $? t=$(el)"
done
timeout 60 $here/gpusort_v bench $S3 --algorithms automatic --json $O/s3.json > $O/s3.log 2>&1; echo "new s3 exit $? t=$(el)"
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 200 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*:Engine.*:SegmentedMedium*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json && rm -f *.json
