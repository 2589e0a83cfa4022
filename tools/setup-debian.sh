#!/usr/bin/env bash
# Installs what gpusort needs on Debian 12 and builds it into ./build (Release, Ninja).
# Idempotent: installs only missing packages (apt-get update first), then an incremental build.
# Run as root, or as a user with sudo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(
  cmake ninja-build g++              # build tools
  glslc                              # GLSL -> SPIR-V, run at build time
  libvulkan-dev                      # Vulkan headers and loader
  mesa-vulkan-drivers                # lavapipe: a CPU Vulkan driver, so any machine can run gpusort
  vulkan-validationlayers            # the Khronos validation layer the tests run under
  libgtest-dev                       # GoogleTest
  libcli11-dev                       # the CLI's option parser
  python3-dev pybind11-dev           # the Python module (python/)
  python3-numpy python3-pytest       # ... and its tests, against NumPy
  pkgconf                            # the cmake_package test checks gpusort.pc with pkg-config
  libopenmpi-dev openmpi-bin         # the distributed sort (gpusort::distributed, mpirun)
  python3-mpi4py                     # ... its Python face and tests
  chromium                           # web/: the headless page test, and SwiftShader's Vulkan ICD
                                     # (/usr/lib/chromium/vk_swiftshader_icd.json, from chromium-common)
                                     # that Dawn accepts in the Node tests (it refuses Debian 12's lavapipe)
)
# web/'s tests also need Node and npm: Debian's nodejs and npm, unless a node and an npm are
# already installed (e.g. NodeSource's nodejs, which bundles npm).
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup-debian.sh: run as root to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "setup-debian.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
