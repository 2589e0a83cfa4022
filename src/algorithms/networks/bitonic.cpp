// Bitonic sort in the flip/disperse form, in place on the caller's buffers (no scratch):
//   bitonic_local          each workgroup sorts its tile (TILE keys, a power of two that fits
//                          shared memory) completely: every block size up to TILE
//   for each block size B = 2 TILE, 4 TILE, ... up to n rounded up to a power of two:
//     bitonic_global       flip over blocks of B, then disperse with distances B/4 ... TILE,
//                          one dispatch per step, one invocation per pair
//     bitonic_local_disperse every remaining distance (TILE/2 ... 1) in shared memory at once
// Indices >= n hold virtual +inf keys: every comparator moves the smaller key to the lower
// index, so the padding never moves and is never read or written. Keys are mapped to radix
// order by bitonic_local and back by the last pass. Not stable: equal keys may be reordered.
#include "algorithms/networks/constants.h"
#include "algorithms/networks/networks.hpp"
#include "algorithms/networks/push.h"
#include "primitives/tile_shapes.hpp"

namespace gpusort {

namespace {

constexpr uint32_t max_tile = 8192;  // beyond it a workgroup's share of a step gets long
constexpr uint32_t global_workgroup = 256;

class Bitonic final : public SortAlgorithm {
 public:
  Bitonic(Context::Impl& ctx, const SortSpec& spec) : ctx_(ctx), spec_(spec) {
    uint64_t fit = max_tile_slots(ctx, spec);
    if (fit < 2) throw Error("bitonic: shared memory too small for a tile of two keys");
    tile_limit_ = uint32_t(std::min<uint64_t>(max_tile, std::bit_floor(fit)));
  }

  uint64_t scratch_bytes(uint64_t) const override { return 0; }
  bool stable() const override { return false; }

  void record(Recorder& rec, const SortTargets& t) const override {
    if (t.n <= 1) return;  // max_n <= 1: nothing to order, even with an indirect count
    const uint64_t padded = ceil_pow2(t.n);
    const uint32_t tile = uint32_t(std::min<uint64_t>(tile_limit_, padded));
    const uint32_t tile_count = uint32_t((t.n + tile - 1) / tile);
    const auto local_spec =
        spec_constants(tile_specialization(spec_, clamp_workgroup(ctx_, tile / 2), tile));
    // bitonic_global has no tile.
    const auto global_spec = spec_constants(tile_specialization(spec_, global_workgroup, tile).key);
    const uint32_t n = uint32_t(t.n);
    const bool single_tile = padded <= tile;
    rec.dispatch(Kernel::bitonic_local, local_spec, tile_count,
                 BitonicLocalPush{t.keys, t.values, t.count_address, n, tile_count, single_tile});
    rec.compute_barrier();
    const uint64_t pairs = padded / 2;
    const uint64_t global_groups = (pairs + global_workgroup - 1) / global_workgroup;
    for (uint64_t block = 2 * uint64_t(tile); block <= padded; block *= 2) {
      for (uint64_t half = block / 2; half >= tile; half /= 2) {
        rec.dispatch(Kernel::bitonic_global, global_spec, global_groups,
                     BitonicGlobalPush{t.keys, t.values, t.count_address, n, uint32_t(pairs),
                                       uint32_t(std::countr_zero(half)), half == block / 2});
        rec.compute_barrier();
      }
      rec.dispatch(
          Kernel::bitonic_local_disperse, local_spec, tile_count,
          BitonicLocalPush{t.keys, t.values, t.count_address, n, tile_count, block == padded});
      rec.compute_barrier();
    }
  }

 private:
  Context::Impl& ctx_;
  SortSpec spec_;
  uint32_t tile_limit_;
};

}  // namespace

std::unique_ptr<SortAlgorithm> make_bitonic(Context::Impl& ctx, const SortSpec& spec) {
  return std::make_unique<Bitonic>(ctx, spec);
}

}  // namespace gpusort
