#!/bin/bash
# Session 11, call 4: the slow persistent sorts: per-run time and look-back fallbacks in onesweep_clock
# (plain and profiled alternating on one scratch), persistent hybrid / all by id, spin limit 64 / 1024,
# against one workgroup per tile; SM clock and throttle reasons every 100 ms.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $O/gpu_monitor.csv 2>&1 &
mon=$!
H="ONESWEEP_PERSISTENT=132 ONESWEEP_CLAIM_BY_ID=0"; I="ONESWEEP_PERSISTENT=132 ONESWEEP_CLAIM_BY_ID=1"
for rep in 1 2; do
for e in "ONESWEEP_PERSISTENT=0" "$H" "$H ONESWEEP_SPIN=1024" "$I" "$I ONESWEEP_SPIN=1024"; do
  echo "== $(el) s: $e" | tee -a $O/clock.txt; env $e timeout 60 $D/onesweep_clock 28 512 20 2>&1 | head -n 2 | cut -c1-400 | tee -a $O/clock.txt
done; done
kill $mon
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt *.csv && rm -f *.txt *.csv
