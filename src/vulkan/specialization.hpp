// Specialization constants given as a struct: uint32_t fields in constant_id order 0, 1, 2, ...
// (what Context::Impl::pipeline takes). A kernel family's header defines the ids for its GLSL
// and checks each field of its structs against them with GPUSORT_SPEC_AT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

// Field `field` of `Spec` is the constant with id `id`.
#define GPUSORT_SPEC_AT(Spec, field, id) \
  static_assert(offsetof(Spec, field) == 4 * (id), #Spec "::" #field " is not constant " #id)

namespace gpusort {

template <class Spec>
std::vector<uint32_t> spec_constants(const Spec& spec) {
  static_assert(std::is_trivially_copyable_v<Spec> && sizeof(Spec) % 4 == 0);
  std::vector<uint32_t> values(sizeof(Spec) / 4);
  std::memcpy(values.data(), &spec, sizeof(Spec));
  return values;
}

}  // namespace gpusort
