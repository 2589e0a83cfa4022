#!/bin/bash
# Session 7, call 6 (main 02e47a3, the final code): the segmented rows beside CUB twice (pass 2
# reported), sort_by_key u32+u32 2^24 alone, phases of the medium layout, then the GPU tests with
# validation (the layer carried in .gl).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
b=$top/bench; here=$b; source $b/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active --format=csv -lms 250 > $O/gpu_monitor.csv 2>&1 &
mon=$!
for pass in 1 2; do
  mkdir -p $O/seg$pass
  OUT=$O/seg$pass SEED=2026 CUB_BUDGET=45 GPUSORT_BUDGET=50 timeout 150 bash $b/run_segmented_h100.sh > $O/seg$pass/run.log 2>&1
done
grep -hE "^(cub|gpusort) " $O/seg2/cub.log $O/seg2/gpusort.log | cut -c1-100
timeout 60 $b/gpusort bench --seed 2026 --algorithms automatic --keys u32+u32 --min-log2 24 --max-log2 24 2>&1 | tee $O/sort_by_key.log | grep -E "^gpusort"
for l in "u32 0 medium" "u32 4 medium"; do
  SEGMENTED_PHASES=1 timeout 30 $top/segmented_dev/segmented_timing $l 24 >> $O/phases.log 2>&1
done
grep median $O/phases.log
kill $mon
echo "== t=$(el) GPU tests"
left=$(( 575 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='Segment*:*SegmentedAllKeyTypes*:Engine*:OnesweepShapes*:OnesweepIndirect*:IndirectCount*:PartitionSortPaths*:*Argsort*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz seg1 seg2 && rm -rf seg1 seg2
