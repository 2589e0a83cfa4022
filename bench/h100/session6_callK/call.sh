#!/bin/bash
# Session 6, call K (after the seglarge merge): the segmented rows beside CUB twice (pass 1 warms the machine), GPU tests.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/k
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/k/machine.txt; date -u | tee -a $O/k/machine.txt
for pass in 1 2; do
  echo "== t=$(el) pass $pass"
  OUT=$O/k/pass$pass SEED=2026 CUB_BUDGET=45 GPUSORT_BUDGET=50 timeout 150 bash $b/run_segmented_h100.sh 2>&1 | grep -E "^(cub|gpusort) " | awk '{print $1,$2,$3,$4,$5,$6,$7}'
done
echo "== t=$(el) GPU tests"
h=$top/host_path
baked=/work/main/build/tools/gpusort/gpusort
mkdir -p "$(dirname "$baked")" && ln -sf "$h/gpusort" "$baked"
mkdir -p /work/main/build/tests && ln -sf "$h/libgpusort_test_rename_fault.so" /work/main/build/tests/
left=$(( 560 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$h/gpusort_tests" --gtest_filter='*Segment*:*Onesweep*:*Indirect*:*Engine*:*Partition*:*Argsort*' > "$O/k/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/k/gtest.log" | tail -n 20; tail -n 3 $O/k/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz k; rm -rf k
