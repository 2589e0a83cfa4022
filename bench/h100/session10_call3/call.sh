#!/bin/bash
# Session 10, call 3: speculative input + tiles by id + persistent workgroups with prefetch, against main 0366d31.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/od; source $top/od/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
for s in "0 0" "1 0" "1 1"; do set -- $s
  echo "claim $1 persistent $2: $($D/shader_stats onesweep_pass 512 1 0 0 0 32 32 20 64 0 16 0 0 1 1 0 0 $1 0 $2 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/ab.txt
done
tm() { # label env... -- args
  local label=$1; shift; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "$label $(env "${envs[@]}" timeout 60 "$@" 2>&1 | tail -n 1)" | tee -a $O/ab.txt
}
echo "== t=$(el) u32"
for l in 24 28 22 20; do for rep in 1 2; do
  tm base X=1 -- $top/base_onesweep_timing u32 0 $l
  tm c0 ONESWEEP_CLAIM_BY_ID=0 -- $D/onesweep_timing u32 0 $l
  tm c1 ONESWEEP_CLAIM_BY_ID=1 -- $D/onesweep_timing u32 0 $l
  tm c1p132 ONESWEEP_CLAIM_BY_ID=1 ONESWEEP_PERSISTENT=132 -- $D/onesweep_timing u32 0 $l
  tm c1ftc ONESWEEP_CLAIM_BY_ID=1 ONESWEEP_FULL_TILE_COPY=1 -- $D/onesweep_timing u32 0 $l
done; done
echo "== t=$(el) others"
for l in 24 28; do for k in "u32 4" "u64 0" "f32 0"; do
  tm base X=1 -- $top/base_onesweep_timing $k $l
  tm c1 ONESWEEP_CLAIM_BY_ID=1 -- $D/onesweep_timing $k $l
  tm c1p132 ONESWEEP_CLAIM_BY_ID=1 ONESWEEP_PERSISTENT=132 -- $D/onesweep_timing $k $l
done; done
echo "== t=$(el) clock"
for e in "ONESWEEP_CLAIM_BY_ID=1" "ONESWEEP_CLAIM_BY_ID=1 ONESWEEP_PERSISTENT=132" "ONESWEEP_CLAIM_BY_ID=1 ONESWEEP_WINDOW=1" "ONESWEEP_CLAIM_BY_ID=1 ONESWEEP_WINDOW=4"; do
  for l in 24 28; do echo "$e" >> $O/clock.txt; env $e timeout 60 $D/onesweep_clock $l 512 20 2>&1 | head -n 3 | tee -a $O/clock.txt; done; done
kill $mon
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt *.csv && rm -f *.txt *.csv
