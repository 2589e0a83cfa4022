#!/bin/bash
# Session 10, call 7 (profiling only): the load phase with 4 keys per load instruction (wrong results), and what
# each step of the product pass costs (PROFILE_OMIT, wrong results), u32 keys.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
for l in 24 28; do for rep in 1 2; do
  for e in X=0 ONESWEEP_VEC4_LOADS=1 ONESWEEP_PROFILE_OMIT=1 ONESWEEP_PROFILE_OMIT=2 ONESWEEP_PROFILE_OMIT=4 ONESWEEP_PROFILE_OMIT=8 ONESWEEP_PROFILE_OMIT=16 ONESWEEP_PROFILE_OMIT=7; do
    echo "$e $(env $e timeout 60 $D/onesweep_timing u32 0 $l 2>&1 | tail -n 1)" | tee -a $O/omit.txt
  done; done; done
for e in X=0 ONESWEEP_VEC4_LOADS=1; do for l in 24 28; do echo "$e" >> $O/clock.txt; env $e timeout 60 $D/onesweep_clock $l 512 20 2>&1 | head -n 3 >> $O/clock.txt; done; done
cd $O && tar czf all.tar.gz *.txt && rm -f *.txt
