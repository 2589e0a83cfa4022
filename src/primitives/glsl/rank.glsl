// Ranking keys by digit within a subgroup, with ballots only (portable: no match instruction).
// Include after declaring the specialization constants MIN_SUBGROUP_SIZE and MAX_SUBGROUP_SIZE; needs
// GL_KHR_shader_subgroup_ballot. Every invocation of the subgroup must call these together.

// The lanes whose digit equals this lane's, among lanes with `valid` set (`all_valid`: uniformly
// known that every lane is valid): one ballot per digit bit
// (bits above a narrow digit are zero in every lane, so their ballots change nothing).
uvec4 subgroup_digit_peers(uint digit, bool valid, bool all_valid) {
  if (MAX_SUBGROUP_SIZE <= 32) {  // one mask word
    // In a full tile of a subgroup known to be 32 wide every lane is valid: no ballot needed.
    uint peers = all_valid && MIN_SUBGROUP_SIZE == 32 && MAX_SUBGROUP_SIZE == 32 ? ~0u : subgroupBallot(valid).x;
    [[unroll]] for (uint b = 0; b < DIGIT_BITS; ++b) {
      bool set = ((digit >> b) & 1u) != 0u;
      uint ones = subgroupBallot(set).x;
      peers &= set ? ones : ~ones;
    }
    return uvec4(peers, 0u, 0u, 0u);
  }
  uvec4 peers = subgroupBallot(valid);
  [[unroll]] for (uint b = 0; b < DIGIT_BITS; ++b) {
    bool set = ((digit >> b) & 1u) != 0u;
    uvec4 ones = subgroupBallot(set);
    peers &= set ? ones : ~ones;
  }
  return peers;
}

uint lane_mask_count(uvec4 mask) {
  if (MAX_SUBGROUP_SIZE <= 32) return bitCount(mask.x);
  uvec4 c = uvec4(bitCount(mask));
  return c.x + c.y + c.z + c.w;
}

// Lowest lane in a non-empty mask.
uint lane_mask_lowest(uvec4 mask) {
  if (MAX_SUBGROUP_SIZE <= 32) return uint(findLSB(mask.x));
  for (uint w = 0; w < 4; ++w)
    if (mask[w] != 0u) return w * 32u + uint(findLSB(mask[w]));
  return 0u;
}
