#!/bin/bash
# Builds the host-path development probe and copies what probe_call.sh needs (the CLI, the test
# binary, the probe, the scripts) into .devrun/host_path/ (git-ignored; copy it to the GPU machine).
#   bench/host_path_dev/stage.sh [BUILD_DIR]     (default: build; run `cmake --build` first)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dest=${DEVRUN:-$root/.devrun/host_path}
mkdir -p "$dest"
g++ -std=c++20 -O2 -I"$root/include" -I"$root/src" -I"$build" "$here/host_probe.cpp" \
  "$build/libgpusort.a" -lvulkan -lpthread -o "$dest/host_probe"
g++ -std=c++20 -O2 "$here/write_probe.cpp" -lpthread -o "$dest/write_probe"
cp "$build/tools/gpusort/gpusort" "$build/tests/gpusort_tests" \
  "$build/tests/libgpusort_test_rename_fault.so" "$dest/"
# The Python module for the device image's Python 3.12, built by a second build directory
# (cmake -B build-py312 -DPython3_EXECUTABLE=<a python3.12> -DGPUSORT_BUILD_PYTHON=ON ...).
if [ -d "$root/build-py312/python/gpusort" ]; then
  mkdir -p "$dest/python" && cp -r "$root/build-py312/python/gpusort" "$dest/python/"
  cp "$root/bench/python_end_to_end.py" "$dest/"
fi
cp "$here"/*.sh "$here"/*.py "$here/../device_setup.sh" "$dest/"
strip "$dest/host_probe" "$dest/write_probe" "$dest/gpusort" "$dest/gpusort_tests"
du -sh "$dest"
