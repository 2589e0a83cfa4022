#!/bin/bash
# Session 8, call 6: the GPU tests of the final code (4da3150) that call 4 did not reach, validation on.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout 420 "$top/tests/gpusort_tests" --gtest_filter='PartitionSort*:Segmented*:*SegmentedAllKeyTypes*:OnesweepShapes*:OnesweepFallback*:OnesweepBits*:OnesweepScratch*:IndirectCount*:HostPath*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
cd $O && tar czf all.tar.gz gtest.log machine.txt && rm -f gtest.log machine.txt
