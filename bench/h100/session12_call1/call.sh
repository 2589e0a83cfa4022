#!/bin/bash
# Session 12, call 1: CUB's early counts (EARLY_COUNTS) against the product pass, one call.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
# warm-up: ~30 s of sorts (the fresh machine's slow state)
end=$(( $(date +%s) + 30 )); while [ $(date +%s) -lt $end ]; do timeout 20 $D/onesweep_timing u32 0 24 >/dev/null 2>&1; done
echo "== t=$(el) stats"
for e in 0 1; do
  echo "u32 persistent early=$e: $($D/shader_stats onesweep_pass 512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0 0 1 1 $e 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/stats.txt
  echo "u32 by id early=$e: $($D/shader_stats onesweep_pass 512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0 1 0 0 $e 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/stats.txt
  echo "pairs early=$e: $($D/shader_stats onesweep_pass 512 1 0 0 1 32 32 16 64 0 16 0 1 1 0 0 0 1 0 0 $e 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/stats.txt
  echo "u64 early=$e: $($D/shader_stats onesweep_pass 512 2 0 0 0 32 32 16 64 0 16 0 1 0 0 0 0 1 0 0 $e 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/stats.txt
  echo "u32 mid early=$e: $($D/shader_stats onesweep_pass 384 1 0 0 0 32 32 8 64 0 16 0 0 1 1 0 0 1 0 0 $e 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/stats.txt
done
echo "== t=$(el) timing"
run() { for e in 0 1; do echo "$1 $2 $3 | early=$e | $(ONESWEEP_EARLY=$e timeout 60 $D/onesweep_timing $1 $2 $3 2>&1 | tail -n 1)" | tee -a $O/timing.txt; done; }
for rep in 1 2; do for l in 18 20 22 24 28; do run u32 0 $l; done; done
for l in 18 20 22 24 28; do run u32 4 $l; done
for l in 20 22 24 28; do run u64 0 $l; done
for l in 22 24 28; do run f32 0 $l; done
echo "== t=$(el) clock"
for e in 0 1; do for l in 24 28; do echo "early=$e 2^$l" >> $O/clock.txt; ONESWEEP_EARLY=$e timeout 60 $D/onesweep_clock $l 2>&1 | head -n 12 >> $O/clock.txt; done; done
echo "== t=$(el) GPU tests"
left=$(( 585 - $(el) ))
(cd /tmp && GPUSORT_DEVICE=NVIDIA GPUSORT_TEST_VALIDATION=1 timeout $left "$top/tests/gpusort_tests" --gtest_filter='OnesweepEarly*:OnesweepPersistent*:OnesweepFallback*:AllKeyTypes/Onesweep.*' > "$O/gtest.log" 2>&1; echo "gtest exit $?")
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$O/gtest.log" | tail -n 8
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.txt && rm -f *.log *.txt
