// Work-efficient (Blelloch) exclusive scan of one value per invocation across a workgroup, in
// shared memory. Include after defining SCAN_T (uint or uint64_t) and declaring
// `shared SCAN_T scan_tree[SCAN_TREE_SIZE]` with SCAN_TREE_SIZE >= gl_WorkGroupSize.x, a power of two.
// Returns the exclusive prefix of `value`; *total receives the workgroup's sum. Contains barriers:
// every invocation must call it.
SCAN_T workgroup_exclusive_scan(SCAN_T value, out SCAN_T total) {
  const uint n = gl_WorkGroupSize.x;
  const uint i = gl_LocalInvocationID.x;
  scan_tree[i] = value;
  barrier();
  // Up-sweep: partial sums at the right end of each 2^d-block.
  for (uint stride = 1; stride < n; stride <<= 1) {
    uint right = (i + 1) * stride * 2 - 1;
    if (right < n) scan_tree[right] += scan_tree[right - stride];
    barrier();
  }
  total = scan_tree[n - 1];
  barrier();
  if (i == 0) scan_tree[n - 1] = SCAN_T(0);
  barrier();
  // Down-sweep: each node passes its prefix left and prefix + left sum right.
  for (uint stride = n >> 1; stride >= 1; stride >>= 1) {
    uint right = (i + 1) * stride * 2 - 1;
    if (right < n) {
      SCAN_T left = scan_tree[right - stride];
      scan_tree[right - stride] = scan_tree[right];
      scan_tree[right] += left;
    }
    barrier();
  }
  SCAN_T prefix = scan_tree[i];
  barrier();
  return prefix;
}
