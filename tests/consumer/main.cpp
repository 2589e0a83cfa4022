// Sorts a few keys, and keys with values, through an installed gpusort; exits non-zero on a wrong
// result or a validation message (GPUSORT_VALIDATION=1 turns the layer on).
#include <cstdint>
#include <cstdio>
#include <gpusort/cuda.hpp>
#include <gpusort/gpusort.hpp>
#include <span>
#include <string>
#include <vector>

int main() {
  gpusort::Context ctx = gpusort::Context::create();
  std::vector<float> keys = {3.5f, -1.0f, 0.0f, 2.25f, -7.0f, 1.0f, 3.5f};
  gpusort::sort(ctx, std::span<float>(keys));
  const std::vector<float> sorted_keys = {-7.0f, -1.0f, 0.0f, 1.0f, 2.25f, 3.5f, 3.5f};

  std::vector<uint64_t> ids = {30, 10, 20, 10};
  std::vector<uint32_t> payload = {0, 1, 2, 3};
  gpusort::sort_by_key(ctx, std::span<uint64_t>(ids), std::span<uint32_t>(payload),
                       {.descending = true});
  const std::vector<uint64_t> sorted_ids = {30, 20, 10, 10};
  const std::vector<uint32_t> sorted_payload = {0, 2, 1, 3};  // stable: 10s in input order

  // The CUDA face builds and links with no CUDA toolkit: without a driver it says why in one line;
  // an empty sort and the scratch query need no device.
  const std::string cuda_why = gpusort::cuda::unavailable_why();
  gpusort::cuda::sort<uint32_t>(nullptr, 0, nullptr);
  const bool cuda_ok = cuda_why.find('\n') == std::string::npos &&
                       gpusort::cuda::scratch_bytes(gpusort::KeyType::u32, 0, 1000) == 0;
  std::printf("CUDA face: %s\n", cuda_why.empty() ? "available" : cuda_why.c_str());

  bool ok = keys == sorted_keys && ids == sorted_ids && payload == sorted_payload &&
            ctx.validation_messages() == 0 && cuda_ok;
  std::printf("gpusort_consumer on %s: %s\n", ctx.device_info().name.c_str(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
