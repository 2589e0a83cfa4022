#!/bin/bash
# One device call for the questions in bench/NOTES-onesweep.md, sessions 3 and 5: which Onesweep
# tile shapes and register-economy variants get two workgroups per SM on the H100 (the driver's
# register count, as CUB's onesweep kernel gets two blocks per SM), and how fast each sorts u32
# keys, beside CUB in the same call.
# Staged by bench/onesweep_dev/stage.sh into .devrun/onesweep_dev/; run with carry
# [".gl", ".devrun/onesweep_dev"]:
#   bash .devrun/onesweep_dev/occupancy_sweep.sh
# LOG2N (default 24) sets n; SHAPES replaces the list of
# "workgroup:keys_per_thread:lookback_window:counters_in_exchange[:rank_chunk:packed_ranks:parked_keys]"
# entries (the last three default to 0, today's product code; see onesweep_pass.comp).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/device_setup.sh"  # root, out, the Vulkan loader
log2n=${LOG2N:-24}
# Session 5 (issue 11, register economy): today's code at the default 512 x 20 and at the shapes
# CUB-like occupancy needs (384 x 16-20: two workgroups per SM at <= 80 registers), then each
# register-economy variant at 384 x 16, 384 x 20, 512 x 16 and 512 x 20 (parked keys need the
# counters beside the exchange array, so 512 x 20 does not fit in 48 KiB; 384 x 24 instead).
# The session-3 list (256/384/1024-invocation shapes of today's code) was:
#   SHAPES="512:20:16:1 512:20:4:1 256:8:16:0 256:8:16:1 ... 1024:10:4:1"
default_shapes="512:20:16:1 384:20:16:1 384:16:16:1 512:16:16:1"
for variant in 4:0:0 0:1:0 4:1:0 2:1:0; do  # chunk 4; packed; chunk 4 + packed; chunk 2 + packed
  for shape in 384:16 384:20 512:16 512:20; do default_shapes+=" $shape:16:1:$variant"; done
done
for variant in 0:1:1 4:1:1 0:0:1; do  # parked + packed; parked + chunk 4 + packed; parked
  for shape in 384:16 384:20 384:24 512:16; do default_shapes+=" $shape:16:0:$variant"; done
done
shapes=${SHAPES:-$default_shapes}

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
  if [ -x "$here/cub_timing" ] && nvidia-smi >/dev/null 2>&1; then "$here/cub_timing" u32 0 "$log2n"; fi
  echo "shape (wg x keys, window, counters in exchange, rank chunk, packed, parked) | registers | workgroups/SM | timing"
  for shape in $shapes; do
    IFS=: read -r workgroup keys window in_exchange chunk packed parked <<<"$shape"
    chunk=${chunk:-0} packed=${packed:-0} parked=${parked:-0}
    # onesweep_pass specialization constants, in constant_id order (src/algorithms/onesweep.cpp):
    # workgroup, u32 keys, no values, 32-wide subgroups, keys, spin limit 64, no refusals, window,
    # no profiling, no full-tile copy, guessed tile, counters in exchange, rank chunk, packed
    # ranks, parked keys.
    stats=$("$here/shader_stats" onesweep_pass "$workgroup" 1 0 0 0 32 32 "$keys" 64 0 "$window" 0 0 1 \
      "$in_exchange" "$chunk" "$packed" "$parked" 2>&1)
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
      ONESWEEP_RANK_CHUNK=$chunk ONESWEEP_PACKED_RANKS=$packed ONESWEEP_PARKED_KEYS=$parked \
      "$here/onesweep_timing" u32 0 "$log2n" "$workgroup" "$keys" 2>&1 | tail -n 1)
    printf '%4s x %2s  w%-2s  cie %s  chunk %s packed %s parked %s | %4s | %2s | %s\n' "$workgroup" \
      "$keys" "$window" "$in_exchange" "$chunk" "$packed" "$parked" "${registers:--}" "$per_sm" "$timing"
  done
} 2>&1 | tee "$out/occupancy_sweep.txt"
