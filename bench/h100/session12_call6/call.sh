#!/bin/bash
# Session 12, call 6: the histogram's grid at small n (ONESWEEP_HIST_PER_UNIT: 0 = four rounds per workgroup, as
# today; k = at least k workgroups per SM, one round each), whole sort and phases, onesweep_timing.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 25 )); while [ $(date +%s) -lt $end ]; do timeout 20 $D/onesweep_timing u32 0 24 >/dev/null 2>&1; done
for rep in 1 2; do
for c in "u32 0 18 384 8" "u32 0 19 512 8" "u32 0 20 512 8" "u32 0 22 512 8" "u32 4 18 384 8" "u32 4 20 512 16" "u64 0 18 384 8" "u64 0 20 512 16"; do
  set -- $c
  for h in 0 1 2 4; do
    t=$(ONESWEEP_HIST_PER_UNIT=$h timeout 30 $D/onesweep_timing $1 $2 $3 $4 $5 2>&1 | tail -n 1 | grep -oE 'median +[0-9.]+|WRONG')
    p=$(ONESWEEP_PHASES=1 ONESWEEP_HIST_PER_UNIT=$h timeout 30 $D/onesweep_timing $1 $2 $3 $4 $5 2>&1 | grep -oE 'phases.*')
    echo "$1+$2 2^$3 $4x$5 per_unit=$h | $t | $p" | tee -a $O/hist.txt
  done; done; done
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt && rm -f *.txt
