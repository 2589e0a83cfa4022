#!/bin/bash
# Session 10, call 8 (experiment): persistent workgroups (132) with the next tile's keys requested not at all,
# before the look-back, or after it; against the product (tiles by id), u32 / pairs / u64 / f32.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
P="ONESWEEP_PERSISTENT=132"
for l in 24 28; do for rep in 1 2; do
  for e in "X=0" "$P ONESWEEP_PREFETCH_AT=0" "$P ONESWEEP_PREFETCH_AT=1" "$P ONESWEEP_PREFETCH_AT=2"; do
    echo "$e | $(env $e timeout 60 $D/onesweep_timing u32 0 $l 2>&1 | tail -n 1)" | tee -a $O/persistent.txt
  done; done; done
for k in "u32 4" "u64 0" "f32 0"; do for e in "X=0" "$P ONESWEEP_PREFETCH_AT=0" "$P ONESWEEP_PREFETCH_AT=2"; do
  echo "$e | $(env $e timeout 60 $D/onesweep_timing $k 28 2>&1 | tail -n 1)" | tee -a $O/persistent.txt
done; done
for e in "$P ONESWEEP_PREFETCH_AT=0" "$P ONESWEEP_PREFETCH_AT=2"; do echo "$e" >> $O/clock.txt; env $e timeout 60 $D/onesweep_clock 28 512 20 2>&1 | head -n 3 >> $O/clock.txt; done
cd $O && tar czf all.tar.gz *.txt && rm -f *.txt
