#!/usr/bin/env bash
# The distributed sort's measurements on one machine with two GPUs (docs/distributed.md):
#   src/distributed/bench_two_gpus.sh [BUILD_DIR] [OPENMPI_DIR]
# BUILD_DIR: the build tree (default build); OPENMPI_DIR: an Open MPI made by openmpi-prefix.sh,
# for machines where Open MPI is not installed (its env.sh is sourced). Prints every run; QUICK=1
# runs only the 2^33-key comparison. Host memory: about 200 GiB for the 2^34-key rows.
set -euo pipefail
build=${1:-build}
if [[ -n ${2:-} ]]; then
  # shellcheck disable=SC1091
  . "$2/env.sh"
  mpirun=(mpirun.openmpi)
else
  mpirun=(mpirun)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
fi
bench=$build/src/distributed/gpusort_distributed_bench
run() { echo "+ $*"; "$@"; echo; }

nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv || true
nproc; free -g | head -2
# 2^33 u32 keys (32 GiB; 2^32 per GPU, in core on each): two GPUs, one GPU out of core, the CPU.
run "${mpirun[@]}" -np 2 "$bench" --n 8G --type u32 --repeat 3
run "${mpirun[@]}" -np 2 "$bench" --n 8G --type u32 --repeat 3 --merge cpu --only distributed
run "${mpirun[@]}" -np 2 "$bench" --n 8G --type u32 --repeat 3 --partition-first --only distributed
[[ ${QUICK:-0} == 1 ]] && exit 0
# Weak scaling: 2^32 u32 keys per GPU, on one GPU then two.
run "${mpirun[@]}" -np 1 "$bench" --n 4G --per-rank --type u32 --repeat 3 --only distributed
run "${mpirun[@]}" -np 2 "$bench" --n 4G --per-rank --type u32 --repeat 3 --only distributed
run "${mpirun[@]}" -np 2 "$bench" --n 4G --per-rank --type u32 --repeat 3 --partition-first --only distributed
# 2^34 u32 keys (64 GiB) and 2^33 u64 keys (64 GiB): out of core on each GPU too.
run "${mpirun[@]}" -np 2 "$bench" --n 16G --type u32 --repeat 2
run "${mpirun[@]}" -np 2 "$bench" --n 16G --type u32 --repeat 2 --partition-first --only distributed
run "${mpirun[@]}" -np 2 "$bench" --n 8G --type u64 --repeat 2
# With values, and natural bucket sizes.
run "${mpirun[@]}" -np 2 "$bench" --n 4G --type u64 --values 4 --repeat 2 --only distributed,single
run "${mpirun[@]}" -np 2 "$bench" --n 8G --type u32 --natural --repeat 2 --only distributed
