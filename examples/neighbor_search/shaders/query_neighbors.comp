#version 460
// Step 4: for each particle, visit the 27 cells around its own and count the other particles
// within the radius (and sum their indices, a checksum of exactly which ones were found).
// Invocation k takes the k-th particle in sorted order, so a workgroup reads nearby cells.
#include "grid.glsl"

layout(push_constant) uniform Push {
  uint64_t positions_address;
  uint64_t sorted_ids_address;
  uint64_t cell_start_address;
  uint64_t cell_end_address;
  uint64_t neighbor_counts_address;
  uint64_t neighbor_checksums_address;
  float cell_size;  // = the search radius
  uint grid_size;
  uint particle_count;
};

void main() {
  uint k = gl_GlobalInvocationID.x;
  if (k >= particle_count) return;
  Positions positions = Positions(positions_address);
  Uints ids = Uints(sorted_ids_address);
  uint self = ids.v[k];
  vec3 p = positions.p[self].xyz;
  ivec3 home = cell_of(p, cell_size, grid_size);
  float radius_squared = cell_size * cell_size;
  uint count = 0, checksum = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        ivec3 cell = home + ivec3(dx, dy, dz);
        if (any(lessThan(cell, ivec3(0))) || any(greaterThanEqual(cell, ivec3(grid_size)))) continue;
        uint hash = cell_hash(cell, grid_size);
        uint end = Uints(cell_end_address).v[hash];
        for (uint j = Uints(cell_start_address).v[hash]; j < end; ++j) {
          uint other = ids.v[j];
          vec3 d = positions.p[other].xyz - p;
          if (other != self && d.x * d.x + d.y * d.y + d.z * d.z <= radius_squared) {
            ++count;
            checksum += other;
          }
        }
      }
  Uints(neighbor_counts_address).v[self] = count;
  Uints(neighbor_checksums_address).v[self] = checksum;
}
