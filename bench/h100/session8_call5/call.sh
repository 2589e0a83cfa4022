#!/bin/bash
# Session 8, call 5 (the final code of issue #14): 2^32 u32 keys in core beside CUB (64-bit num_items), and
# 2^32 u64 keys out of core with an 8 GiB device budget beside a 16-thread GNU parallel sort (the kept runs'
# pages populated in the background while the runs sort).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
free -g >> $O/machine.txt; nproc >> $O/machine.txt; uname -r >> $O/machine.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active --format=csv -lms 250 > $O/gpu_monitor.csv 2>&1 &
mon=$!
echo "== t=$(el) 2^32 u32 in core, kernel"
timeout 150 $top/new/cub_baseline --seed 2026 --keys u32 --min-log2 32 --max-log2 32 --warmups 1 --runs 3 --json $O/cub32.json > $O/cub32.log 2>&1; echo "cub exit $?"; grep -E "^cub " $O/cub32.log | cut -c1-100
timeout 150 $top/new/gpusort bench --seed 2026 --algorithms onesweep --keys u32 --min-log2 32 --max-log2 32 --warmups 1 --runs 3 --json $O/gs32.json > $O/gs32.log 2>&1; echo "gpusort exit $?"; grep -E "^gpusort " $O/gs32.log | cut -c1-100
echo "== t=$(el) 2^32 u64 out of core, 8 GiB"
/usr/bin/time -v timeout 240 $top/new/gpusort bench --end-to-end --keys u64 --min-log2 32 --max-log2 32 --device-memory-limit 8G --cpu-baseline --warmups 0 --runs 1 --seed 14 > $O/ooc.log 2> $O/ooc_time.log; echo "exit $?"
tail -n 3 $O/ooc.log; grep -E "Maximum resident|Elapsed" $O/ooc_time.log
kill $mon
echo "== t=$(el) done"; tail -n 1 $O/machine.txt
cd $O && tar czf all.tar.gz *.log *.json *.txt *.csv && rm -f *.log *.json *.txt *.csv
