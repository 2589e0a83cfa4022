#!/usr/bin/env bash
# Runs the nvx_onesweep experiment on an NVIDIA GPU (README.md): correctness modes first, then
# the timings, each step's output in OUTDIR as it goes, a one-line verdict per step in
# OUTDIR/summary.txt. Needs only the built binary (self-contained: kernels embedded, CUDA runtime
# static) and the NVIDIA driver's CUDA and Vulkan.
#
#   run.sh [OUTDIR]      (default: nvx_onesweep_out)
#   NVX_ONESWEEP=path    the binary (default: build-exp/experiments/nvx_onesweep/nvx_onesweep
#                        under the repository root, else ./nvx_onesweep)
#   FULL=1               also the slower checks (fallbacks, PTX, variants) and the extra timings;
#                        by default: self-test, the main correctness checks, the main timing table
#   QUICK_VARIANTS=1     instead: the variants made for the NVX path's 48 KiB of shared memory per
#                        SM, about 6 minutes: self-test (residency of each variant's pass shapes
#                        through both paths) and checks of those variants through nvx and cuda,
#                        then every variant timed (nvx and CUB; then nvx, cuda and CUB at 2^24
#                        and 2^26) for all four key types at 2^20, 2^24, 2^26, 2^28
#   NEXT_VARIANTS=1      instead: the variants of the next round (prefetched values, 16-bit
#                        fallback counts), at most 6 minutes in all: self-test and checks (also
#                        with refusing tiles) through nvx, then those and 384x20segrl, 512x15seg,
#                        1024x12seg1 timed through NVX beside CUB, all four key types, 2^18..2^28
#                        step 2; a step that would pass the 6 minutes is cut short or skipped
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-nvx_onesweep_out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

bin=${NVX_ONESWEEP:-}
if [[ -z $bin ]]; then
  for candidate in "$root/build-exp/experiments/nvx_onesweep/nvx_onesweep" "$root/build/experiments/nvx_onesweep/nvx_onesweep" \
                   "./nvx_onesweep"; do
    if [[ -x $candidate ]]; then bin=$candidate; break; fi
  done
fi
if [[ -z $bin || ! -x $bin ]]; then
  echo "run.sh: error: no nvx_onesweep binary (set NVX_ONESWEEP)" >&2
  exit 2
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [[ -z ${VK_DRIVER_FILES:-} && -f $icd ]]; then export VK_DRIVER_FILES=$icd; fi

summary=$out/summary.txt
: >"$summary"
failures=0
started=$SECONDS
# With a deadline (seconds after the start; NEXT_VARIANTS sets it), no step runs past it: each
# step's limit is cut to the time left, and a step with under 5 s left is skipped.
deadline=
# step NAME TIMEOUT_S ARGS...: runs the binary, output to NAME.log, verdict to the summary. The
# binary runs in the foreground; `timeout` ends it (SIGTERM, SIGKILL 5 s later) at the limit, so
# nothing is left running when run.sh ends.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  if [[ -n $deadline ]]; then
    local left=$((deadline - (SECONDS - started)))
    if ((left < 5)); then
      echo "== $name: SKIPPED (the ${deadline} s deadline is reached)" | tee -a "$summary"
      failures=$((failures + 1))
      return
    fi
    ((left < limit)) && limit=$left
  fi
  echo "== $name: nvx_onesweep $*" | tee -a "$summary"
  timeout -k 5 "$limit" "$bin" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local verdict
  verdict=$(grep -E "all outputs correct|SOME OUTPUTS WRONG|error:" "$out/$name.log" | tail -n 1)
  [[ $rc -eq 124 || $rc -eq 137 ]] && verdict="TIMED OUT after ${limit} s"
  echo "   exit $rc, $((SECONDS - t0)) s: ${verdict:-(no verdict)}" | tee -a "$summary"
  if [[ $rc -ne 0 ]]; then failures=$((failures + 1)); fi
}
# The NEXT_VARIANTS mode's whole budget: 6 minutes, less a margin for the last step's SIGKILL
# (RUN_DEADLINE_S=seconds sets another, e.g. to try the script).
[[ -n ${NEXT_VARIANTS:-} ]] && deadline=${RUN_DEADLINE_S:-350}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "binary: $bin"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null
} | tee -a "$summary"

# Device, variants, registers as loaded (cudaFuncGetAttributes), ptxas reports of the build.
step info "$([[ -n $deadline ]] && echo 20 || echo 60)" --info --variants all
mkdir -p "$out/kernels"
"$bin" --write-kernels "$out/kernels" >/dev/null 2>&1
if command -v cuobjdump >/dev/null; then
  for cubin in "$out"/kernels/*.cubin; do
    echo "== $cubin"
    cuobjdump --dump-resource-usage "$cubin"
  done >"$out/resource_usage.txt" 2>&1
else
  echo "no cuobjdump here: see kernels/*.ptxas.txt and info.log" >"$out/resource_usage.txt"
fi

if [[ -n ${NEXT_VARIANTS:-} ]]; then
  # The next round's variants (layout.hpp: values prefetched into L2 at the claim; 16-bit
  # fallback counts, which let u64 keys go out in two segments of 7).
  next=384x20segrlpf,512x15segpf,1024x12seg1pf,384x14s2pk,384x18s3pk,1024x13s1pk
  # Stage by stage, all four key types, with each variant's pass shapes and the residency of its
  # four pass shapes through NVX.
  step self_test_next 40 --self-test --impls nvx --variants "$next"
  # Every output compared whole: partial tiles, one key, two distributions, all four types.
  step check_next 40 --check --runs 2 --variants "$next" --impls nvx \
    --sizes 1,2,1000,7679,7680,7681,100003,1048593 --dists uniform,equal
  # The look-back's fallback (16-bit counts in two of them): every third tile never publishes;
  # fails unless fallbacks ran and every output is right.
  step check_next_refuse 25 --check --runs 1 --variants "$next" --impls nvx --refuse 3 \
    --spin-limit 4 --sizes 100003,1048576
  # The new variants and the best three of the last round, NVX beside CUB on the same inputs, one
  # row per variant, every output checked; 32- and 64-bit keys in two steps (the 64-bit inputs'
  # host reference alone took about 40 s at 2^26 and 2^28). Rows go to timing.csv as they come.
  spin=(--min-spinup-s 0.2 --max-spinup-s 1 --first-spinup-s 1)
  sizes=262144,1048576,4194304,16777216,67108864,268435456
  timed="$next,384x20segrl,512x15seg,1024x12seg1"
  step timing_next_32 110 --variants "$timed" --impls nvx,cub --types u32,u32+u32 \
    --sizes $sizes "${spin[@]}" --csv "$out/timing.csv"
  step timing_next_64 170 --variants "$timed" --impls nvx,cub --types u64,u64+u32 \
    --sizes $sizes "${spin[@]}" --csv "$out/timing.csv"
  echo "total $((SECONDS - started)) s, $failures step(s) failed" | tee -a "$summary"
  [[ $failures -eq 0 ]]
  exit
fi

if [[ -n ${QUICK_VARIANTS:-} ]]; then
  # The variants made to fit the NVX path's 48 KiB of shared memory per SM (layout.hpp);
  # 384x20direct (scattered from registers: 3-4x slower) is left out.
  new=384x20seg,384x20segrl,512x15seg,256x16seg3,1024x12seg1
  # Stage by stage for each, both paths, all four key types; each variant's pass shapes
  # (segments, shared bytes) and how many of its blocks are resident per SM through each path
  # (the first variant in the list also probes plain shared memory sizes).
  step self_test_variants 100 --self-test --variants "384x20,$new"
  # Every output compared whole: partial tiles, one key, two distributions, all four types (the
  # timings below check every output at 2^20..2^28 too).
  step check_variants 80 --check --runs 2 --variants "$new" --impls nvx,cuda \
    --sizes 1,2,1000,7679,7680,7681,100003,1048593 --dists uniform,equal
  # The look-back's fallback under the new exchanges: every third tile never publishes.
  step check_variants_refuse 45 --check --runs 1 --variants "$new" --impls nvx,cuda --refuse 3 \
    --spin-limit 4 --sizes 100003,1048576
  # The default and the new variants on the same inputs, one row per variant, NVX beside CUB at
  # every size (32- and 64-bit keys in two steps, so that a time-out loses one half only).
  spin=(--min-spinup-s 0.2 --max-spinup-s 1.5 --first-spinup-s 1)
  sizes=1048576,16777216,67108864,268435456
  step timing_variants_32 120 --variants "384x20,$new" --impls nvx,cub --types u32,u32+u32 \
    --sizes $sizes "${spin[@]}" --csv "$out/timing.csv"
  step timing_variants_64 160 --variants "384x20,$new" --impls nvx,cub --types u64,u64+u32 \
    --sizes $sizes "${spin[@]}" --csv "$out/timing.csv"
  # The same kernels through the CUDA runtime (their speed without the NVX path's limits).
  step timing_variants_cuda 90 --variants "384x20,$new" --impls cuda,cub \
    --sizes 16777216,67108864 "${spin[@]}" --csv "$out/timing.csv"
  # The older variants (one block per SM through NVX; 256x16 two for 32-bit keys), for completeness.
  step timing_variants_old 60 --variants 384x20w1,384x20ev,256x16,512x15 --impls nvx,cub \
    --sizes 16777216,67108864 "${spin[@]}" --csv "$out/timing.csv"
  echo "total $((SECONDS - started)) s, $failures step(s) failed" | tee -a "$summary"
  [[ $failures -eq 0 ]]
  exit
fi

# Stage by stage first (parameters echoed, a copy, histogram, each pass; blocks per SM): names
# the first stage that breaks, for the Vulkan (NVX) and the CUDA runtime launches.
step self_test 120 --self-test --types u32,u32+u32,u64

# Correctness: every output compared whole with the host reference (keys; values = the stable
# permutation), odd sizes (partial last tiles, one key), four distributions, all four key types.
small=1,2,1000,7679,7680,7681,100003,1048593
step check_small 120 --check --runs 2 --sizes $small --dists uniform,equal
step check_large 120 --check --runs 3 --sizes 16777216,16777259
# The CUDA runtime path once read stale uploads (keys-only, 1000..7681 keys; README.md): the PTX too.
step check_ptx_small 60 --check --ptx --impls cuda --types u32,u32+u32 --sizes 1000,7681 --dists uniform,equal
if [[ -n ${FULL:-} ]]; then
# The decoupled fallback: tiles that never publish (successors must recount them), a table of
# two slots (slots reused while still needed), tiles by block id, all counted in the fallbacks
# column (nvx/cuda), which refusals require to be non-zero.
step check_fallback_refuse 120 --check --impls nvx,cuda --refuse 3 --spin-limit 4 --sizes 7681,100003,1048576 \
  --dists uniform,skew99
step check_fallback_slots 120 --check --impls nvx,cuda --slots 2 --sizes 1048576,4194304
step check_claim_by_id 120 --check --impls nvx,cuda --claim-by-id --refuse 5 --spin-limit 8 --sizes 1048576
step check_ptx 120 --check --ptx --impls nvx,cuda --sizes 1000,1048576,16777259
step check_all_barriers 60 --check --all-barriers --impls nvx --sizes 1048576,16777259
for variant in 384x20w1 384x20ev 256x16 512x15 384x20seg 384x20segrl 384x20direct 512x15seg \
               256x16seg3 1024x12seg1; do
  step "check_variant_$variant" 60 --check --variant "$variant" --impls nvx --sizes 7681,1048593,16777259
done
fi

# Timings: nvx, cuda (same kernels through the CUDA runtime) and CUB, 2^18..2^28, uniform keys.
step timing 240 --csv "$out/timing.csv" --max-log2 26
if [[ -n ${FULL:-} ]]; then
  step timing_dists 120 --dists equal,skew99,sorted --sizes 16777216 --csv "$out/timing.csv"
  step timing_ptx 90 --ptx --impls nvx,cuda --types u32,u32+u32 --sizes 16777216,268435456 --csv "$out/timing.csv"
  step timing_claim_by_id 90 --claim-by-id --impls nvx,cuda --types u32,u32+u32 --sizes 16777216,268435456 \
    --csv "$out/timing.csv"
  for variant in 384x20w1 384x20ev 256x16 512x15 384x20seg 384x20segrl 384x20direct 512x15seg \
                 256x16seg3 1024x12seg1; do
    step "timing_variant_$variant" 90 --variant "$variant" --impls nvx --types u32,u32+u32,u64 \
      --sizes 16777216,67108864 --csv "$out/timing.csv"
  done
fi

echo "total $((SECONDS - started)) s, $failures step(s) failed" | tee -a "$summary"
[[ $failures -eq 0 ]]
