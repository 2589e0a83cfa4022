#!/bin/bash
# Session 15, call 2: two-level merge bands for 64-bit keys at 2^18-2^20 (gpusort_a: tiles of
# 2048 in groups of 16 at every size; gpusort_b: tiles of 1024 in groups of 8 at 2^18, of 16 at
# 2^19, tiles of 2048 in groups of 32 at 2^20) against HEAD (Onesweep there), alternately twice,
# on spread, skewed, below-2^16, 16-distinct and all-equal u64 keys and u64+u32 pairs, beside CUB.
set -u
top=$(cd "$(dirname "$0")" && pwd)
here=$top/new; source $top/new/device_setup.sh >/dev/null 2>&1
O=$OUT
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/machine.txt; date -u | tee -a $O/machine.txt
end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do timeout 20 $top/od/onesweep_timing u32 0 24 >/dev/null 2>&1; done
U="--seed 2026 --keys u64,u64+u32,u64-skew99,u64-low16,u64-few16,u64-equal --min-log2 18 --max-log2 20 --step 1"
timeout 90 $here/cub_baseline $U --json $O/cub.json > $O/cub.log 2>&1; echo "cub exit $? t=$(el)"
for p in 1 2; do
  for v in gpusort gpusort_a gpusort_b; do
    timeout 100 $here/$v bench $U --algorithms automatic --json $O/${v}_$p.json > $O/${v}_$p.log 2>&1; echo "$v $p exit $? t=$(el)"
  done
done
echo "== t=$(el) done"
cd $O && tar czf all.tar.gz *.log *.json && rm -f *.json
