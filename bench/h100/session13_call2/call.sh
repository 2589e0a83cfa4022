#!/bin/bash
# Session 13, call 2: (#12) merge lanes x tile sizes at 2^10-2^16 (small_sort_timing shapes); (#11) u64 digits by
# one 64-bit shift (od_new) against the branch per word (od), phases, alternately twice; registers.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
for v in od od_new; do for k in "2 0 0 1" "1 0 0 0"; do set -- $k
  echo "$v kw $1: $($top/$v/shader_stats onesweep_pass 512 $1 0 0 0 32 32 $([ $1 = 2 ] && echo 16 || echo 20) 64 0 16 0 $4 $([ $1 = 2 ] && echo 0 || echo 1) $([ $1 = 2 ] && echo 0 || echo 1) 0 0 1 0 0 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/stats.txt; done; done
for p in 1 2; do for v in od od_new; do
  for a in "u64 0 26" "u64 4 26" "u64 0 24" "u32 0 24"; do echo "$v $p" >> $O/u64.txt; ONESWEEP_PHASES=1 timeout 60 $top/$v/onesweep_timing $a >> $O/u64.txt 2>&1; done
done; done
echo "== t=$(el) small"
timeout 300 $here/small_sort_timing 25 8 shapes > $O/small.txt 2>&1; echo "small exit $? t=$(el)"
echo "== t=$(el) GPU tests"
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 150 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*:AllKeyTypes/Onesweep.*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.txt && rm -f *.log *.txt
