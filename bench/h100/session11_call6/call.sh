#!/bin/bash
# Session 11, call 6: the refactored pass (ac374f0: per-tile clear in one function) against the measured one
# (665e941's shader), onesweep_timing u32 2^24 / 2^28 with the product defaults, alternately; registers.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
for r in 1 2; do timeout 30 $top/od/onesweep_timing u32 0 28 2>&1 | tail -n 1 > /dev/null; done
for v in od od2; do echo "$v: $($top/$v/shader_stats onesweep_pass 512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0 0 1 1 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/timing.txt; done
for rep in 1 2; do for l in 24 28; do for v in od od2; do
  echo "$v $l | $(timeout 60 $top/$v/onesweep_timing u32 0 $l 2>&1 | tail -n 1)" | tee -a $O/timing.txt
done; done; done
cd $O && tar czf all.tar.gz *.txt && rm -f *.txt
