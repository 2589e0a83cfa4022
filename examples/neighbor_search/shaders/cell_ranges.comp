#version 460
// Step 3 (after gpusort sorted the (cell hash, particle index) pairs): where each cell's run of
// sorted particles starts and ends. A run's first slot writes its start, its last slot its end;
// cells without particles keep the start = end = 0 the host filled in.
#include "grid.glsl"

layout(push_constant) uniform Push {
  uint64_t sorted_hashes_address;
  uint64_t cell_start_address;
  uint64_t cell_end_address;
  uint particle_count;
};

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= particle_count) return;
  Uints hashes = Uints(sorted_hashes_address);
  uint cell = hashes.v[i];
  if (i == 0 || hashes.v[i - 1] != cell) Uints(cell_start_address).v[cell] = i;
  if (i + 1 == particle_count || hashes.v[i + 1] != cell) Uints(cell_end_address).v[cell] = i + 1;
}
