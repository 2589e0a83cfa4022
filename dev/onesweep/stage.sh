#!/bin/bash
# Builds the Onesweep development tools (onesweep_timing, shader_stats, and cub_timing where nvcc
# is found) from a configured build directory into .devrun/onesweep_dev/ (git-ignored; copy it to
# the GPU machine) beside the scripts that drive them.
#   bench/onesweep_dev/stage.sh [BUILD_DIR]     (default: build; run `cmake --build` first)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dest=${DEVRUN:-$root/.devrun/onesweep_dev}
mkdir -p "$dest"
for tool in onesweep_timing shader_stats onesweep_clock; do
  g++ -std=c++20 -O2 -I"$root/include" -I"$root/src" -I"$build" "$here/$tool.cpp" \
    "$build/libgpusort.a" -lvulkan -o "$dest/$tool"
done
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$nvcc" ]; then
  "$nvcc" -O3 -gencode=arch=compute_90,code=sm_90 "$here/cub_timing.cu" -o "$dest/cub_timing"
fi
cp "$here/occupancy_sweep.sh" "$here/../device_setup.sh" "$dest/"
strip "$dest"/onesweep_timing "$dest"/shader_stats "$dest"/onesweep_clock
du -sh "$dest"
