// Appending segments to the fast path's class lists (segment_classify for the caller's segments,
// segment_bucket for the pieces of the bucketed medium path): one atomic per class present in a
// subgroup, not one per segment (a million segments of one class would otherwise queue on one
// counter). Include after segment_classes.glsl; the kernel enables GL_KHR_shader_subgroup_ballot,
// _shuffle and _vote.

const uint NO_CLASS = 0xffffffffu;

// The list slot of this invocation's segment in class c (NO_CLASS: none), from the class
// counters at `counters`. Every invocation of the subgroup calls it together.
uint list_slot(uint64_t counters, uint c) {
  uint slot = 0;
  bool pending = c != NO_CLASS;
  while (subgroupAny(pending)) {
    const uint leader = subgroupBallotFindLSB(subgroupBallot(pending));
    const uint leader_class = subgroupShuffle(c, leader);
    const bool mine = pending && c == leader_class;
    const uvec4 same = subgroupBallot(mine);
    uint base = 0;
    if (gl_SubgroupInvocationID == leader)
      base = atomicAdd(U32Array(counters).v[leader_class], subgroupBallotBitCount(same));
    base = subgroupShuffle(base, leader);
    if (mine) {
      slot = base + subgroupBallotExclusiveBitCount(same);
      pending = false;
    }
  }
  return slot;
}
