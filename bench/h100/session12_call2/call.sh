#!/bin/bash
# Session 12, call 2: small-array shapes with up to 64 tiles (tiles of 1024 at 2^16); Onesweep tile shapes at 2^19-2^23.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT; D=$top/od
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 25 )); while [ $(date +%s) -lt $end ]; do timeout 20 $D/onesweep_timing u32 0 24 >/dev/null 2>&1; done
echo "== t=$(el) small"
timeout 200 $top/new/small_sort_timing 25 8 shapes > $O/small.txt 2>&1; echo "small exit $? t=$(el)"; grep -A30 "u32 keys" $O/small.txt | head -n 50
echo "== t=$(el) shapes"
for k in "u32 0" "u32 4" "u64 0"; do for l in 19 20 21 22 23; do
  line="$k 2^$l |"
  for s in "512 20" "512 16" "512 12" "512 8" "384 8"; do
    r=$(timeout 30 $D/onesweep_timing $k $l $s 2>&1 | tail -n 1 | grep -oE 'median +[0-9.]+' | grep -oE '[0-9.]+$')
    line="$line $s:$r"
  done
  echo "$line" | tee -a $O/shapes.txt
done; done
for s in "512 12" "512 8" "512 10" "384 12"; do echo "u32 $s: $($D/shader_stats onesweep_pass ${s% *} 1 0 0 0 32 32 ${s#* } 64 0 16 0 0 1 1 0 0 1 0 0 2>&1 | grep -oE 'Register Count=[0-9]+')" | tee -a $O/shapes.txt; done
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.txt && rm -f *.txt
