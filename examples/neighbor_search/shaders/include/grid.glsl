// The uniform grid of the neighbour search: cubic cells of cell_size (the search radius), a
// grid_size^3 block of them; a particle's cell hash is its cell's linear index, so particles
// sorted by hash are grouped by cell, and cells that are neighbours in x sit side by side.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0) in;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Positions { vec4 p[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Uints { uint v[]; };

ivec3 cell_of(vec3 position, float cell_size, uint grid_size) {
  return clamp(ivec3(floor(position / cell_size)), ivec3(0), ivec3(int(grid_size) - 1));
}

uint cell_hash(ivec3 cell, uint grid_size) {
  return uint(cell.x) + grid_size * (uint(cell.y) + grid_size * uint(cell.z));
}
