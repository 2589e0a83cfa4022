#!/bin/bash
# Session 13, call 3: (#12) automatic's new small-array bands (new, main 22b422e) against main 953b0f0 (base),
# gpusort bench beside CUB at 2^10-2^16, twice alternately; small_sort_timing shapes (2^16 merge variants); GPU tests.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 25 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 10 --max-log2 16 --step 1"
timeout 90 $here/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for p in 1 2; do for v in base new; do
  timeout 90 $top/$v/gpusort bench $A --algorithms automatic --json $O/gs_${v}_$p.json > $O/gs_${v}_$p.log 2>&1; echo "$v $p exit $? t=$(el)"
done; done
timeout 90 $here/cub_baseline $A --json $O/cub2.json > $O/cub2.log 2>&1; echo "cub2 exit $? t=$(el)"
timeout 200 $here/small_sort_timing 25 8 shapes > $O/small.txt 2>&1; echo "small exit $? t=$(el)"
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 150 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*:*Engine*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.txt *.json && rm -f *.log *.txt *.json
