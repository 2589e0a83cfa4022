#!/bin/bash
# Session 9, call 3: main + the helper's indirect dispatches (new) against call 2's main (c2), twice alternately,
# 2^18-2^24, beside CUB; the clear by vkCmdFillBuffer (profiling option) in onesweep_timing's phases.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
A="--seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 24 --step 1"
timeout 100 $top/new/cub_baseline $A --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $?"
for pass in 1 2; do for v in c2 new; do
  timeout 100 $top/$v/gpusort bench $A --algorithms automatic --json $O/gs_${v}_$pass.json > $O/gs_${v}_$pass.log 2>&1; echo "$v $pass exit $?"
done; done
echo "== t=$(el) phases"
D=$top/onesweep_dev
for n in 18 20 22; do for f in 0 1; do
  echo "fill_clear=$f 2^$n" | tee -a $O/phases.txt
  if [ $f = 1 ]; then ONESWEEP_FILL_CLEAR=1 ONESWEEP_PHASES=1 timeout 60 $D/onesweep_timing u32 0 $n 2>&1 | tail -n 4 | tee -a $O/phases.txt
  else ONESWEEP_PHASES=1 timeout 60 $D/onesweep_timing u32 0 $n 2>&1 | tail -n 4 | tee -a $O/phases.txt; fi
done; done
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json *.txt && rm -f *.log *.json *.txt
