#include "primitives/tile_shapes.hpp"

namespace gpusort {

uint32_t max_comparison_workgroup(const Context::Impl& ctx) {
  constexpr uint32_t max_workgroup = 1024;
  uint32_t limit = std::min<uint32_t>(max_workgroup, std::bit_floor(ctx.info.max_workgroup_size));
  if (ctx.info.subgroup_size_control && ctx.info.max_workgroup_subgroups)
    limit = std::min<uint32_t>(
        limit, std::bit_floor(uint32_t(std::min<uint64_t>(
                   uint64_t(ctx.info.max_workgroup_subgroups) * ctx.info.subgroup_size, limit))));
  return limit;
}

}  // namespace gpusort
