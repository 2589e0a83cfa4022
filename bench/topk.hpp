// `gpusort bench --topk`: top-k on device buffers (the radix select of src/algorithms/topk/,
// whole arrays and rows), GPU timestamps around each run, every result checked; the shapes of
// torch.topk's anchor. bench/topk_torch.py times torch.topk on the same inputs (the same
// generator, topk_key below) and can run this command beside it.
#pragma once

#include <cstdint>
#include <gpusort/gpusort.hpp>
#include <string>

namespace gpusort::bench {

struct TopKBenchOptions {
  bool quick = false;    // small shapes (CI on lavapipe)
  bool largest = true;   // torch.topk's default
  std::string shapes;    // "" (all) or comma-separated: whole, i32, rows
  uint32_t warmups = 3, runs = 11;
  uint32_t seed = 1;
  std::string json;      // where the rows go as JSON ("": nowhere)
};

// Key bits of element i (the generator topk_torch.py repeats): murmur3's 32-bit finalizer of
// i * 0x9E3779B1 + seed (mod 2^32). f32 keys are (x >> 8) / 2^24, uniform in [0, 1); i32 keys
// are x as a signed integer.
inline uint32_t topk_key(uint64_t i, uint32_t seed) {
  uint32_t x = uint32_t(i) * 0x9E3779B1u + seed;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return x;
}

void run_topk_bench(Context& ctx, const TopKBenchOptions& options);

}  // namespace gpusort::bench
