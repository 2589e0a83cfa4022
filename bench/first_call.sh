#!/bin/bash
# What a program that sorts ONE array sees: a fresh process, an idle GPU (its clocks down), one
# sort from host memory to host memory. Three ways in, each run REPEATS times, every run in a new
# process after IDLE seconds of an idle GPU:
#   library  `gpusort demo --first-call` (gpusort::sort; Context creation, the call's stages)
#   cli      `gpusort sort IN OUT --timings` on a raw file (page-cached: written just before)
#   python   gpusort.sort(a) in a fresh interpreter (import, Context, the call)
# then, for reference, the same size with the GPU spun up before each call
# (`gpusort bench --end-to-end`, its median), and a table of all of it.
#
#   bench/first_call.sh [DIR]     DIR: a build directory (tools/gpusort/gpusort, python/gpusort)
#                                 or a folder holding gpusort (and python/gpusort); default: build
# Environment: N (keys, default 268435456 = 2^28), TYPE (u32, f32, u64, ..., default f32),
#   REPEATS (default 3), IDLE (seconds before each run, default 2), PYTHON (default python3; needs
#   NumPy), WARM (1: also the spun-up reference, default 1), RESULTS_DIR (folder for the logs, default a
#   temporary one). Needs disk for two raw files of N keys (the CLI's input and output).
set -uo pipefail

dir=${1:-build}
n=${N:-268435456}
type=${TYPE:-f32}
repeats=${REPEATS:-3}
idle=${IDLE:-2}
python=${PYTHON:-python3}

gpusort=
for candidate in "$dir/gpusort" "$dir/tools/gpusort/gpusort"; do
  if [ -x "$candidate" ] && [ -f "$candidate" ]; then gpusort=$candidate; break; fi
done
[ -n "$gpusort" ] || { echo "first_call.sh: no gpusort in $dir or $dir/tools/gpusort" >&2; exit 1; }
pythonpath=
for candidate in "$dir/python" "$dir"; do
  if compgen -G "$candidate/gpusort/_core*.so" > /dev/null; then pythonpath=$candidate; break; fi
done
case $type in
  u32|i32|f32) key_bytes=4 ;;
  u64|i64|f64) key_bytes=8 ;;
  *) echo "first_call.sh: TYPE must be one of u32 i32 f32 u64 i64 f64" >&2; exit 1 ;;
esac

work=${RESULTS_DIR:-}
cleanup=
if [ -z "$work" ]; then work=$(mktemp -d); cleanup=$work; fi
mkdir -p "$work"
trap '[ -n "$cleanup" ] && rm -rf "$cleanup"' EXIT
results=$work/first_call.tsv
: > "$results"

# The SM clock as nvidia-smi reads it just before a run ("-" without nvidia-smi).
sm_clock() {
  local mhz
  mhz=$(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits 2>/dev/null | head -n 1)
  echo "${mhz:--}"
}
# One row of the table: tool, run, clock before, then name=value fields.
record() { printf '%s\n' "$*" >> "$results"; }
field() { sed -n "s/.*\b$1=\([-0-9.]*\).*/\1/p" <<< "$2" | head -n 1; }

echo "first_call.sh: $gpusort, n = $n $type keys, $repeats runs each after $idle s idle; logs in $work"

# ---- library: gpusort demo --first-call ----
for run in $(seq 1 "$repeats"); do
  sleep "$idle"
  clock=$(sm_clock)
  log=$work/library_$run.log
  if "$gpusort" demo --first-call --n "$n" --type "$type" > "$log" 2>&1; then
    line=$(grep '^first_call ' "$log")
    record library "$run" "$clock" "device_ms=$(field device_ms "$line")" \
      "call_ms=$(field call_ms "$line")" "upload_ms=$(field upload_ms "$line")" \
      "sort_gpu_ms=$(field sort_gpu_ms "$line")" "download_ms=$(field download_ms "$line")" \
      "sm_after=$(field sm_mhz_after "$line")"
  else
    record library "$run" "$clock" "failed (see $log)"
  fi
done

# ---- cli: gpusort sort --timings on a raw file ----
input=$work/keys.bin
output=$work/sorted.bin
head -c $((n * key_bytes)) /dev/urandom > "$input"  # random bit patterns (floats: NaNs too)
for run in $(seq 1 "$repeats"); do
  rm -f "$output"
  sleep "$idle"
  clock=$(sm_clock)
  log=$work/cli_$run.log
  started=$(date +%s%N)
  if "$gpusort" sort "$input" "$output" --type "$type" --timings --quiet > "$log" 2>&1; then
    process_ms=$(( ($(date +%s%N) - started) / 1000000 ))
    stage() { sed -n "s/^ *$1 *\([0-9.]*\) ms.*/\1/p" "$log" | head -n 1; }
    record cli "$run" "$clock" "device_ms=$(stage device)" "call_ms=$(stage total)" \
      "upload_ms=$(stage upload)" "sort_gpu_ms=$(stage sort)" "download_ms=$(stage download)" \
      "process_ms=$process_ms"
  else
    record cli "$run" "$clock" "failed (see $log)"
  fi
done
rm -f "$input" "$output"

# ---- python: gpusort.sort once in a fresh interpreter ----
if [ -z "$pythonpath" ]; then
  echo "first_call.sh: no python/gpusort/_core*.so under $dir: Python runs skipped"
else
  for run in $(seq 1 "$repeats"); do
    sleep "$idle"
    clock=$(sm_clock)
    log=$work/python_$run.log
    if PYTHONPATH="$pythonpath${PYTHONPATH:+:$PYTHONPATH}" "$python" - "$n" "$type" > "$log" 2>&1 <<'EOF'
import sys, time
n, kind = int(sys.argv[1]), sys.argv[2]
import numpy as np
dtype = {"u32": np.uint32, "i32": np.int32, "f32": np.float32,
         "u64": np.uint64, "i64": np.int64, "f64": np.float64}[kind]
rng = np.random.default_rng(1)
if np.dtype(dtype).kind == "f":
    a = rng.uniform(-1e6, 1e6, n).astype(dtype)
else:
    a = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=dtype, endpoint=True)
t0 = time.perf_counter()
import gpusort
t1 = time.perf_counter()
ctx = gpusort.Context()
t2 = time.perf_counter()
b = gpusort.sort(a, context=ctx)
t3 = time.perf_counter()
if not (b[1:] >= b[:-1]).all():
    sys.exit("python: the result is not sorted")
print(f"python import_ms={1e3 * (t1 - t0):.3f} device_ms={1e3 * (t2 - t1):.3f} "
      f"call_ms={1e3 * (t3 - t2):.3f}")
EOF
    then
      line=$(grep '^python ' "$log")
      record python "$run" "$clock" "import_ms=$(field import_ms "$line")" \
        "device_ms=$(field device_ms "$line")" "call_ms=$(field call_ms "$line")"
    else
      record python "$run" "$clock" "failed (see $log)"
    fi
  done
fi

# ---- reference: the same call with the GPU spun up before it ----
if [ "${WARM:-1}" = 1 ] && [[ $type =~ ^(u32|u64|f32)$ ]] && (( (n & (n - 1)) == 0 )); then
  log2=0
  while (( (1 << log2) < n )); do log2=$((log2 + 1)); done
  log=$work/warm.log
  if "$gpusort" bench --end-to-end --keys "$type" --min-log2 "$log2" --max-log2 "$log2" \
    --warmups 1 --runs 3 > "$log" 2>&1; then
    row=$(awk -v k="$type" '$1 == k { print; exit }' "$log")
    read -r _ _ _ ms up sort down _ <<< "$row"
    record warm median - "call_ms=$ms" "upload_ms=$up" "sort_gpu_ms=$sort" "download_ms=$down"
  else
    record warm median - "failed (see $log)"
  fi
fi

# ---- the table ----
echo
printf '%-8s %-6s %9s %10s %10s %10s %10s %10s %10s  %s\n' tool run "MHz" "import ms" "device ms" \
  "call ms" "upload ms" "sort ms" "down ms" "other"
while read -r tool run clock rest; do
  get() { sed -n "s/.*\b$1=\([-0-9.]*\).*/\1/p" <<< "$rest"; }
  other=
  [ -n "$(get process_ms)" ] && other="process $(get process_ms) ms"
  [ -n "$(get sm_after)" ] && [ "$(get sm_after)" != -1 ] && other="SM after: $(get sm_after) MHz"
  [[ $rest == failed* ]] && other=$rest
  printf '%-8s %-6s %9s %10s %10s %10s %10s %10s %10s  %s\n' "$tool" "$run" "$clock" \
    "$(get import_ms)" "$(get device_ms)" "$(get call_ms)" "$(get upload_ms)" \
    "$(get sort_gpu_ms)" "$(get download_ms)" "$other"
done < "$results"
echo
echo "call ms: the sort call alone (library/python: wall time of gpusort::sort / gpusort.sort;"
echo "cli: its --timings total, the device's creation and file I/O included); device ms: Vulkan"
echo "instance and device; MHz: the SM clock (nvidia-smi) just before the run. warm: the median"
echo "of \`gpusort bench --end-to-end\`, the GPU spun up before each call."
