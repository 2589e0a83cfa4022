#!/bin/bash
# Session 7, call 8 (huge pages for the merge buffers): issue #14, 2^32 u64 keys (32 GiB) from host memory to host
# memory out of core with an 8 GiB device budget, beside a 16-thread GNU parallel sort of the same array.
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
b=$top/bench; here=$b; source $b/device_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
free -g | tee -a $O/machine.txt; nproc | tee -a $O/machine.txt
/usr/bin/time -v timeout 500 $b/gpusort bench --end-to-end --keys u64 --min-log2 32 --max-log2 32 --device-memory-limit 8G --cpu-baseline --warmups 0 --runs 1 --seed 14 > $O/ooc.log 2> $O/ooc_time.log; echo "exit $?"
cat $O/ooc.log; grep -E "Maximum resident|Elapsed|error" $O/ooc_time.log
cat /sys/kernel/mm/transparent_hugepage/enabled | tee -a $O/machine.txt
