#!/bin/bash
# Session 13, call 1: (#12) small-array merge with each key's searches split over lanes (small_sort_timing
# shapes) beside cub_small; (#11) why f32 and the u64 high word are slower: per-pass phases of onesweep_timing
# and CUB's per-kernel times from ncu; GPU tests of the small-array sort with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 30 )); while [ $(date +%s) -lt $end ]; do timeout 20 $D/onesweep_timing u32 0 24 >/dev/null 2>&1; done
echo "== t=$(el) small"
timeout 60 $here/cub_small 25 > $O/cub_small.txt 2>&1; echo "cub_small exit $?"
timeout 200 $here/small_sort_timing 25 8 shapes > $O/small.txt 2>&1; echo "small exit $? t=$(el)"
echo "== t=$(el) phases"
for k in u32 f32; do for l in 24 28; do ONESWEEP_PHASES=1 timeout 60 $D/onesweep_timing $k 0 $l >> $O/phases.txt 2>&1; done; done
ONESWEEP_PHASES=1 timeout 60 $D/onesweep_timing u64 0 26 >> $O/phases.txt 2>&1
echo "BEGIN_BIT=32" >> $O/phases.txt; ONESWEEP_BEGIN_BIT=32 ONESWEEP_PHASES=1 timeout 60 $D/onesweep_timing u64 0 26 >> $O/phases.txt 2>&1
echo "END_BIT=32" >> $O/phases.txt; ONESWEEP_END_BIT=32 ONESWEEP_PHASES=1 timeout 60 $D/onesweep_timing u64 0 26 >> $O/phases.txt 2>&1
for a in "u32 0 24" "f32 0 24" "u32 0 28" "f32 0 28" "u64 0 26"; do timeout 60 $D/cub_timing $a >> $O/cub_timing.txt 2>&1; done
echo "== t=$(el) ncu"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
for a in "u32 0 24" "f32 0 24" "u64 0 26"; do
  echo "### $a" >> $O/ncu.txt
  timeout 120 $NCU --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__occupancy_limit_registers,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static --launch-skip 20 --launch-count 12 $D/cub_timing $a >> $O/ncu.txt 2>&1; echo "ncu $a exit $? t=$(el)"
done
echo "== t=$(el) GPU tests"
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 120 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.txt && rm -f *.log *.txt
