#!/bin/bash
# Session 15, call 1: what a dispatch the GPU decides not to run costs (dispatch_choice: direct,
# zero-group indirect, conditional rendering), and Onesweep / automatic on u64 keys that are
# spread, skewed, below 2^16, 16 distinct or all equal at 2^17-2^20 beside CUB.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
timeout 60 $here/dispatch_choice 25 8 > $O/choice_1.log 2>&1; echo "choice 1 exit $? t=$(el)"; cat $O/choice_1.log
U="--seed 2026 --keys u64,u64-skew99,u64-low16,u64-few16,u64-equal --min-log2 17 --max-log2 20 --step 1"
V="--seed 2026 --keys u32-few16,u32-equal,u32-low16 --min-log2 18 --max-log2 20 --step 2"
timeout 90 $here/cub_baseline $U --json $O/cub_u.json > $O/cub_u.log 2>&1; echo "cub u exit $? t=$(el)"
timeout 150 $here/gpusort bench $U --algorithms automatic,onesweep --json $O/gs_u.json > $O/gs_u.log 2>&1; echo "gs u exit $? t=$(el)"
timeout 90 $here/gpusort bench $V --algorithms onesweep --json $O/gs_v.json > $O/gs_v.log 2>&1; echo "gs v exit $? t=$(el)"
timeout 60 $here/dispatch_choice 25 8 > $O/choice_2.log 2>&1; echo "choice 2 exit $? t=$(el)"; cat $O/choice_2.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json && rm -f *.json
