// Which kernels a sort asks for, and the CUDA kernels' switches (environment.hpp).
#include "cuda/environment.hpp"

#include <cstdlib>

namespace gpusort {

const char* to_string(KernelPath path) {
  switch (path) {
    case KernelPath::automatic:
      return "auto";
    case KernelPath::spirv:
      return "spirv";
    case KernelPath::cuda:
      return "cuda";
  }
  return "unknown";
}

KernelPath parse_kernel_path(const std::string& text) {
  if (text == "auto" || text == "automatic") return KernelPath::automatic;
  if (text == "spirv") return KernelPath::spirv;
  if (text == "cuda") return KernelPath::cuda;
  throw Error("unknown kernel path '" + text + "' (expected one of auto, spirv, cuda)");
}

KernelPath kernel_path_from_environment() {
  const char* env = std::getenv("GPUSORT_KERNELS");
  if (!env || !*env) return KernelPath::automatic;
  const std::string value = env;
  if (value == "auto" || value == "automatic") return KernelPath::automatic;
  if (value == "spirv") return KernelPath::spirv;
  if (value == "cuda") return KernelPath::cuda;
  throw Error("GPUSORT_KERNELS='" + value + "' is not one of spirv, cuda, auto");
}

KernelPath requested_kernel_path(KernelPath option) {
  return option != KernelPath::automatic ? option : kernel_path_from_environment();
}

CudaEnvironment cuda_environment() {
  auto read = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  CudaEnvironment e;
  if (const std::string v = read("GPUSORT_CUDA_HISTOGRAM"); !v.empty()) {
    if (v != "0" && v != "1" && v != "2")
      throw Error("GPUSORT_CUDA_HISTOGRAM='" + v + "' is not 0, 1 or 2");
    e.histogram = uint32_t(v[0] - '0');
  }
  // A count of 0 to 999999999 `what`.
  auto number = [&](const char* name, const char* what) -> std::optional<uint32_t> {
    const std::string v = read(name);
    if (v.empty()) return std::nullopt;
    if (v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
      throw Error(std::string(name) + "='" + v + "' is not a number of " + what +
                  " (0 to 999999999)");
    return uint32_t(std::stoul(v));
  };
  e.prefetch_tiles = number("GPUSORT_CUDA_PREFETCH", "tiles");
  e.face_tile = read("GPUSORT_CUDA_FACE_TILE");
  e.rank_sort_max_n = number("GPUSORT_CUDA_RANK_SORT_MAX_N", "keys");
  // A switch, 0 or 1; unset or empty: `otherwise`.
  auto flag = [&](const char* name, bool otherwise) {
    const std::string v = read(name);
    if (v.empty()) return otherwise;
    if (v != "0" && v != "1") throw Error(std::string(name) + "='" + v + "' is not 0 or 1");
    return v == "1";
  };
  e.rank_sort_copy = flag("GPUSORT_CUDA_RANK_SORT_COPY", false);
  e.topk_bound = flag("GPUSORT_CUDA_TOPK_BOUND", true);
  e.carveout = number("GPUSORT_CUDA_CARVEOUT", "percent");
  if (e.carveout && *e.carveout > 100)
    throw Error("GPUSORT_CUDA_CARVEOUT='" + std::to_string(*e.carveout) +
                "' is not a percentage (0 to 100)");
  e.module = read("GPUSORT_CUDA_MODULE");
  if (!e.module.empty() && e.module != "ptx" && e.module != "cubin")
    throw Error("GPUSORT_CUDA_MODULE='" + e.module + "' is not ptx or cubin");
  return e;
}

void check_kernel_environment() {
  kernel_path_from_environment();
  cuda_environment();
}

}  // namespace gpusort
