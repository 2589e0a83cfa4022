#!/bin/bash
# Session 15, call 6: single dispatches of 2048 and 4096 keys (1024 x 2, 512 x 4 and 1024 x 4,
# bare-key tiles) against tiles + merge, small_sort_timing at 2^10-2^12.
#
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
timeout 200 $here/small_sort_timing 25 8 shapes 12 > $O/shapes.log 2>&1; echo "shapes exit $? t=$(el)"; cat $O/shapes.log
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.txt
