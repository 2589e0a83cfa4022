#!/bin/bash
# Copies what probe_call.sh and e2e_call.sh need (the CLI, the test binary, the probes built by
# dev/CMakeLists.txt, the scripts) from a build directory into .devrun/host_path/ at the
# repository root (git-ignored; DEVRUN names another folder; copy it to the GPU machine).
#   dev/host_path/stage.sh [BUILD_DIR]     (default: build; run `cmake --build BUILD_DIR` first)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dest=${DEVRUN:-$root/.devrun/host_path}
mkdir -p "$dest"
cp "$build/dev/host_probe" "$build/dev/write_probe" "$build/tools/gpusort/gpusort" \
  "$build/tests/gpusort_tests" "$build/tests/libgpusort_test_rename_fault.so" "$dest/"
# The Python module for the device image's Python 3.12, built by a second build directory
# (cmake -B build-py312 -DPython3_EXECUTABLE=<a python3.12> -DGPUSORT_BUILD_PYTHON=ON ...).
if [ -d "$root/build-py312/python/gpusort" ]; then
  mkdir -p "$dest/python" && cp -r "$root/build-py312/python/gpusort" "$dest/python/"
  cp "$root/bench/python_end_to_end.py" "$dest/"
fi
cp "$here"/*.sh "$here"/*.py "$root/bench/device_setup.sh" "$dest/"
strip "$dest/host_probe" "$dest/write_probe" "$dest/gpusort" "$dest/gpusort_tests"
du -sh "$dest"
