#!/bin/bash
# Session 10, call 9: GPU tests with validation after the partition sort's zeroed commands (main, this commit).
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 500 "$top/tests/gpusort_tests" --gtest_filter='PartitionSort*:AllKeyTypes/PartitionSort*:OnesweepTilesById*:OnesweepSkipping*:OnesweepIndirect*:OnesweepFallback*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
cd $O && tar czf all.tar.gz *.log *.txt && rm -f *.log *.txt
