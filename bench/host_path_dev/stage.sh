#!/bin/bash
# Builds the host-path development probe and copies what probe_call.sh needs (the CLI, the test
# binary, the probe, the scripts) into .devrun/host_path/ (git-ignored, carried to the device).
#   bench/host_path_dev/stage.sh [BUILD_DIR]     (default: build; run `cmake --build` first)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dest=${DEVRUN:-$root/.devrun/host_path}
mkdir -p "$dest"
g++ -std=c++20 -O2 -I"$root/include" -I"$root/src" -I"$build" "$here/host_probe.cpp" \
  "$build/libgpusort.a" -lvulkan -lpthread -o "$dest/host_probe"
cp "$build/tools/gpusort/gpusort" "$build/tests/gpusort_tests" "$dest/"
cp "$here"/*.sh "$here"/*.py "$here/../device_setup.sh" "$dest/"
strip "$dest/host_probe" "$dest/gpusort" "$dest/gpusort_tests"
du -sh "$dest"
