#!/bin/bash
# Session 7, call 4 (main after the Onesweep shape table): (a) frame sizes 2^18-2^22 beside CUB
# (bench/run_h100.sh, automatic and onesweep, + its skewed rows), (b) the segmented rows twice
# (pass 2 reported) and sort_by_key u32+u32 2^24 alone, (c) the GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
b=$top/bench; here=$b; source $b/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active --format=csv -lms 250 > $O/gpu_monitor.csv 2>&1 &
mon=$!
echo "== t=$(el) frame sizes"
mkdir -p $O/mid
OUT=$O/mid SEED=4242 GPUSORT_ALGORITHMS=automatic,onesweep CUB_BUDGET=40 GPUSORT_BUDGET=80 timeout 240 bash $b/run_h100.sh --min-log2 18 --max-log2 22 --step 1 --keys u32,u32+u32,u64,u64+u32 2>&1 | grep -E "^(cub|gpusort) " | awk '{print $1,$2,$3,$4,$5}'
echo "== t=$(el) segmented"
for pass in 1 2; do
  mkdir -p $O/seg$pass
  OUT=$O/seg$pass SEED=2026 CUB_BUDGET=45 GPUSORT_BUDGET=50 timeout 150 bash $b/run_segmented_h100.sh 2>&1 | grep -E "^(cub|gpusort) " | awk '{print $1,$2,$3,$4,$5,$6}' > $O/seg$pass/summary.txt
done
cat $O/seg2/summary.txt
timeout 60 $b/gpusort bench --seed 2026 --algorithms automatic --keys u32+u32 --min-log2 24 --max-log2 24 2>&1 | tee $O/sort_by_key.log | grep -E "^gpusort"
echo "== t=$(el) GPU tests"
left=$(( 570 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='*Segment*:*Onesweep*:*Indirect*:*Engine*:*Partition*:*Argsort*:*SmallSort*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
kill $mon
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz mid seg1 seg2 && rm -rf mid seg1 seg2
