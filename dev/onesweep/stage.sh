#!/bin/bash
# Copies the Onesweep development tools (onesweep_timing, shader_stats; onesweep_clock when the
# build was configured with -DGPUSORT_ONESWEEP_VARIANTS=ON; cub_timing when nvcc was found) from a
# build directory into .devrun/onesweep/ at the repository root (git-ignored; DEVRUN names another
# folder; copy it to the GPU machine) beside the scripts that drive them.
#   dev/onesweep/stage.sh [BUILD_DIR]     (default: build; run `cmake --build BUILD_DIR` first)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dest=${DEVRUN:-$root/.devrun/onesweep}
mkdir -p "$dest"
for tool in onesweep_timing shader_stats; do
  cp "$build/dev/$tool" "$dest/"
  strip "$dest/$tool"
done
for tool in onesweep_clock cub_timing; do
  if [ -x "$build/dev/$tool" ]; then cp "$build/dev/$tool" "$dest/"; fi
done
if [ -f "$dest/onesweep_clock" ]; then strip "$dest/onesweep_clock"; fi
cp "$here/occupancy_sweep.sh" "$root/bench/device_setup.sh" "$dest/"
du -sh "$dest"
