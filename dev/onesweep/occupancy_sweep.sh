#!/bin/bash
# One run for a question of docs/design/onesweep.md: which Onesweep tile shapes
# get two workgroups per SM on the H100 (the driver's register count, as CUB's onesweep kernel
# gets two blocks per SM), and how fast each sorts u32 keys, beside CUB in the same run.
# On a machine with the NVIDIA driver and the Vulkan loader installed, from the repository root,
# after building the development tools (build/dev/):
#   dev/onesweep/occupancy_sweep.sh [BUILD_DIR]     (default: build; results in $OUT, default out/)
# LOG2N (default 24) sets n; SHAPES replaces the list of
# "workgroup:keys_per_thread:lookback_window:counters_in_exchange" entries.
set -uo pipefail
build=${1:-build}
out=${OUT:-out}
mkdir -p "$out"
tools=$build/dev
log2n=${LOG2N:-24}
# The default shape first, then 256-invocation shapes (two per SM wherever the driver gives them
# at most 128 registers) with the wide and a narrow look-back window, then 384 and 1024.
default_shapes="512:20:16:1 512:20:4:1"
for kpt in 8 10 12 14 16; do
  for window in 16 4; do default_shapes+=" 256:$kpt:$window:0 256:$kpt:$window:1"; done
done
for kpt in 8 10 12; do default_shapes+=" 384:$kpt:16:1 384:$kpt:4:1"; done
default_shapes+=" 1024:10:16:1 1024:10:4:1"
shapes=${SHAPES:-$default_shapes}

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
  if [ -x "$tools/cub_timing" ] && nvidia-smi >/dev/null 2>&1; then "$tools/cub_timing" u32 0 "$log2n"; fi
  echo "shape (wg x keys, window, counters in exchange) | registers | workgroups/SM | timing"
  for shape in $shapes; do
    IFS=: read -r workgroup keys window in_exchange <<<"$shape"
    # onesweep_pass specialization constants, in constant_id order (src/algorithms/onesweep/onesweep.cpp):
    # workgroup, u32 keys, no values, 32-wide subgroups, keys, spin limit 64, no refusals, window,
    # no profiling, no full-tile copy, guessed tile, counters in exchange.
    stats=$("$tools/shader_stats" onesweep_pass "$workgroup" 1 0 0 0 32 32 "$keys" 64 0 "$window" 0 0 1 \
      "$in_exchange" 2>&1)
    echo "$stats" >>"$out/shader_stats.txt"
    registers=$(grep -oiE 'register[^=]*=[0-9]+' <<<"$stats" | head -n 1 | grep -oE '[0-9]+$')
    per_sm=-
    # 65536 registers per SM, allocated per thread in steps of 8; at most 2048 threads per SM.
    if [ -n "$registers" ]; then
      rounded=$(((registers + 7) / 8 * 8))
      per_sm=$((65536 / (rounded * workgroup)))
      ((per_sm > 2048 / workgroup)) && per_sm=$((2048 / workgroup))
    fi
    timing=$(ONESWEEP_WINDOW=$window ONESWEEP_COUNTERS_IN_EXCHANGE=$in_exchange \
      "$tools/onesweep_timing" u32 0 "$log2n" "$workgroup" "$keys" 2>&1 | tail -n 1)
    printf '%4s x %2s  w%-2s  cie %s | %4s | %2s | %s\n' "$workgroup" "$keys" "$window" "$in_exchange" \
      "${registers:--}" "$per_sm" "$timing"
  done
} 2>&1 | tee "$out/occupancy_sweep.txt"
