#!/bin/bash
# Session 11, call 3: persistent workgroups, first tile by id then claims (new) against main ddf0845 (base):
# gpusort bench beside CUB; dev timing of hybrid vs all-by-id at 2^22-2^28; clock profile; GPU tests.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 28 --step 2"
timeout 100 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for v in base new; do
  timeout 130 $top/$v/gpusort bench $A --algorithms onesweep,automatic --json $O/gs_${v}.json > $O/gs_${v}.log 2>&1; echo "$v exit $? t=$(el)"
done
H="ONESWEEP_PERSISTENT=132 ONESWEEP_CLAIM_BY_ID=0"; I="ONESWEEP_PERSISTENT=132 ONESWEEP_CLAIM_BY_ID=1"
for k in "u32 0" "f32 0"; do for l in 22 24 28; do
  for e in "ONESWEEP_PERSISTENT=0 ONESWEEP_CLAIM_BY_ID=1" "$H" "$I"; do
    echo "$k $l | $e | $(env $e timeout 60 $D/onesweep_timing $k $l 2>&1 | tail -n 1)" | tee -a $O/timing.txt
  done; done; done
echo "== t=$(el) clock"
for e in "$H" "$I"; do echo "$e" >> $O/clock.txt; env $e timeout 60 $D/onesweep_clock 28 512 20 2>&1 | head -n 3 >> $O/clock.txt; done
echo "== t=$(el) GPU tests"
left=$(( 590 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='OnesweepPersistent*:OnesweepTilesById*:OnesweepFallback*:OnesweepIndirect*:AllKeyTypes/Onesweep.*:*IndirectCount*:PartitionSortPaths*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8; grep -c "OK \]" $O/gtest.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt && rm -f *.log *.json *.txt
