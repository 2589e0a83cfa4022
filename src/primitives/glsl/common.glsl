// Shared by every gpusort kernel: buffers are reached through device addresses carried in push
// constants, so no kernel has descriptor sets.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_KHR_shader_subgroup_basic : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32Array { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer U32x2Array { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64Array { uint64_t v[]; };

// Large grids are dispatched as x * y groups (see Recorder::dispatch).
uint linear_workgroup_id() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }

// n comes from the host (count_address == 0) or from a u32 in a GPU buffer, clamped to max_n.
uint element_count(uint64_t count_address, uint host_n) {
  return count_address != 0 ? min(U32Array(count_address).v[0], host_n) : host_n;
}
// The same for kernels that take up to 2^32 elements (Onesweep's: max_onesweep_elements).
uint64_t element_count64(uint64_t count_address, uint64_t host_n) {
  return count_address != 0 ? min(uint64_t(U32Array(count_address).v[0]), host_n) : host_n;
}

// Without the overflow of (a + b - 1) / b for a near 2^32.
uint div_ceil(uint a, uint b) { return a / b + (a % b != 0 ? 1u : 0u); }
uint div_ceil64(uint64_t a, uint b) { return uint(a / b + (a % b != 0 ? 1u : 0u)); }

// Indices of 2^31 and more (arrays of more than 2^31 elements: Onesweep's, up to 2^32). SPIR-V
// takes an access chain's index as signed, so such an element is addressed in unsigned 64-bit
// arithmetic instead (element_at). That costs: on the H100 it made Onesweep's u32 passes 7 %
// slower and u64 keys' took 121 registers instead of 107 (docs/design/onesweep.md), so
// a kernel that takes such arrays defines WIDE_INDICES_ID before including this file, a
// specialization constant the host sets only for n > 2^31.
#ifdef WIDE_INDICES_ID
layout(constant_id = WIDE_INDICES_ID) const uint WIDE_INDICES = 0;
#else
const uint WIDE_INDICES = 0;
#endif
uint64_t element_at(uint64_t base, uint i, uint words) { return base + uint64_t(i) * (4u * words); }
// Word `word` of element i of `words`-word (1 or 2) elements.
uint load_element_word(uint64_t base, uint i, uint words, uint word) {
  if (WIDE_INDICES != 0) return U32Array(element_at(base, i, words)).v[word];
  if (words == 1) return U32Array(base).v[i];
  return word == 0 ? U32x2Array(base).v[i].x : U32x2Array(base).v[i].y;
}

// Element `from` of one array to element `to` of another, elements of `words` (1 or 2) u32s.
void copy_element(uint64_t from_address, uint from, uint64_t to_address, uint to, uint words) {
  if (words == 1) U32Array(to_address).v[to] = U32Array(from_address).v[from];
  else U32x2Array(to_address).v[to] = U32x2Array(from_address).v[from];
}

// Writes the VkDispatchIndirectCommand at `address` for `groups` workgroups, split over x and y
// above max_groups_x (maxComputeWorkGroupCount[0]) like Recorder::dispatch.
void write_dispatch(uint64_t address, uint groups, uint max_groups_x) {
  uint x = min(groups, max_groups_x);
  U32Array(address).v[0] = x;
  U32Array(address).v[1] = x == 0 ? 0u : div_ceil(groups, x);
  U32Array(address).v[2] = 1;
}

// The workgroups of a grid-stride loop over a grid of group_count groups, each covering
// items_per_round elements per round, that find an element below count: the first
// min(div_ceil(count, items_per_round), group_count). Dispatching only those (indirectly, from a
// count read on the GPU) changes nothing for the loop, which keeps striding by group_count.
uint groups_with_elements(uint count, uint items_per_round, uint group_count) {
  return min(div_ceil(count, items_per_round), group_count);
}
// The same for a count of up to 2^32 (Onesweep's), taken as at most 2^32 - 1.
uint groups_with_elements(uint64_t count, uint items_per_round, uint group_count) {
  return groups_with_elements(uint(min(count, 0xffffffffuL)), items_per_round, group_count);
}
