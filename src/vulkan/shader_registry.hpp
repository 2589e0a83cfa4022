// SPIR-V of every shader, compiled by glslc at build time (see cmake/EmbedShaders.cmake).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace gpusort {

// Throws gpusort::Error when no shader has that name.
std::span<const uint32_t> embedded_shader(std::string_view name);

}  // namespace gpusort
