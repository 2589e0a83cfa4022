#!/bin/bash
# Session 13, call 9: GPU tests with validation of the final small-array sort (main HEAD).
set -u
top=$(cd "$(dirname "$0")" && pwd)
source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 400 "$top/tests/gpusort_tests" --gtest_filter='SmallSort*:AllKeyTypes/SmallSort.*:IndirectCount*:Engine.*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
cd $O && tar czf all.tar.gz *.log && rm -f *.log
