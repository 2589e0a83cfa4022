// One push-constant block written once for the host and the kernel. A folder's push.h declares
// each of its kernels' blocks between GPUSORT_PUSH_BEGIN(Name) and GPUSORT_PUSH_END(Name), in
// the types both languages share: uint64_t (a device address or a 64-bit count; the kernel
// enables GL_EXT_shader_explicit_arithmetic_types_int64 before it includes the header) and uint
// (32 bits). Scalars of 4 and 8 bytes are aligned alike by C++ and by GLSL's push-constant
// layout, so both see the same offsets.
//   C++:  struct gpusort::Name, what Recorder::dispatch pushes.
//   GLSL: `layout(push_constant) uniform Push { ... };`, the members global names. A kernel
//         defines its block's selector (PUSH_<KERNEL>, named in push.h) before the include:
//         a shader stage has one push-constant block, so it sees its own alone.
#ifndef GPUSORT_PUSH_BLOCK_H
#define GPUSORT_PUSH_BLOCK_H

#ifdef __cplusplus

#include <cstdint>
#include <type_traits>

namespace gpusort::push_blocks {
using uint = uint32_t;
// Push constants are at most this many bytes (the Vulkan minimum for maxPushConstantsSize;
// Recorder asserts it again).
inline constexpr uint32_t max_bytes = 128;
}  // namespace gpusort::push_blocks

// The blocks live in push_blocks (where `uint` is uint32_t) and are named in gpusort.
#define GPUSORT_PUSH_BEGIN(Name) \
  namespace push_blocks {        \
  struct Name {
#define GPUSORT_PUSH_END(Name)                                                           \
  }                                                                                      \
  ;                                                                                      \
  static_assert(std::is_standard_layout_v<Name> && std::is_trivially_copyable_v<Name> && \
                sizeof(Name) <= max_bytes);                                              \
  }                                                                                      \
  using push_blocks::Name;

#else

#define GPUSORT_PUSH_BEGIN(Name) layout(push_constant) uniform Push {
#define GPUSORT_PUSH_END(Name) \
  }                            \
  ;

#endif

#endif  // GPUSORT_PUSH_BLOCK_H
