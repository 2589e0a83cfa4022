#!/bin/bash
# Session 10, call 2: tiles by workgroup id (no claim) and early inclusive publishing, A/B in one call.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/od; source $top/od/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
tm() { # claim early key values log2n [extra env]
  local c=$1 e=$2; shift 2
  echo "c$c e$e $(ONESWEEP_CLAIM_BY_ID=$c ONESWEEP_EARLY_INCLUSIVE=$e timeout 60 $D/onesweep_timing "$@" 2>&1 | tail -n 1)" | tee -a $O/ab.txt
}
echo "== t=$(el) cub"
for k in "u32 0" "u32 4" "u64 0"; do for l in 20 22 24 28; do timeout 60 $D/cub_timing $k $l 2>&1 | tail -n 1 | tee -a $O/cub.txt; done; done
echo "== t=$(el) u32"
for l in 24 28 22 20; do for rep in 1 2; do for c in "0 0" "1 0" "0 1" "1 1"; do tm $c u32 0 $l; done; done; done
echo "== t=$(el) pairs u64 f32"
for l in 24 28 22; do for c in "0 0" "1 1"; do tm $c u32 4 $l; tm $c u64 0 $l; tm $c f32 0 $l; done
  ONESWEEP_GUESS=1 tm 1 1 u32 4 $l; ONESWEEP_GUESS=1 tm 1 1 u64 0 $l; done
echo "== t=$(el) clock"
for c in "1 0" "1 1" "0 1"; do set -- $c; for l in 24 28; do echo "claim $1 early $2" >> $O/clock.txt; ONESWEEP_CLAIM_BY_ID=$1 ONESWEEP_EARLY_INCLUSIVE=$2 timeout 60 $D/onesweep_clock $l 512 20 2>&1 | tee -a $O/clock.txt | head -n 3; done; done
kill $mon
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt *.csv && rm -f *.txt *.csv
