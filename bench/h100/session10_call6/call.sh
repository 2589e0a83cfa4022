#!/bin/bash
# Session 10, call 6: GPU tests with validation on main 622b218; the full-tile copy for u32 keys alone, A/B.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
for l in 22 24 26 28; do for rep in 1 2; do for f in 0 1; do
  echo "ftc $f $(ONESWEEP_FULL_TILE_COPY=$f timeout 60 $D/onesweep_timing u32 0 $l 2>&1 | tail -n 1)" | tee -a $O/ftc.txt
done; done; done
echo "== t=$(el) GPU tests"
left=$(( 595 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='*Onesweep*:AllKeyTypes/Onesweep.*:*IndirectCount*:PartitionSortPaths*:Engine.*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.txt && rm -f *.log *.txt
