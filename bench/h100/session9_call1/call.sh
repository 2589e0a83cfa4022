#!/bin/bash
# Session 9, call 1: Onesweep pass variants as compile-time defines (packed, parked, item, parked+item):
# registers and u32/pairs/u64 timings beside the product pass and CUB, one call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/device_setup.sh" >/dev/null 2>&1
O=$out
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
stats() { # shader wg kpt cie keywords values
  "$here/shader_stats" $1 $2 $5 0 0 $6 32 32 $3 64 0 16 0 0 1 $4 0 0 2>&1 | grep -oE 'Register Count=[0-9]+|Local Memory Size=[0-9]+' | tr '\n' ' '
}
run() { # shader wg kpt cie key values log2n
  local r=$(stats $1 $2 $3 $4 $([ $5 = u64 ] && echo 2 || echo 1) $([ $6 = 0 ] && echo 0 || echo 1))
  local t=$(ONESWEEP_PASS_SHADER=$1 ONESWEEP_COUNTERS_IN_EXCHANGE=$4 timeout 60 "$here/onesweep_timing" $5 $6 $7 $2 $3 2>&1 | tail -n 1)
  echo "$1 $2x$3 cie$4 $5 v$6 2^$7 | $r | $t" | tee -a $O/variants.txt
}
for n in 24 28; do
  for k in "u32 0" "u32 4" "u64 0"; do "$here/cub_timing" $k $n 2>&1 | tail -n 1 | tee -a $O/cub.txt; done
done
echo "== t=$(el) u32 2^24"
run onesweep_pass 512 20 1 u32 0 24
for v in onesweep_pass onesweep_pass_packed onesweep_pass_item; do
  for s in "512 20" "512 16" "384 20" "384 16" "384 24" "256 20" "256 24" "768 10"; do run $v $s 1 u32 0 24; done
done
for v in onesweep_pass_parked onesweep_pass_parked_item; do
  for s in "384 20" "384 16" "384 24" "256 20" "256 24" "256 32" "512 16" "768 10"; do run $v $s 0 u32 0 24; done
done
run onesweep_pass 512 20 1 u32 0 24
echo "== t=$(el) pairs and u64 2^24"
for v in onesweep_pass onesweep_pass_packed onesweep_pass_item; do
  for s in "512 16" "384 20" "384 16" "256 20"; do run $v $s 0 u32 4 24; run $v $s 0 u64 0 24; done
done
echo "== t=$(el) 2^28"
run onesweep_pass 512 20 1 u32 0 28
for v in onesweep_pass_packed onesweep_pass_item; do run $v 512 20 1 u32 0 28; run $v 384 20 1 u32 0 28; done
for v in onesweep_pass_parked onesweep_pass_parked_item; do run $v 384 20 0 u32 0 28; run $v 384 24 0 u32 0 28; done
run onesweep_pass 512 20 1 u32 0 28
kill $mon
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt *.csv && rm -f *.txt *.csv
