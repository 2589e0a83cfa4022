// Sorts a few keys, and keys with values, through an installed gpusort; exits non-zero on a wrong
// result or a validation message (GPUSORT_VALIDATION=1 turns the layer on).
#include <cstdint>
#include <cstdio>
#include <gpusort/gpusort.hpp>
#include <span>
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

  bool ok = keys == sorted_keys && ids == sorted_ids && payload == sorted_payload &&
            ctx.validation_messages() == 0;
  std::printf("gpusort_consumer on %s: %s\n", ctx.device_info().name.c_str(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
