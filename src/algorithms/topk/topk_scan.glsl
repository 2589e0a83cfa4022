// The top-k kernels' workgroup scan (docs/design/topk.md, "Per segment"): the exclusive scan of one
// u32 per invocation in three barriers, where scan.glsl's Blelloch scan takes 2 log2(width) + 4.
// Every invocation must call it (barriers). Groups of SCAN_GROUP invocations are summed by one
// invocation each, then each invocation adds the groups before its own and its group's
// invocations before it. The workgroup width is a multiple of SCAN_GROUP, at most 32 of them.
const uint SCAN_GROUP = 32;
shared uint scan_values[gl_WorkGroupSize.x];
shared uint scan_groups[32];
uint workgroup_exclusive_scan(uint value, out uint total) {
  const uint t = gl_LocalInvocationID.x, groups = gl_WorkGroupSize.x / SCAN_GROUP;
  scan_values[t] = value;
  barrier();
  if (t < groups) {
    uint sum = 0;
    for (uint j = 0; j < SCAN_GROUP; ++j)  // rotated: the group sums read distinct banks
      sum += scan_values[t * SCAN_GROUP + ((j + t) & (SCAN_GROUP - 1))];
    scan_groups[t] = sum;
  }
  barrier();
  const uint g = t / SCAN_GROUP;
  uint prefix = 0, sum = 0;
  for (uint j = 0; j < groups; ++j) {
    const uint x = scan_groups[j];
    if (j < g) prefix += x;
    sum += x;
  }
  for (uint j = g * SCAN_GROUP; j < t; ++j) prefix += scan_values[j];
  total = sum;
  barrier();  // read before the next scan writes them
  return prefix;
}
