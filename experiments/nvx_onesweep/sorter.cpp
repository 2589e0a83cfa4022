#include "sorter.hpp"

#include <algorithm>
#include <bit>

namespace nvx_onesweep {

const char* key_type_name(KeyType t) {
  switch (t) {
    case KeyType::u32:
      return "u32";
    case KeyType::u32_u32:
      return "u32+u32";
    case KeyType::u64:
      return "u64";
    case KeyType::u64_u32:
      return "u64+u32";
  }
  return "?";
}

const char* histogram_kernel(KeyType type) {
  return key_bytes(type) == 4 ? "onesweep_histogram_u32" : "onesweep_histogram_u64";
}

const char* pass_kernel(KeyType type) {
  switch (type) {
    case KeyType::u32:
      return "onesweep_pass_u32";
    case KeyType::u32_u32:
      return "onesweep_pass_u32_u32";
    case KeyType::u64:
      return "onesweep_pass_u64";
    case KeyType::u64_u32:
      return "onesweep_pass_u64_u32";
  }
  return nullptr;
}

SortPlan make_plan(KeyType type, uint32_t n, const KernelSettings& settings, uint32_t sm_count) {
  if (n == 0) throw Error("n must be at least 1");
  // 32-bit indices in the kernels, with room for the histogram's grid stride past n.
  if (n > (uint32_t(1) << 31)) throw Error("n must be at most 2^31");
  if (settings.variant >= kVariantCount)
    throw Error("no variant " + std::to_string(settings.variant));
  const Variant& v = kVariants[settings.variant];
  SortPlan p;
  p.n = n;
  p.pass_threads = v.threads;
  p.tile = v.threads * items_for(v, type);
  p.tiles = uint32_t((uint64_t(n) + p.tile - 1) / p.tile);
  p.passes = pass_count(type);
  if (settings.lookback_slots != 0) {
    if (!std::has_single_bit(settings.lookback_slots))
      throw Error("--slots must be a power of two (got " + std::to_string(settings.lookback_slots) +
                  ")");
    p.slots = settings.lookback_slots;
  } else {
    p.slots = std::min(kMaxLookbackSlots, std::bit_ceil(p.tiles));
  }
  // Tags are 31 bits (bits 63..33 of an entry); 0 never names a tile.
  if (uint64_t(1) + uint64_t(p.passes) * p.tiles >= (uint64_t(1) << 31))
    throw Error("too many tiles for 31-bit tags");
  const uint32_t histogram_tile =
      kHistogramThreads * (key_bytes(type) == 4 ? kHistogramItems32 : kHistogramItems64);
  const uint32_t histogram_tiles = uint32_t((uint64_t(n) + histogram_tile - 1) / histogram_tile);
  p.histogram_grid = std::max(
      1u, std::min(histogram_tiles, std::max(1u, sm_count) * settings.histogram_blocks_per_sm));
  p.state_bytes = kLookbackByteOffset + uint64_t(p.slots) * kRadix * 8;
  return p;
}

std::vector<KernelLaunch> sort_launches(KeyType type, const SortPlan& plan,
                                        const KernelSettings& settings, const DeviceBuffers& b) {
  std::vector<KernelLaunch> launches;
  launches.push_back({histogram_kernel(type),
                      plan.histogram_grid,
                      kHistogramThreads,
                      {b.keys_a, plan.n, b.state}});
  const bool values = has_values(type);
  for (uint32_t pass = 0; pass < plan.passes; ++pass) {
    const bool from_a = pass % 2 == 0;
    launches.push_back(
        {pass_kernel(type),
         plan.tiles,
         plan.pass_threads,
         {from_a ? b.keys_a : b.keys_b, from_a ? b.keys_b : b.keys_a,
          values ? (from_a ? b.values_a : b.values_b) : 0,
          values ? (from_a ? b.values_b : b.values_a) : 0, b.state, b.state + kLookbackByteOffset,
          plan.n, pass, plan.first_tag(pass), plan.slots - 1, settings.refusal_period,
          settings.spin_limit, settings.claim_by_id ? 1u : 0u}});
  }
  return launches;
}

}  // namespace nvx_onesweep
