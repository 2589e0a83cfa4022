// Which kernels a sort asks for, and the CUDA kernels' switches (environment.hpp).
#include "cuda/environment.hpp"

#include <unistd.h>  // environ

#include <cstdlib>
#include <cstring>
#include <optional>

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

namespace {

CudaEnvironment parse_cuda_environment() {
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
  e.topk_buckets = flag("GPUSORT_CUDA_TOPK_BUCKETS", true);
  e.overlap = flag("GPUSORT_CUDA_OVERLAP", true);
  e.refusal_period = number("GPUSORT_CUDA_REFUSAL_PERIOD", "tiles");
  e.carveout = number("GPUSORT_CUDA_CARVEOUT", "percent");
  if (e.carveout && *e.carveout > 100)
    throw Error("GPUSORT_CUDA_CARVEOUT='" + std::to_string(*e.carveout) +
                "' is not a percentage (0 to 100)");
  e.module = read("GPUSORT_CUDA_MODULE");
  if (!e.module.empty() && e.module != "ptx" && e.module != "cubin")
    throw Error("GPUSORT_CUDA_MODULE='" + e.module + "' is not ptx or cubin");
  return e;
}

// The environment's GPUSORT_CUDA_ entries, in its order: one scan of it.
std::string cuda_variables() {
  std::string all;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
    if (std::strncmp(*entry, "GPUSORT_CUDA_", 13) == 0) all.append(*entry).push_back('\n');
  return all;
}

}  // namespace

CudaEnvironment cuda_environment() {
  // Parsed again where those entries changed, the last parse kept per thread: a top-k call reads
  // them a dozen times, and a parse scans the whole environment once for each variable (getenv).
  thread_local std::string seen;
  thread_local std::optional<CudaEnvironment> parsed;
  std::string now = cuda_variables();
  if (!parsed || now != seen) {
    parsed = parse_cuda_environment();  // a bad value throws, and is parsed again next time
    seen = std::move(now);
  }
  return *parsed;
}

void check_kernel_environment() {
  kernel_path_from_environment();
  cuda_environment();
}

}  // namespace gpusort
