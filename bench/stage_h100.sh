#!/bin/bash
# Copies what bench/run_h100.sh needs into .devrun/bench/ of this repository (git-ignored; DEVRUN
# names another folder), to be copied to the GPU machine: the gpusort CLI and cub_baseline from a
# build directory, and the scripts (run_h100.sh: the whole comparison; run_segmented_h100.sh: the
# segmented rows).
#   bench/stage_h100.sh [BUILD_DIR]     (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
dest=${DEVRUN:-$here/../.devrun/bench}
mkdir -p "$dest"
cp "$build/tools/gpusort/gpusort" "$build/bench/cub_baseline" "$here/run_h100.sh" "$here/run_segmented_h100.sh" \
  "$here/device_setup.sh" \
  "$dest/"
strip "$dest/gpusort" "$dest/cub_baseline"
du -sh "$dest"
