// Kernels by name, for development tools that take one from the command line; the library
// names its kernels by gpusort::Kernel (the generated kernels.hpp, cmake/EmbedShaders.cmake).
#pragma once

#include <optional>
#include <string_view>

#include "kernels.hpp"

namespace gpusort {

// The kernel whose kernels.cmake entry is `name`, if one is embedded.
inline std::optional<Kernel> find_kernel(std::string_view name) {
  for (uint32_t k = 0; k < kernel_count; ++k)
    if (kernel_name(Kernel(k)) == name) return Kernel(k);
  return std::nullopt;
}

}  // namespace gpusort
