#!/bin/bash
# Session 12, call 5: two persistent workgroups per SM with small tiles (512 x 8, 384 x 12: <= 64 / 80 registers)
# against the product's one per SM (512 x 20), u32 keys alone, onesweep_timing.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $D/onesweep_timing u32 0 24 >/dev/null 2>&1; done
for s in "512 8 1 1" "384 12 1 1" "512 8 0 0" "512 20 1 1"; do set -- $s
  echo "u32 $1x$2 persistent=$3 prefetch=$4: $($D/shader_stats onesweep_pass $1 1 0 0 0 32 32 $2 64 0 16 0 0 1 1 0 0 0 $3 $4 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/t.txt; done
for rep in 1 2; do for l in 24 28; do
  for c in "0 0 - -" "512 8 264 0" "512 8 264 1" "512 8 0 1" "384 12 264 0" "384 12 264 1" "512 8 132 0"; do set -- $c
    if [ "$1" = 0 ]; then r=$(timeout 40 $D/onesweep_timing u32 0 $l 2>&1 | tail -n 1)
    else r=$(ONESWEEP_PERSISTENT=$3 ONESWEEP_CLAIM_BY_ID=$4 timeout 40 $D/onesweep_timing u32 0 $l $1 $2 2>&1 | tail -n 1); fi
    echo "2^$l $1x$2 groups=$3 by_id=$4 | $(echo "$r" | grep -oE 'median +[0-9.]+ ms|fallbacks [0-9]+|OK|WRONG.*')" | tee -a $O/t.txt
  done; done; done
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt && rm -f *.txt
