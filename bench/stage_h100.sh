#!/bin/bash
# Copies what bench/run_h100.sh needs into .devrun/bench/ at the repository root (git-ignored,
# taken to the GPU machine; DEVRUN names another folder): the gpusort CLI and cub_baseline from a
# build directory, the Python module when it was built, and the scripts (run_h100.sh: the whole
# comparison; run_segmented_h100.sh: the segmented rows; first_call.sh: one-off sorts,
# run there as `bash .devrun/bench/first_call.sh .devrun/bench`).
#   bench/stage_h100.sh [BUILD_DIR]     (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
dest=${DEVRUN:-$here/../.devrun/bench}
mkdir -p "$dest"
cp "$build/tools/gpusort/gpusort" "$build/bench/cub_baseline" "$here/run_h100.sh" "$here/run_segmented_h100.sh" \
  "$here/device_setup.sh" "$here/first_call.sh" \
  "$dest/"
if compgen -G "$build/python/gpusort/_core*.so" > /dev/null; then
  mkdir -p "$dest/python/gpusort"
  cp "$build"/python/gpusort/*.py "$build"/python/gpusort/_core*.so "$dest/python/gpusort/"
fi
strip "$dest/gpusort" "$dest/cub_baseline"
du -sh "$dest"
