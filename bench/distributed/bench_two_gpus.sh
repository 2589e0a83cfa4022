#!/usr/bin/env bash
# The distributed sort's measurements on one machine with two GPUs (docs/distributed.md):
#   RESULTS_DIR=DIR bench/distributed/bench_two_gpus.sh [BENCH]
# BENCH: the gpusort_distributed_bench binary (default build/bench/distributed/...); MPIRUN: the
# mpirun to start the ranks with (default mpirun). Every row's output goes to DIR/NN_name.txt as it runs (and to stdout), and
# DIR/results.tar.gz is remade after each row. The whole run stays within BUDGET_S seconds
# (default 530): each row is cut at its own limit or the time left, rows that would not get 20 s
# are skipped. Host memory: about 230 GiB for the 2^34-key row (2 x 112 GiB during the distributed
# sort, then 128 GiB for the single-GPU baseline). Ranks are started with --bind-to none (Open MPI
# binds each of 2 ranks to one core otherwise); SINGLE_COPY (default cma) picks the shared-memory
# single-copy mechanism (none where ptrace between the ranks is not allowed).
# SET=scaling (default): the scaling rows (about 8 minutes with BUDGET_S=480); SET=scaling4: the
# same on one, two and four GPUs of a machine with four; SET=registered: weak scaling with the
# inputs and outputs registered with the GPUs, beside the staged transfers; SET=baselines: 2^34 u32 keys on two GPUs
# beside the CPU and single-GPU sorts, then the host exchange; SET=host: the rows of the host-staged
# design's measurements (docs/distributed.md, "Measured").
set -uo pipefail
bench=${1:-build/bench/distributed/gpusort_distributed_bench}
results=${RESULTS_DIR:?set RESULTS_DIR to the directory for the results}
budget=${BUDGET_S:-530}
mkdir -p "$results"
results=$(cd "$results" && pwd)
read -r -a mpirun <<<"${MPIRUN:-mpirun}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_MCA_btl_vader_single_copy_mechanism=${SINGLE_COPY:-cma}
export PMIX_MCA_pcompress_base_silence_warning=1
start=$(date +%s)
row=0
pack() { (cd "$results" && tar czf results.tar.gz --exclude results.tar.gz ./*.txt); }
# run NAME LIMIT_S COMMAND...: one row, cut at LIMIT_S or the budget left.
run() {
  local name=$1 limit=$2
  shift 2
  row=$((row + 1))
  local left=$((budget - ($(date +%s) - start) - 10))
  local file
  file=$results/$(printf %02d $row)_$name.txt
  ((limit > left)) && limit=$left
  if ((limit < 20)); then
    echo "skipped: $* (${left} s left)" | tee "$file"
    return
  fi
  echo "+ $* (limit ${limit} s, t=$(($(date +%s) - start)) s)" | tee "$file"
  timeout -k 5 "$limit" "$@" 2>&1 | grep --line-buffered -v "pmix\|dlopen\|Perhaps a missing" | tee -a "$file"
  echo "exit ${PIPESTATUS[0]}, t=$(($(date +%s) - start)) s" | tee -a "$file"
  pack
}

{
  nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv
  nproc
  free -g | head -2
  cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
  date -u
} 2>&1 | tee "$results/00_machine.txt"
np2=("${mpirun[@]}" --bind-to none -np 2 "$bench")
np1=("${mpirun[@]}" --bind-to none -np 1 "$bench")
if [[ ${SET:-scaling} == scaling ]]; then
  # The scaling run: weak scaling (2^32 u32, then 2^31 u64 keys per GPU, one GPU then two: the
  # device-resident path on two), strong scaling of 2^34 u32 keys (two GPUs, with the baselines
  # of the same array: the CPU radix sort on all cores and one GPU out of core; then one GPU through
  # the distributed sort), and the host exchange on two GPUs for comparison. Each row's output
  # names the path taken and every rank's stages (upload, sort, cuts = split, exchange, final
  # sort, download).
  run weak_u32_np1 60 "${np1[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run weak_u32_np2 75 "${np2[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run strong_u32_2e34_np2 190 "${np2[@]}" --n 16G --type u32 --repeat 3 --baseline-repeat 1
  run weak_u64_np1 55 "${np1[@]}" --n 2G --per-rank --type u64 --repeat 3 --only distributed
  run weak_u64_np2 70 "${np2[@]}" --n 2G --per-rank --type u64 --repeat 3 --only distributed
  run strong_u32_2e34_np1 80 "${np1[@]}" --n 16G --type u32 --repeat 1 --only distributed
  run weak_u32_np2_host 70 "${np2[@]}" --n 4G --per-rank --type u32 --repeat 2 --exchange host \
    --only distributed
elif [[ ${SET:-scaling} == registered ]]; then
  # Weak scaling with the inputs and outputs registered with the GPUs (--register: transfers by
  # DMA straight from and to them, no staging copy), one GPU then two, u32 then u64; then the same
  # u32 rows through staging for comparison (one rank: the device-resident path too).
  run weak_u32_np1_registered 60 "${np1[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed --register
  run weak_u32_np2_registered 75 "${np2[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed --register
  run weak_u64_np1_registered 60 "${np1[@]}" --n 2G --per-rank --type u64 --repeat 3 --only distributed --register
  run weak_u64_np2_registered 75 "${np2[@]}" --n 2G --per-rank --type u64 --repeat 3 --only distributed --register
  run weak_u32_np1 60 "${np1[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run weak_u32_np2 75 "${np2[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run weak_u32_np1_host 60 "${np1[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed --exchange host
elif [[ ${SET:-scaling} == baselines ]]; then
  # 2^34 u32 keys on two GPUs beside the CPU radix sort on all cores and one GPU out of core of the
  # same array, then the host exchange on two GPUs for comparison (about 5 minutes).
  run strong_u32_2e34_np2 240 "${np2[@]}" --n 16G --type u32 --repeat 3 --baseline-repeat 1
  run weak_u32_np2_host 70 "${np2[@]}" --n 4G --per-rank --type u32 --repeat 2 --exchange host \
    --only distributed
elif [[ ${SET:-scaling} == scaling4 ]]; then
  # The scaling run on a machine with four GPUs (about 7 minutes): weak scaling with 2^32 u32 and
  # 2^31 u64 keys per GPU on one, two and four GPUs (four GPUs with 2^32 u32 each is also the strong
  # scaling row of 2^34 u32 keys), strong scaling of 2^34 u32 keys on two GPUs and one GPU.
  np4=("${mpirun[@]}" --bind-to none -np 4 "$bench")
  run weak_u32_np1 50 "${np1[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run weak_u32_np2 60 "${np2[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run weak_u32_np4_strong_2e34 75 "${np4[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run weak_u64_np1 50 "${np1[@]}" --n 2G --per-rank --type u64 --repeat 3 --only distributed
  run weak_u64_np2 60 "${np2[@]}" --n 2G --per-rank --type u64 --repeat 3 --only distributed
  run weak_u64_np4 75 "${np4[@]}" --n 2G --per-rank --type u64 --repeat 3 --only distributed
  run strong_u32_2e34_np2 75 "${np2[@]}" --n 16G --type u32 --repeat 3 --only distributed
  run strong_u32_2e34_np1 90 "${np1[@]}" --n 16G --type u32 --repeat 1 --only distributed
else
  # 2^34 u32 keys (64 GiB; 2^33 per GPU: two runs of 2^32 on each): two GPUs (the merge on the GPU
  # in two ranges of the key order), then the CPU (LSD radix sort on every core) and one GPU out of
  # core on the same array.
  run u32_2e34 240 "${np2[@]}" --n 16G --type u32 --repeat 2 --baseline-repeat 1
  # Weak scaling: 2^32 u32 keys per GPU, one GPU then two (2^33 in all: the merge on the GPU, in core).
  run weak_np1 50 "${np1[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  run weak_np2 60 "${np2[@]}" --n 4G --per-rank --type u32 --repeat 3 --only distributed
  # 2^34 u32 keys with the merge on the CPU instead.
  run u32_2e34_merge_cpu 70 "${np2[@]}" --n 16G --type u32 --repeat 1 --merge cpu --only distributed
  # The same 2^33 u32 keys with the merge on the CPU.
  run u32_2e33_merge_cpu 50 "${np2[@]}" --n 8G --type u32 --repeat 2 --merge cpu --only distributed
  # 2^33 u64 keys (64 GiB).
  run u64_2e33 70 "${np2[@]}" --n 8G --type u64 --repeat 2 --only distributed
  # The launcher's default binding (each rank on one core), for comparison.
  run u32_2e33_bound 60 "${mpirun[@]}" -np 2 "$bench" --n 8G --type u32 --repeat 1 --only distributed
fi
pack
echo "done in $(($(date +%s) - start)) s; $results/results.tar.gz"
