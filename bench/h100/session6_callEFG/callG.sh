#!/bin/bash
# Session 6, call G: the segmented rows with pooled buffers (allocated once), three times.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/g
nvidia-smi --query-gpu=name --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv -lms 100 > $O/g/monitor.csv 2>&1 &
m=$!
for i in 1 2 3; do
  echo "== pooled $i"
  timeout 100 $b/gpusort bench --segmented --layouts small,medium --seed 777 --time-budget 60 --json $O/g/pooled$i.json 2>&1 | grep -E "^gpusort " | awk '{print $1,$2,$3,$4,$5,$6,$7}'
done
kill $m
cd $O && tar czf all.tar.gz g; rm -rf g
