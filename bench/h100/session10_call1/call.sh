#!/bin/bash
# Session 10, call 1: where a Onesweep tile's time goes (SM clock records inside the pass), and the
# item-ranking pass at 384-invocation shapes with narrower look-back windows (registers, time).
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/od; source $top/od/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 500 > $O/gpu_monitor.csv 2>&1 &
mon=$!
echo "== t=$(el) clock profile"
for a in "24 512 20" "28 512 20" "22 512 20" "20 512 20" "18 384 8" "24 384 8" "24 1024 10"; do
  timeout 60 $D/onesweep_clock $a 2>&1 | tee -a $O/clock.txt
done
echo "== t=$(el) cub"
for l in 24 28; do timeout 60 $D/cub_timing u32 0 $l 2>&1 | tail -n 1 | tee -a $O/shapes.txt; done
echo "== t=$(el) shapes"
for s in 512:20:16:1 512:20:8:1 512:20:4:1 384:20:16:0 384:20:8:0 384:20:4:0 384:16:16:0 384:16:4:0 384:12:16:0 384:12:4:0 384:24:4:0 1024:10:16:1 1024:10:4:1; do
  IFS=: read -r wg kpt w cie <<<"$s"
  r=$($D/shader_stats onesweep_pass $wg 1 0 0 0 32 32 $kpt 64 0 $w 0 0 1 $cie 0 0 2>&1 | grep -oE 'Register Count=[0-9]+')
  tm=$(ONESWEEP_WINDOW=$w ONESWEEP_COUNTERS_IN_EXCHANGE=$cie timeout 60 $D/onesweep_timing u32 0 24 $wg $kpt 2>&1 | tail -n 1)
  echo "$s | $r | $tm" | tee -a $O/shapes.txt
done
kill $mon
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt *.csv && rm -f *.txt *.csv
