#!/bin/bash
# Session 6, call F: the small layout's benchmark rows, segment_classify with per-thread atomics (old) vs aggregated (new).
set -u
top=$(cd "$(dirname "$0")" && pwd)
O=$OUT
here=$top/bench; b=$here; source $here/device_setup.sh >/dev/null 2>&1
mkdir -p $O/f
nvidia-smi --query-gpu=name --format=csv,noheader
for bin in gpusort gpusort_oldclassify gpusort gpusort_oldclassify; do
  echo "== $bin"
  timeout 100 $b/$bin bench --segmented --layouts small,medium --seed 777 --time-budget 60 --json $O/f/$bin.$RANDOM.json 2>&1 | grep -E "^gpusort " | awk '{print $1,$2,$3,$4,$5,$6,$7}'
done
cd $O && tar czf all.tar.gz f; rm -rf f
