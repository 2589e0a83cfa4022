#!/usr/bin/env bash
# Installs what gpusort needs on Debian 12 and builds it into ./build (Release, Ninja).
#
#   bash tools/setup-debian.sh [cli|python|all]
#     cli (default)  the library and the `gpusort` command: what the README's first command runs
#     python         also the Python module (build/python)
#     all            everything the tests run: the test suite, the Python module, the distributed
#                    sort (MPI), the benchmarks, the development tools, the experiments, the
#                    WebGPU package's tests (ctest --test-dir build then runs them all)
#
# On NVIDIA GPUs the library embeds CUDA kernels where nvcc 12 or newer is found (below);
# GPUSORT_NVCC=/path/to/nvcc names the nvcc that compiles them (CI: .ci/run).
# Idempotent: installs only missing packages (apt-get update first), then an incremental build.
# Run as root, or as a user with sudo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=${1:-cli}
case $mode in
  cli | python | all) ;;
  *) echo "setup-debian.sh: unknown mode '$mode' (expected cli, python or all)" >&2; exit 2 ;;
esac

packages=(
  cmake ninja-build g++              # build tools
  glslc                              # GLSL -> SPIR-V, run at build time
  libvulkan-dev                      # Vulkan headers and loader
  mesa-vulkan-drivers                # lavapipe: a CPU Vulkan driver, so any machine can run gpusort
  libcli11-dev                       # the CLI's option parser
)
if [[ $mode != cli ]]; then
  packages+=(python3-dev pybind11-dev python3-numpy)  # the Python module (python/)
fi
if [[ $mode == all ]]; then
  packages+=(
    vulkan-validationlayers          # the Khronos validation layer the tests run under
    libgtest-dev                     # GoogleTest
    python3-pytest                   # the Python tests
    pkgconf                          # the cmake_package test checks gpusort.pc with pkg-config
    libopenmpi-dev openmpi-bin       # the distributed sort (gpusort::distributed, mpirun)
    python3-mpi4py                   # ... its Python face and tests
    chromium                         # web/: the headless page test, and SwiftShader's Vulkan ICD
                                     # (/usr/lib/chromium/vk_swiftshader_icd.json, from chromium-common)
                                     # that Dawn accepts in the Node tests (it refuses Debian 12's lavapipe)
  )
  # web/'s tests also need Node and npm: Debian's nodejs and npm, unless a node and an npm are
  # already installed (e.g. NodeSource's nodejs, which bundles npm).
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi

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

# The CUDA kernels are for nvcc 12 or newer (docs/API.md, "Which path runs where"). Where an NVIDIA
# driver is loaded (its kernel module reports a version) and no nvcc is found where the build
# looks (GPUSORT_NVCC, CUDACXX, PATH, /usr/local/cuda/bin), say what is lost; nothing is installed
# for it: Debian 12's own nvidia-cuda-toolkit (11.8) compiles the kernels (CI checks that, with
# .ci/debian-nvcc) but without the bulk L2 prefetch of an experiment switch (its PTX ISA lacks
# cp.async.bulk), and brings a libcuda1 of its own that can clash with the driver's.
has_nvcc() {
  [[ -n ${GPUSORT_NVCC:-} && -x ${GPUSORT_NVCC:-} ]] || [[ -n ${CUDACXX:-} && -x ${CUDACXX:-} ]] ||
    command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]
}
if [[ -r /proc/driver/nvidia/version ]] && ! has_nvcc; then
  echo "setup-debian.sh: an NVIDIA driver and no nvcc: building without the CUDA kernels, so" \
       "large sorts run the SPIR-V passes there (0.66-0.80x CUB at 2^24-2^28 keys instead of" \
       "0.91-1.10x); install NVIDIA's CUDA toolkit 12 or newer and run this again for them" >&2
fi

# What each mode builds: the options of everything else follow the mode, so that `cli` neither
# needs nor builds the tests, and `all` builds every target.
on_in() { [[ " $* " == *" $mode "* ]] && echo ON || echo OFF; }
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUSORT_BUILD_TESTS="$(on_in all)" -DGPUSORT_BUILD_EXAMPLES="$(on_in all)" \
  -DGPUSORT_BUILD_BENCH="$(on_in all)" -DGPUSORT_BUILD_DEV_TOOLS="$(on_in all)" \
  -DGPUSORT_BUILD_EXPERIMENTS="$(on_in all)" -DGPUSORT_BUILD_PYTHON="$(on_in python all)" \
  -DGPUSORT_BUILD_DISTRIBUTED="$(on_in all)" \
  ${GPUSORT_NVCC:+"-DGPUSORT_NVCC=$GPUSORT_NVCC" -DGPUSORT_CUDA_KERNELS=ON}
if [[ $mode == all ]]; then
  cmake --build build
else
  cmake --build build --target gpusort_cli $([[ $mode == python ]] && echo gpusort_python)
fi
