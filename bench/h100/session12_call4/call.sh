#!/bin/bash
# Session 12, call 4: Onesweep size bands, 384 x 8 to 2^18 then 512 x 8 to 2^22 for 32-bit keys alone, to 2^19 otherwise (new), against
# 384 x 8 to 2^18 (base, main 2a4e068 + notes), gpusort bench beside CUB at 2^18-2^23; GPU tests with validation.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 30 )); while [ $(date +%s) -lt $end ]; do timeout 20 $D/onesweep_timing u32 0 24 >/dev/null 2>&1; done
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 23 --step 1"
timeout 100 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for p in 1 2; do for v in base new; do
  timeout 100 $top/$v/gpusort bench $A --algorithms onesweep,automatic --json $O/gs_${v}_$p.json > $O/gs_${v}_$p.log 2>&1; echo "$v $p exit $? t=$(el)"
done; done
echo "== t=$(el) GPU tests"
left=$(( 585 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='*OutOfCore*:Onesweep*:AllKeyTypes/Onesweep.*:*IndirectCount*:PartitionSort*:*Automatic*:*Engine*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt && rm -f *.log *.json *.txt
