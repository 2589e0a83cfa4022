#version 460
// Residency probe shader for nvx_carveout (probe.cpp): the SPIR-V twin of residency.cu, with its
// shared memory sized by a specialization constant (words).
#extension GL_NV_shader_sm_builtins : require
#extension GL_EXT_shader_realtime_clock : require
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint kWords = 1;
layout(std430, binding = 0) buffer Out { uint64_t records[]; };
layout(push_constant) uniform Push { uint spin_ns; };
shared uint words[kWords];
void main() {
  for (uint i = gl_LocalInvocationID.x; i < kWords; i += 256) words[i] = i;
  barrier();
  if (gl_LocalInvocationID.x == 0) {
    uint64_t start = clockRealtimeEXT();
    uint64_t now = start;
    while (now - start < uint64_t(spin_ns)) now = clockRealtimeEXT();
    bool kept = words[kWords - 1] == kWords - 1;
    uint b = gl_WorkGroupID.x;
    records[3 * b] = uint64_t(gl_SMIDNV) + (kept ? 0ul : (1ul << 40));
    records[3 * b + 1] = start;
    records[3 * b + 2] = now;
  }
}
