#!/bin/bash
# Session 14, call 7 (final numbers): automatic with adaptive merge buckets (subgroups' 3rd-least and
# 3rd-greatest sampled keys) and tiles in order skipping their network in a two-level band to
# 2^17, the ends of a long bucket range read with the search's first probe (new, main HEAD) against
# base 33d2ea7, gpusort bench at 2^10-2^20 beside CUB, twice alternately; skewed, low-bit,
# few-distinct and all-equal keys beside Onesweep at 2^12-2^18; skewed keys at 2^20 and 2^22 beside
# CUB; GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 10 --max-log2 20 --step 1"
S="--seed 2026 --keys u32-skew99,u32+u32-skew99,u32-low16 --min-log2 12 --max-log2 18 --step 1"
S2="--seed 2026 --keys u32-few16,u32-equal --min-log2 12 --max-log2 18 --step 1"
S3="--seed 2026 --keys u32-skew99,u32+u32-skew99 --min-log2 20 --max-log2 22 --step 2"
timeout 90 $here/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
timeout 60 $here/cub_baseline $S --json $O/cub_s.json > $O/cub_s.log 2>&1; echo "cub s exit $? t=$(el)"
timeout 60 $here/cub_baseline $S3 --json $O/cub_s3.json > $O/cub_s3.log 2>&1; echo "cub s3 exit $? t=$(el)"
for p in 1 2; do
  timeout 90 $top/base/gpusort bench $A --algorithms automatic --json $O/gs_base_$p.json > $O/gs_base_$p.log 2>&1; echo "base $p exit $? t=$(el)"
  timeout 90 $top/new/gpusort bench $A --algorithms automatic --json $O/gs_new_$p.json > $O/gs_new_$p.log 2>&1; echo "new $p exit $? t=$(el)"
  timeout 90 $top/new/gpusort bench $S --algorithms automatic,onesweep --json $O/gs_s_$p.json > $O/gs_s_$p.log 2>&1; echo "new s $p exit $? t=$(el)"
  timeout 90 $top/new/gpusort bench $S2 --algorithms automatic,onesweep --json $O/gs_s2_$p.json > $O/gs_s2_$p.log 2>&1; echo "new s2 $p exit $? t=$(el)"
done
timeout 90 $top/base/gpusort bench $S --algorithms automatic --json $O/gs_s_base.json > $O/gs_s_base.log 2>&1; echo "base s exit $? t=$(el)"
timeout 90 $top/new/gpusort bench $S3 --algorithms automatic --json $O/gs_s3.json > $O/gs_s3.log 2>&1; echo "new s3 exit $? t=$(el)"
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 240 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*:Engine.*:SegmentedMedium*:All/SegmentedAllKeyTypes.MediumClasses/*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json && rm -f *.log *.json
