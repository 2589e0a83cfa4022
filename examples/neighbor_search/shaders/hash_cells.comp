#version 460
// Step 1: each particle's cell hash (the sort key) and its index (the value carried along).
#include "grid.glsl"

layout(push_constant) uniform Push {
  uint64_t positions_address;
  uint64_t cell_hashes_address;
  uint64_t particle_ids_address;
  float cell_size;
  uint grid_size;
  uint particle_count;
};

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= particle_count) return;
  vec3 position = Positions(positions_address).p[i].xyz;
  Uints(cell_hashes_address).v[i] = cell_hash(cell_of(position, cell_size, grid_size), grid_size);
  Uints(particle_ids_address).v[i] = i;
}
