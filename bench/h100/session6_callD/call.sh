#!/bin/bash
# Session 6, call D (final): segmented rows beside CUB, phases, Onesweep rows 2^18-2^24 beside CUB, GPU tests.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/d
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/d/machine.txt; date -u | tee -a $O/d/machine.txt
timeout 30 $top/segmented_dev/segmented_timing u32 0 medium 24 > /dev/null 2>&1
echo "== t=$(el) segmented rows"
OUT=$O/d/seg CUB_BUDGET=45 GPUSORT_BUDGET=50 timeout 150 bash $b/run_segmented_h100.sh 2>&1 | grep -E "^(cub|gpusort) " | awk '{print $1,$2,$3,$4,$5,$6,$7}'
echo "== t=$(el) phases"
for cfg in "u32 0 medium" "u32 4 medium" "u32 0 small" "u32 0 powerlaw"; do
  SEGMENTED_PHASES=1 timeout 30 $top/segmented_dev/segmented_timing $cfg 24 2>&1 | tee -a $O/d/phases.log | grep -v phase
done
echo "== t=$(el) onesweep rows"
s=4242
timeout 60 $b/cub_baseline --seed $s --keys u32,u32+u32 --min-log2 18 --max-log2 24 --step 2 --time-budget 30 --csv $O/d/cub_mid.csv 2>&1 | tee $O/d/cub_mid.log | grep -E "^cub" | awk '{print $1,$3,$4,$5}'
timeout 80 $b/gpusort bench --seed $s --algorithms onesweep --keys u32,u32+u32 --min-log2 18 --max-log2 24 --step 2 --time-budget 40 --csv $O/d/gs_mid.csv 2>&1 | tee $O/d/gs_mid.log | grep -E "^gpusort" | awk '{print $1,$2,$3,$4,$5}'
echo "== t=$(el) GPU tests"
h=$top/host_path
baked=/work/main/build/tools/gpusort/gpusort
mkdir -p "$(dirname "$baked")" && ln -sf "$h/gpusort" "$baked"
mkdir -p /work/main/build/tests && ln -sf "$h/libgpusort_test_rename_fault.so" /work/main/build/tests/
left=$(( 560 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$h/gpusort_tests" --gtest_filter='*Segment*:*Onesweep*:*Indirect*:*Engine*:*Partition*:*Argsort*' > "$O/d/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/d/gtest.log" | tail -n 20; tail -n 3 $O/d/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz d; rm -rf d
