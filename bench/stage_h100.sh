#!/bin/bash
# Copies what bench/run_h100.sh needs into /work/main/.devrun/bench/ (git-ignored, carried to the
# device machine): the gpusort CLI and cub_baseline from a build directory, and the scripts
# (run_h100.sh: the whole comparison; run_segmented_h100.sh: issue #13's segmented rows).
#   bench/stage_h100.sh [BUILD_DIR]     (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
dest=${DEVRUN:-/work/main/.devrun/bench}
mkdir -p "$dest"
cp "$build/tools/gpusort/gpusort" "$build/bench/cub_baseline" "$here/run_h100.sh" "$here/run_segmented_h100.sh" \
  "$here/device_setup.sh" \
  "$dest/"
strip "$dest/gpusort" "$dest/cub_baseline"
du -sh "$dest"
