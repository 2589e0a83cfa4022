#!/bin/bash
# Session 15, call 5: small_sort_timing's shape sweep at 2^10-2^13 with the bare-key tiles (main
# after 1d591b6 + keys64 + values in shared memory): which tile size and lanes now win at
# 2^11-2^13.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
timeout 200 $here/small_sort_timing 25 8 shapes 13 > $O/shapes.log 2>&1; echo "shapes exit $? t=$(el)"; cat $O/shapes.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.txt
